// What the Node scripts that drive `harness9 acp` share: the official ACP TypeScript SDK loaded
// from SDK_DIR, harness9 started with the SDK's client connected to it, and small checks.

import { spawn } from "node:child_process";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

export async function loadSdk(sdkDir) {
  return import(
    pathToFileURL(join(sdkDir, "node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js")).href
  );
}

export function check(condition, what, detail) {
  if (!condition) {
    console.error(`FAILED ${what}: ${JSON.stringify(detail, null, 1)}`);
    process.exit(1);
  }
}

/// Starts `bin acp` in `workdir` and connects the SDK's client to it: updates go into `updates`,
/// `permission` answers approvals, and `extend(app)` adds the script's own handlers.
export function start(acp, bin, workdir, updates, permission, extend = (app) => app) {
  const { client, methods, ndJsonStream } = acp;
  const child = spawn(bin, ["acp"], { cwd: workdir, stdio: ["pipe", "pipe", "inherit"] });
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const app = extend(
    client({ name: "harness9-test-editor" })
      .onNotification(methods.client.session.update, ({ params }) => {
        updates.push(params.update);
      })
      .onRequest(methods.client.session.requestPermission, ({ params }) => permission(params)),
  );
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, app, stream, exited };
}

export const kinds = (updates, kind) => updates.filter((u) => u.sessionUpdate === kind);
export const text = (updates, kind) =>
  kinds(updates, kind).map((u) => u.content.text).join("");
