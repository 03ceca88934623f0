// The editor's side of ACP, through the official TypeScript SDK's client: an editor that offers
// fs/read_text_file and fs/write_text_file holds an unsaved buffer the agent reads and edits, and
// takes the agent's writes; a secret file still asks first, and denied, the editor is never asked;
// an MCP server the editor passes is started and its tool used, and a server's form is asked in
// the editor (elicitation/create); with `acp.terminal` chosen, a command runs in the editor's
// terminal (terminal/create, wait_for_exit, output, release), embedded in its tool call so its
// output shows live there; a file only the editor holds (never saved) is read and edited too.
// Run by tests/it/acp_client.rs against the mock model, whose replies it scripts in this order.
//
//   node editor_side.mjs SDK_DIR HARNESS9_BIN WORKDIR MCP_SERVERS_JSON
//
// MCP_SERVERS_JSON: the MCP servers the editor passes in session/new (`editor-tools` offers
// `echo`, `editor-forms` an `elicit` that asks a form and returns the answer).
//
// Prints one "ok STEP" line per step that held, and exits non-zero on the first that did not.

import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { check, kinds, loadSdk, start } from "./connect.mjs";

const [sdkDir, bin, workdir, mcpServers] = process.argv.slice(2);
const acp = await loadSdk(sdkDir);
const { methods } = acp;

// The editor's buffers: buffer.txt is open with changes not saved to disk.
// only-in-editor.txt is a new file the editor holds that was never saved.
const buffers = new Map([
  [join(workdir, "buffer.txt"), "unsaved buffer\n"],
  [join(workdir, "only-in-editor.txt"), "never saved\n"],
]);
const reads = [];
const writes = [];
const forms = [];
// The editor's terminals: each a real `bash` this script runs, its output kept.
const terminals = new Map();
const released = [];
const updates = [];
const asked = [];
const askedCalls = [];
const editor = start(
  acp,
  bin,
  workdir,
  updates,
  (params) => {
    asked.push(params.toolCall.title);
    askedCalls.push(params.toolCall);
    const secret = params.toolCall.title.includes(".env");
    return { outcome: { outcome: "selected", optionId: secret ? "deny" : "allow_once" } };
  },
  (app) =>
    app
      .onRequest(methods.client.fs.readTextFile, ({ params }) => {
        reads.push(params.path);
        const held = buffers.get(params.path);
        return { content: held ?? readFileSync(params.path, "utf8") };
      })
      .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
        writes.push(params);
        buffers.set(params.path, params.content);
        return {};
      })
      .onRequest(methods.client.terminal.create, ({ params }) => {
        const id = `term-${terminals.size + 1}`;
        const child = spawn(params.command, params.args, { cwd: params.cwd });
        const terminal = { params, output: "", child };
        terminal.exited = new Promise((resolve) =>
          child.on("exit", (code, signal) => resolve({ exitCode: code, signal })),
        );
        child.stdout.on("data", (data) => (terminal.output += data));
        child.stderr.on("data", (data) => (terminal.output += data));
        terminals.set(id, terminal);
        return { terminalId: id };
      })
      .onRequest(methods.client.terminal.waitForExit, ({ params }) => {
        // What the editor shows while the command runs: its terminal, live, inside the call.
        const terminal = terminals.get(params.terminalId);
        terminal.embeddedWhileRunning = updates.some(
          (u) =>
            u.sessionUpdate === "tool_call_update" &&
            u.content?.some((c) => c.type === "terminal" && c.terminalId === params.terminalId),
        );
        return terminal.exited;
      })
      .onRequest(methods.client.terminal.output, async ({ params }) => {
        const terminal = terminals.get(params.terminalId);
        return { output: terminal.output, truncated: false };
      })
      .onRequest(methods.client.terminal.kill, ({ params }) => {
        terminals.get(params.terminalId).child.kill();
        return {};
      })
      .onRequest(methods.client.terminal.release, ({ params }) => {
        released.push(params.terminalId);
        return {};
      })
      .onRequest(methods.client.elicitation.create, ({ params }) => {
        forms.push(params);
        return { action: "accept", content: { name: "Grace", age: 85 } };
      }),
);

