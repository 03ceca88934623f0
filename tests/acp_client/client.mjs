// An editor we did not write: the official ACP TypeScript SDK's client, driving `harness9 acp`.
// Run by tests/it/acp_client.rs against the mock model, whose replies it scripts in this order.
//
//   node client.mjs SDK_DIR HARNESS9_BIN WORKDIR
//
// Prints one "ok STEP" line per step that held, and exits non-zero on the first that did not.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { check, kinds, loadSdk, start as startIn, text } from "./connect.mjs";

const [sdkDir, bin, workdir] = process.argv.slice(2);
const acp = await loadSdk(sdkDir);
const { methods } = acp;
const start = (updates, permission) => startIn(acp, bin, workdir, updates, permission);

let updates = [];
let asked = [];
let answer = "allow_once";
const first = start(updates, (params) => {
  asked.push(params);
  return { outcome: { outcome: "selected", optionId: answer } };
});

let sessionId;
await first.app.connectWith(first.stream, async (agent) => {
  const init = await agent.request(methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
    clientInfo: { name: "harness9-test-editor", version: "1" },
  });
  check(init.protocolVersion === 1 && init.agentInfo.name === "harness9", "initialize", init);
  check(init.agentCapabilities.promptCapabilities.image === true, "image prompts", init);
  console.log("ok initialize");

  const session = await agent.request(methods.agent.session.new, { cwd: workdir, mcpServers: [] });
  sessionId = session.sessionId;
  check(session.modes.currentModeId === "default", "new session", session);
  console.log("ok session/new");

  const prompt = (words) =>
    agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: words }],
    });

  // 1: a thought, then text.
  let done = await prompt("say hello");
  check(done.stopReason === "end_turn", "first turn", done);
  check(text(updates, "agent_thought_chunk") === "Let me think.", "thought", updates);
  check(text(updates, "agent_message_chunk") === "Hello from harness9.", "text", updates);
  check(kinds(updates, "available_commands_update").length === 1, "commands", updates);
  console.log("ok streamed thought and text");

  // 2: an edit, allowed: its diff, then the file.
  updates.length = 0;
  done = await prompt("write notes.txt");
  check(done.stopReason === "end_turn", "edit turn", done);
  check(asked.length === 1, "one permission request", asked);
  const ids = asked[0].options.map((o) => `${o.optionId}:${o.kind}`);
  check(ids[0] === "allow_once:allow_once" && ids.at(-1) === "deny:reject_once", "options", ids);
  const call = kinds(updates, "tool_call")[0];
  check(call.kind === "edit" && call.content[0].type === "diff", "tool call with a diff", call);
  check(call.content[0].newText === "hello\n", "diff text", call);
  check(readFileSync(join(workdir, "notes.txt"), "utf8") === "hello\n", "file written", {});
  console.log("ok edit allowed with a diff");

  // 3: an edit, denied.
  updates.length = 0;
  answer = "deny";
  done = await prompt("write other.txt");
  check(done.stopReason === "end_turn", "denied turn", done);
  check(!existsSync(join(workdir, "other.txt")), "denied file not written", {});
  check(kinds(updates, "tool_call_update").at(-1).status === "failed", "denied call failed", updates);
  console.log("ok edit denied");

  // 4: a command, allowed: its output.
  updates.length = 0;
  answer = "allow_once";
  done = await prompt("run echo");
  check(done.stopReason === "end_turn", "command turn", done);
  const ran = kinds(updates, "tool_call")[0];
  check(ran.kind === "execute", "command kind", ran);
  const output = kinds(updates, "tool_call_update").at(-1);
  check(output.status === "completed", "command completed", output);
  check(output.content[0].content.text.includes("hello-from-bash"), "command output", output);
  console.log("ok command output");

  // 5: a plan.
  updates.length = 0;
  done = await prompt("plan it");
  check(done.stopReason === "end_turn", "plan turn", done);
  const plan = kinds(updates, "plan").at(-1);
  check(plan && plan.entries[0].content === "step one", "plan entries", updates);
  check(plan.entries[0].status === "in_progress", "plan status", plan);
  console.log("ok plan");

  // 6: cancel mid-stream, then the session goes on.
  updates.length = 0;
  const slow = prompt("talk slowly");
  while (text(updates, "agent_message_chunk") === "") {
    await new Promise((resolve) => setImmediate(resolve));
  }
  await agent.notify(methods.agent.session.cancel, { sessionId });
  done = await slow;
  check(done.stopReason === "cancelled", "cancelled turn", done);
  done = await prompt("are you there?");
  check(done.stopReason === "end_turn", "turn after cancel", done);
  check(text(updates, "agent_message_chunk").endsWith("Still here."), "text after cancel", updates);
  console.log("ok cancel mid-stream");

  // 7: modes.
  updates.length = 0;
  await agent.request(methods.agent.session.setMode, { sessionId, modeId: "plan" });
  const mode = kinds(updates, "current_mode_update");
  check(mode.length === 1 && mode[0].currentModeId === "plan", "mode update", updates);
  console.log("ok mode switch");
});
first.child.stdin.end();
check((await first.exited) === 0, "harness9 acp exits when the editor goes", {});

// 8: another editor loads the stored session: the conversation is replayed.
updates = [];
const second = start(updates, () => ({ outcome: { outcome: "cancelled" } }));
await second.app.connectWith(second.stream, async (agent) => {
  await agent.request(methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  const loaded = await agent.request(methods.agent.session.load, {
    sessionId,
    cwd: workdir,
    mcpServers: [],
  });
  check(loaded.modes.currentModeId === "plan", "loaded mode", loaded);
  const prompts = kinds(updates, "user_message_chunk").map((u) => u.content.text);
  check(prompts[0] === "say hello" && prompts.includes("are you there?"), "replayed prompts", prompts);
  check(text(updates, "agent_message_chunk").startsWith("Hello from harness9."), "replayed text", updates);
  console.log("ok session/load replayed");
});
second.child.stdin.end();
check((await second.exited) === 0, "second harness9 acp exits", {});
console.log("ok all");
