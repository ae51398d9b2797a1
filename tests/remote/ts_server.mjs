// The reference SDK's remote server (AcpServer from @agentclientprotocol/sdk/experimental/server)
// on 127.0.0.1, serving a v2 echo agent (one per connection) over Streamable HTTP and WebSocket
// at /acp. The agent follows the lifecycle of tests/remote/support.py's EchoAgent:
//
//   session/prompt -> user_message -> response {messageId} -> state running
//   -> with "permission": requires_action, session/request_permission, running,
//      agent_message_chunk m_perm "selected:OPTION" / outcome / "error:CODE"
//   -> one agent_message_chunk m_echo per word (10 ms apart with "slow") -> idle end_turn
//   session/cancel stops the session's prompt (its pending permission request is cancelled with
//   $/cancel_request) -> idle cancelled.
//
// usage: node ts_server.mjs   prints {"port": N} once listening; exits when stdin closes.

import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

import { WebSocketServer } from "ws";

import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";

let nextId = 1;

function makeAgent() {
  /** sessionId -> AbortController of the prompt running in that session */
  const running = new Map();
  const update = (client, sessionId, update) =>
    client.notify(acp.methods.client.session.update, { sessionId, update });
  const chunk = (messageId, text) => ({ sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text } });

  async function work(client, sessionId, text, signal) {
    try {
      await update(client, sessionId, { sessionUpdate: "state_update", state: "running" });
      if (text.includes("permission")) {
        await update(client, sessionId, { sessionUpdate: "state_update", state: "requires_action" });
        let chosen;
        try {
          const answer = await client.request(
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
          chosen = answer.outcome.outcome === "selected" ? `selected:${answer.outcome.optionId}` : answer.outcome.outcome;
        } catch (error) {
          if (!(error instanceof acp.RequestError)) throw error;
          chosen = `error:${error.code}`;
        }
        if (!signal.aborted) await update(client, sessionId, { sessionUpdate: "state_update", state: "running" });
        await update(client, sessionId, chunk("m_perm", chosen));
      }
      for (const word of text.split(/\s+/).filter(Boolean)) {
        if (signal.aborted) break;
        await update(client, sessionId, chunk("m_echo", word));
        if (text.includes("slow")) await sleep(10);
      }
      await update(client, sessionId, {
        sessionUpdate: "state_update",
        state: "idle",
        stopReason: signal.aborted ? "cancelled" : "end_turn",
      });
    } catch (error) {
      if (!String(error).includes("closed")) process.stderr.write(`ts_server: prompt work failed: ${error?.stack ?? error}\n`);
    }
  }

  return acp
    .agent({ name: "ts-remote-echo-agent" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "ts-echo-agent", version: "1.0.0" },
      capabilities: {},
      _meta: { clientName: params.info.name },
    }))
    .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `sess_ts_${nextId++}` }))
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      const sessionId = params.sessionId;
      const messageId = `msg_ts_${nextId++}`;
      const text = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join(" ");
      running.get(sessionId)?.abort();
      const controller = new AbortController();
      running.set(sessionId, controller);
      await update(client, sessionId, { sessionUpdate: "user_message", messageId, content: params.prompt });
      setImmediate(() => {
        void work(client, sessionId, text, controller.signal).finally(() => {
          if (running.get(sessionId) === controller) running.delete(sessionId);
        });
      });
      return { messageId };
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      running.get(params.sessionId)?.abort();
    });
}

const server = new AcpServer({ createAgent: makeAgent });
const handleHttp = createNodeHttpHandler(server);
const webSockets = new WebSocketServer({ noServer: true });
const handleUpgrade = createNodeWebSocketUpgradeHandler(server, webSockets);

const http = createServer((req, res) => {
  if (new URL(req.url, "http://x").pathname !== "/acp") {
    res.writeHead(404).end("Not Found");
    return;
  }
  handleHttp(req, res);
});
http.on("upgrade", (req, socket, head) => {
  if (new URL(req.url, "http://x").pathname !== "/acp") {
    socket.destroy();
    return;
  }
  handleUpgrade(req, socket, head);
});
http.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: http.address().port, pid: process.pid }) + "\n");
});

process.stdin.resume();
process.stdin.on("end", async () => {
  await server.close();
  http.close();
  process.exit(0);
});
