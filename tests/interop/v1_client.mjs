// An ACP v1 *client* built on the reference SDK's default import (@agentclientprotocol/sdk, the
// stable v1 API that editors use today) that drives an agent subprocess over its stdio and prints
// a JSON record of what it observed.
//
// usage: node v1_client.mjs AGENT_COMMAND [ARGS...]
//
// One session, three prompts (the v1 prompt turn: updates stream, the session/prompt answer ends
// the turn with its stopReason):
//   1. "ask permission then echo": the permission request is answered `allow`; expects the echo
//      as agent_message_chunks and stopReason end_turn.
//   2. 200 "slow" words: after the third agent_message_chunk this client sends session/cancel;
//      expects stopReason cancelled.
//   3. "permission, then cancel": when the permission request arrives this client sends
//      session/cancel and answers the request `cancelled`, as v1 requires; expects cancelled.
//
// stdout carries exactly one JSON document: {ok, error, sdkVersion, initialize, sessionId,
// prompts, events, frames}; `frames` are the raw JSON-RPC frames ("out" = client -> agent).

import * as acp from "@agentclientprotocol/sdk";

import { runScenario, sdkVersion, spawnAgent, within } from "./frames.mjs";

const STEP_MS = 10_000;
const TOTAL_MS = 30_000;

const record = { ok: false, error: null, sdkVersion: sdkVersion(), initialize: null, sessionId: null, prompts: [], events: [], frames: [] };
const finish = (code) => process.stdout.write(JSON.stringify(record) + "\n", () => process.exit(code));

const command = process.argv.slice(2);
if (command.length === 0) {
  process.stderr.write("usage: node v1_client.mjs AGENT_COMMAND [ARGS...]\n");
  process.exit(2);
}
const { child, childExit, output, input, overall } = spawnAgent(command, record, TOTAL_MS, finish);
const stream = acp.ndJsonStream(output, input);

let onChunk = null;
let permissionMode = "allow";

const app = acp
  .client({ name: "acp-codegen-interop-v1-client" })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    record.events.push({ kind: "permission", toolCallId: params.toolCall.toolCallId, options: params.options.map((o) => o.optionId) });
    if (permissionMode === "allow") return { outcome: { outcome: "selected", optionId: "allow" } };
    record.events.push({ kind: "cancel_sent" });
    await agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
    return { outcome: { outcome: "cancelled" } };
  })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const update = params.update;
    const event = { kind: "update", sessionId: params.sessionId, sessionUpdate: update.sessionUpdate };
    if ("status" in update && update.status) event.status = update.status;
    if (update.sessionUpdate === "agent_message_chunk") event.text = update.content?.text;
    record.events.push(event);
    if (update.sessionUpdate === "agent_message_chunk" && onChunk) onChunk();
  });

const connection = app.connect(stream);
const agent = connection.agent;

async function prompt(sessionId, text) {
  record.events.push({ kind: "prompt_sent", index: record.prompts.length });
  const response = await within(STEP_MS * 2, "the session/prompt answer",
    agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }));
  record.prompts.push({ text: text.slice(0, 40), stopReason: response.stopReason });
  record.events.push({ kind: "prompt_done", stopReason: response.stopReason });
  return response;
}

async function scenario() {
  record.initialize = await within(STEP_MS, "the initialize response", agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "acp-codegen-interop-v1-client", version: "1.0.0" },
  }));
  const session = await within(STEP_MS, "the session/new response",
    agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] }));
  const sessionId = session.sessionId;
  record.sessionId = sessionId;

  await prompt(sessionId, "ask permission then echo");

  let chunks = 0;
  onChunk = () => {
    chunks += 1;
    if (chunks === 3) {
      onChunk = null;
      record.events.push({ kind: "cancel_sent" });
      void agent.notify(acp.methods.agent.session.cancel, { sessionId });
    }
  };
  await prompt(sessionId, Array(200).fill("slow").join(" "));

  permissionMode = "cancel";
  await prompt(sessionId, "permission, then cancel");
}

await runScenario(scenario, { connection, child, childExit, overall }, record, finish);