await editor.app.connectWith(editor.stream, async (agent) => {
  await agent.request(methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {
      fs: { readTextFile: true, writeTextFile: true },
      elicitation: { form: {} },
      terminal: true,
    },
    clientInfo: { name: "harness9-test-editor", version: "1" },
  });
  const { sessionId } = await agent.request(methods.agent.session.new, {
    cwd: workdir,
    mcpServers: JSON.parse(mcpServers),
  });
  const prompt = async (words) => {
    updates.length = 0;
    const done = await agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: words }],
    });
    check(done.stopReason === "end_turn", `turn "${words}"`, done);
    return kinds(updates, "tool_call_update").at(-1);
  };

  // 1: read_file reads the editor's unsaved buffer, not the file on disk.
  let result = await prompt("read buffer.txt");
  const buffer = join(workdir, "buffer.txt");
  check(reads.includes(buffer), "the editor was asked for the buffer", reads);
  check(result.content[0].content.text.includes("unsaved buffer"), "the buffer read", result);
  console.log("ok read through the editor");

  // 2: edit_file edits the buffer and the editor takes the edited text.
  result = await prompt("edit buffer.txt");
  check(result.status === "completed", "edit completed", result);
  check(writes.at(-1)?.path === buffer, "the edit went to the editor", writes);
  check(writes.at(-1).content === "edited buffer\n", "the buffer edited", writes);
  check(readFileSync(buffer, "utf8") === "on disk\n", "the disk left to the editor", {});
  // The approval's diff and the call's are the whole buffer's change, not the disk's.
  const editAsked = askedCalls.find((call) => call.title === "Edit buffer.txt");
  const bufferDiff = (diff) =>
    diff?.type === "diff" && diff.path === buffer && diff.oldText === "unsaved buffer\n" &&
    diff.newText === "edited buffer\n";
  check(bufferDiff(editAsked?.content?.[0]), "the approval's diff is the buffer's", askedCalls);
  const editCall = kinds(updates, "tool_call").find((u) => u.title === "Edit buffer.txt");
  check(bufferDiff(editCall?.content?.[0]), "the call's diff is the buffer's", updates);
  console.log("ok edit through the editor");

  // 3: write_file writes through the editor.
  result = await prompt("write new.txt");
  check(result.status === "completed", "write completed", result);
  check(buffers.get(join(workdir, "new.txt")) === "from the agent\n", "the write shown", writes);
  check(!existsSync(join(workdir, "new.txt")), "written by the editor, not by harness9", {});
  console.log("ok write through the editor");

  // 4: a secret file asks as it does without an editor; denied, the editor is never asked.
  const before = reads.length;
  result = await prompt("read .env");
  check(asked.some((title) => title.includes(".env")), "the secret asked", asked);
  check(result.status === "failed", "secret file refused", result);
  check(reads.length === before, "the editor was not asked for the secret", reads);
  console.log("ok secret judged before the editor");

  // 5: the editor's own MCP server is started and its tool answers.
  result = await prompt("ask the editor's server");
  check(result.status === "completed", "MCP call completed", result);
  check(result.content[0].content.text.includes("echo: from the editor"), "MCP answer", result);
  console.log("ok editor's MCP server used");

  // 6: a server's form is asked in the editor, and the answer goes back to the server.
  result = await prompt("fill the server's form");
  check(forms.length === 1 && forms[0].mode === "form", "one form asked", forms);
  check(forms[0].sessionId === sessionId, "the form is the session's", forms);
  check(forms[0].message.includes("Who are you?"), "the server's question", forms);
  check(forms[0].requestedSchema.properties.name.type === "string", "the form's fields", forms);
  const answered = result.content[0].content.text;
  check(answered.includes('"action":"accept"') && answered.includes("Grace"), "answer", result);
  console.log("ok elicitation through the editor");

  // 7: the user chose the editor's terminal: the command runs there, after its approval.
  const approvals = asked.length;
  result = await prompt("run it in the terminal");
  check(asked.length === approvals + 1, "the command asked first", asked);
  check(terminals.size === 1, "one terminal", [...terminals.keys()]);
  const [[id, terminal]] = [...terminals];
  check(terminal.params.command === "bash", "bash in the terminal", terminal.params);
  const line = "touch made-there && echo from-the-terminal";
  check(terminal.params.args.at(-1) === line, "the command", terminal.params);
  check(existsSync(join(workdir, "made-there")), "run in the editor's terminal", {});
  check(terminal.params.cwd === workdir, "in the session's folder", terminal.params);
  check(released.includes(id), "the terminal released", released);
  check(result.status === "completed", "command completed", result);
  // Its output is shown live: the terminal is embedded in the call before the wait, and the
  // end keeps it (no text replaces it).
  check(terminal.embeddedWhileRunning, "the terminal embedded while it ran", updates);
  const embed = kinds(updates, "tool_call_update").find((u) => u.content?.[0]?.type === "terminal");
  check(embed.toolCallId === result.toolCallId, "embedded in the command's own call", updates);
  check(kinds(updates, "tool_call").some((u) => u.toolCallId === embed.toolCallId), "call first", updates);
  check(updates.indexOf(kinds(updates, "tool_call")[0]) < updates.indexOf(embed), "in order", updates);
  check(result.content == null, "the end keeps the terminal as the call's content", result);
  console.log("ok command in the editor's terminal, shown live in its call");

  // 8: a file only the editor holds (not on disk) is read and edited through it.
  const onlyHere = join(workdir, "only-in-editor.txt");
  result = await prompt("read only-in-editor.txt");
  check(result.status === "completed", "editor-only read completed", result);
  check(result.content[0].content.text.includes("never saved"), "the editor's text", result);
  result = await prompt("edit only-in-editor.txt");
  check(result.status === "completed", "editor-only edit completed", result);
  check(buffers.get(onlyHere) === "now saved\n", "the edit went to the editor", writes);
  check(!existsSync(onlyHere), "still only in the editor", {});
  console.log("ok a file only the editor holds");
});
editor.child.stdin.end();
check((await editor.exited) === 0, "harness9 acp exits when the editor goes", {});
console.log("ok all");
