// The reference SDK's remote clients (experimental/ws-client, experimental/http-client) driving
// an ACP endpoint through the full v2 prompt lifecycle on two sessions of one connection at once:
//
//   1. both sessions: "ask permission then echo" concurrently (the permission is allowed);
//   2. both sessions: a slow prompt concurrently; session A is cancelled after its third chunk,
//      session B runs to the end;
//   3. session A: a permission prompt the user does not answer; the client sends session/cancel
//      and answers `cancelled` once the agent withdraws the request ($/cancel_request).
//
// usage: node ts_client.mjs ws|http URL   prints one JSON record (events per session) and exits
// 0, or 1 with record.error set.

import WebSocket from "ws";

import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

const STEP_MS = 15_000;
const [transport, url] = process.argv.slice(2);
const record = { ok: false, error: null, transport, initialize: null, sessions: [], events: {}, permissions: [] };

function finish(code) {
  process.stdout.write(JSON.stringify(record) + "\n", () => process.exit(code));
}
const overall = setTimeout(() => {
  record.error = record.error ?? "scenario did not finish in time";
  finish(1);
}, 60_000);

const within = (what, promise) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), STEP_MS))]);

const waiters = [];
function waitFor(what, predicate) {
  if (predicate()) return Promise.resolve();
  return within(what, new Promise((resolve) => waiters.push({ predicate, resolve })));
}
function changed() {
  for (let i = 0; i < waiters.length; ) {
    if (waiters[i].predicate()) {
      waiters[i].resolve();
      waiters.splice(i, 1);
    } else i += 1;
  }
}
const events = (sessionId) => (record.events[sessionId] ??= []);
const push = (sessionId, event) => {
  events(sessionId).push(event);
  changed();
};
const idleCount = (sessionId) => events(sessionId).filter((e) => e[0] === "state" && e[1] === "idle").length;
const chunkCount = (sessionId, messageId) => events(sessionId).filter((e) => e[0] === "chunk" && e[1] === messageId).length;

let undecided = false;
let agent;

const app = acp
  .client({ name: "ts-remote-client" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
    push(params.sessionId, ["permission", params.title]);
    record.permissions.push(params.sessionId);
    if (!undecided) return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
    void agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
    return new Promise((resolve) => {
      const answer = (how) => {
        push(params.sessionId, ["permission_answered", how]);
        resolve({ outcome: { outcome: "cancelled" } });
      };
      const timer = setTimeout(() => answer("timeout"), STEP_MS);
      signal.addEventListener("abort", () => { clearTimeout(timer); answer("aborted"); }, { once: true });
    });
  })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const u = params.update;
    if (u.sessionUpdate === "state_update") push(params.sessionId, ["state", u.state, u.stopReason ?? null]);
    else if (u.sessionUpdate === "agent_message_chunk") push(params.sessionId, ["chunk", u.messageId, u.content?.text]);
    else if (u.sessionUpdate === "user_message") push(params.sessionId, ["user_message", u.messageId]);
    else push(params.sessionId, ["other", u.sessionUpdate]);
  });

const stream =
  transport === "ws" ? createWebSocketStream(url, { WebSocket }) : createHttpStream(url, {});
const connection = app.connect(stream);
agent = connection.agent;

const prompt = (sessionId, text) =>
  within("session/prompt", agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }));

async function scenario() {
  const init = await within(
    "initialize",
    agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "ts-remote-client", version: "1.0.0" },
      capabilities: {},
    }),
  );
  record.initialize = init;
  const newSession = () => within("session/new", agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] }));
  const a = (await newSession()).sessionId;
  const b = (await newSession()).sessionId;
  record.sessions = [a, b];

  // 1. permission round trips on both sessions at once
  await Promise.all([prompt(a, "ask permission then echo"), prompt(b, "ask permission then echo")]);
  await waitFor("both idle after phase 1", () => idleCount(a) >= 1 && idleCount(b) >= 1);

  // 2. streaming on both; A cancelled after three chunks
  const slow = Array(60).fill("slow").join(" ");
  await Promise.all([prompt(a, slow), prompt(b, slow)]);
  await waitFor("three chunks on A", () => chunkCount(a, "m_echo") >= 3 + 4);
  await agent.notify(acp.methods.agent.session.cancel, { sessionId: a });
  await waitFor("both idle after phase 2", () => idleCount(a) >= 2 && idleCount(b) >= 2);

  // 3. a permission request withdrawn by session/cancel
  undecided = true;
  await prompt(a, "permission please");
  await waitFor("A idle and the permission withdrawn after phase 3", () =>
    idleCount(a) >= 3 && events(a).some((e) => e[0] === "permission_answered"));
}

scenario()
  .then(async () => {
    record.ok = true;
    clearTimeout(overall);
    await connection.close?.();
    await stream.writable.close().catch(() => {});
    finish(0);
  })
  .catch((error) => {
    record.error = String(error?.stack ?? error);
    finish(1);
  });
