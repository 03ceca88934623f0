// Lets the conformance suite's bundle load on Node 20: it imports `globSync` from `fs` (Node 22)
// at load, for its `tier-check` command only. Every `fs` import of the bundle resolves to Node's
// own `fs` plus a `globSync` that says which Node it needs; the client scenarios never call it.
import { register } from 'node:module';
const hooks = `
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL && context.parentURL.includes('/@modelcontextprotocol/conformance/')) {
    return { url: 'data:text/javascript,' + encodeURIComponent(
      "import fs from 'node:fs'; export * from 'node:fs'; export default fs;" +
      "export const globSync = fs.globSync ?? (() => { throw new Error('tier-check needs Node 22 (fs.globSync)'); });"
    ), shortCircuit: true };
  }
  return next(specifier, context);
}`;
register('data:text/javascript,' + encodeURIComponent(hooks));
