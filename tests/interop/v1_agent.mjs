// An ACP v1 *agent* built on the reference SDK's default import (@agentclientprotocol/sdk, the
// stable v1 API), serving one client on this process's stdio. The v1 prompt turn with an echo
// "model":
//
//   session/prompt -> agent_thought_chunk -> one agent_message_chunk per word (10 ms apart)
//   -> tool_call pending -> if the text contains "permission": session/request_permission
//      (a non-allow answer fails the tool call) -> tool_call_update in_progress, then completed
//      with its output -> the session/prompt answer with stopReason end_turn.
//   session/cancel stops the turn at its next step; the prompt is answered with `cancelled`.
//
// usage: node v1_agent.mjs

import { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";

import * as acp from "@agentclientprotocol/sdk";

let nextId = 1;
const running = new Map(); // sessionId -> AbortController of the turn in progress

const update = (sessionId, update) => connection.client.notify(acp.methods.client.session.update, { sessionId, update });

async function turn(sessionId, text, signal) {
  await update(sessionId, { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "Echoing." } });
  const words = text.split(/\s+/).filter(Boolean);
  for (const [index, word] of words.entries()) {
    if (signal.aborted) return "cancelled";
    await sleep(10);
    await update(sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: index === 0 ? word : ` ${word}` } });
  }
  const toolCallId = `call_${nextId++}`;
  await update(sessionId, { sessionUpdate: "tool_call", toolCallId, title: "Count the words", kind: "other", status: "pending" });
  if (text.includes("permission")) {
    const answer = await connection.client.request(acp.methods.client.session.requestPermission, {
      sessionId,
      toolCall: { toolCallId },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    if (signal.aborted || answer.outcome.outcome === "cancelled") return "cancelled";
    if (answer.outcome.optionId !== "allow") {
      await update(sessionId, { sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
      return "end_turn";
    }
  }
  if (signal.aborted) return "cancelled";
  await update(sessionId, { sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  await update(sessionId, {
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: "completed",
    content: [{ type: "content", content: { type: "text", text: `words: ${words.length}` } }],
  });
  return "end_turn";
}

const app = acp
  .agent({ name: "acp-codegen-interop-v1-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {},
    agentInfo: { name: "sdk-v1-echo-agent", title: "SDK v1 Echo Agent", version: "1.0.0" },
  }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `sess_v1_${nextId++}` }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params }) => {
    const controller = new AbortController();
    running.set(params.sessionId, controller);
    const text = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join(" ");
    try {
      return { stopReason: await turn(params.sessionId, text, controller.signal) };
    } finally {
      running.delete(params.sessionId);
    }
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    running.get(params.sessionId)?.abort();
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
process.exit(0);
