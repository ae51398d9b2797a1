// A v2 ACP *agent* built on the reference SDK (@agentclientprotocol/sdk, v2 draft with unstable
// features), serving one client on this process's stdio. It follows the prompt lifecycle of the
// spec with an echo "model":
//
//   session/prompt -> user_message (same messageId as the response) -> state_update running
//   -> if the text contains "permission": state_update requires_action,
//      session/request_permission, state_update running (unless cancelled meanwhile), one
//      agent_message_chunk (messageId "m_perm") carrying the answer: "selected:OPTION",
//      another outcome's name (e.g. "cancelled"), or "error:CODE" when the request failed
//   -> one agent_message_chunk per word (messageId "m_echo"; 10 ms apart when the text contains
//      "slow") -> a custom `_vendor_ping` update -> state_update idle with stopReason end_turn.
//   session/cancel stops the current prompt of that session: a pending permission request is
//   cancelled with $/cancel_request (its answer still awaited), no further word is echoed, and
//   the prompt ends with state_update idle / cancelled.
//
// usage: node v2_agent.mjs [--frames PATH]
//   --frames PATH: append every raw JSON-RPC frame ({"dir": "in"|"out", "msg": ...}, one per
//   line) to PATH, for the test's failure messages.

import { appendFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";

import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";

import { frameRecord, tapReadable, tapWritable } from "./frames.mjs";

const framesIndex = process.argv.indexOf("--frames");
const framesPath = framesIndex >= 0 ? process.argv[framesIndex + 1] : null;
const logFrame = (direction) => (line) => {
  if (framesPath) appendFileSync(framesPath, JSON.stringify(frameRecord(direction, line)) + "\n");
};

let nextId = 1;
/** sessionId -> AbortController of the prompt currently running in that session */
const running = new Map();

const update = (sessionId, update) =>
  connection.client.notify(acp.methods.client.session.update, { sessionId, update });

async function work(sessionId, text, signal) {
  try {
    await update(sessionId, { sessionUpdate: "state_update", state: "running" });
    if (text.includes("permission")) {
      await update(sessionId, { sessionUpdate: "state_update", state: "requires_action" });
      // As the SDK documents for session/cancel: the pending permission request of the cancelled
      // work is cancelled with $/cancel_request (aborting `cancellationSignal`), and the client
      // is expected to answer it with the `cancelled` outcome (we keep waiting for that answer).
      let chosen;
      try {
        const answer = await connection.client.request(
          acp.methods.client.session.requestPermission,
          {
            sessionId,
            title: "Run the pretend tool?",
            subject: { type: "tool_call", toolCall: { toolCallId: "call_1" } },
            options: [
              { optionId: "allow", name: "Allow", kind: "allow_once" },
              { optionId: "reject", name: "Reject", kind: "reject_once" },
            ],
          },
          { cancellationSignal: signal },
        );
        chosen =
          answer.outcome.outcome === "selected" ? `selected:${answer.outcome.optionId}` : answer.outcome.outcome;
      } catch (error) {
        if (!(error instanceof acp.RequestError)) throw error;
        chosen = `error:${error.code}`;
      }
      if (!signal.aborted) await update(sessionId, { sessionUpdate: "state_update", state: "running" });
      await update(sessionId, {
        sessionUpdate: "agent_message_chunk",
        messageId: "m_perm",
        content: { type: "text", text: chosen },
      });
    }
    for (const word of text.split(/\s+/).filter(Boolean)) {
      if (signal.aborted) break;
      await update(sessionId, {
        sessionUpdate: "agent_message_chunk",
        messageId: "m_echo",
        content: { type: "text", text: word },
      });
      if (text.includes("slow")) await sleep(10);
    }
    if (!signal.aborted) await update(sessionId, { sessionUpdate: "_vendor_ping", n: 1 });
    await update(sessionId, {
      sessionUpdate: "state_update",
      state: "idle",
      stopReason: signal.aborted ? "cancelled" : "end_turn",
    });
  } catch (error) {
    process.stderr.write(`v2_agent: prompt work failed: ${error?.stack ?? error}\n`);
    await update(sessionId, { sessionUpdate: "state_update", state: "idle", stopReason: "refusal" }).catch(() => {});
  }
}

const app = acp
  .agent({ name: "acp-codegen-interop-agent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "sdk-echo-agent", version: "1.0.0" },
    capabilities: {},
    _meta: { clientName: params.info.name },
  }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `sess_node_${nextId++}` }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params }) => {
    const sessionId = params.sessionId;
    const messageId = `msg_node_${nextId++}`;
    const text = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join(" ");
    running.get(sessionId)?.abort();
    const controller = new AbortController();
    running.set(sessionId, controller);
    // Insert the user message first, then accept the prompt: the update precedes the response.
    await update(sessionId, { sessionUpdate: "user_message", messageId, content: params.prompt });
    setImmediate(() => {
      void work(sessionId, text, controller.signal).finally(() => {
        if (running.get(sessionId) === controller) running.delete(sessionId);
      });
    });
    return { messageId };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    running.get(params.sessionId)?.abort();
  });

/** @type {acp.AgentConnection} */
const connection = app.connect(
  acp.ndJsonStream(
    tapWritable(Writable.toWeb(process.stdout), logFrame("out")),
    tapReadable(Readable.toWeb(process.stdin), logFrame("in")),
  ),
);

await connection.closed;
process.exit(0);
