// The reference SDK's remote client (experimental/ws-client or http-client) through the cluster's
// balancer: CONNECTIONS connections at once, two sessions each, one prompt per session at a time,
// two rounds; every streamed word must name the worker that answered the connection's initialize.
//
// usage: node ts_cluster_client.mjs ws|http URL CONNECTIONS   prints one JSON record and exits
// 0, or 1 with record.error set. Needs tests/remote's pinned packages (run.py links them here).

import WebSocket from "ws";

import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

const STEP_MS = 30_000;
const [transport, url, count] = process.argv.slice(2);
const record = { ok: false, error: null, transport, connections: Number(count), perWorker: {}, words: 0 };
const finish = (code) => process.stdout.write(JSON.stringify(record) + "\n", () => process.exit(code));
setTimeout(() => { record.error ??= "did not finish in time"; finish(1); }, 120_000);
const within = (what, promise) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), STEP_MS))]);

async function one(n) {
  const words = {};  // sessionId -> streamed words
  const idle = {};   // sessionId -> count of idle states
  const wakers = [];
  const app = acp
    .client({ name: "ts-cluster-client" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const u = params.update;
      if (u.sessionUpdate === "agent_message_chunk") (words[params.sessionId] ??= []).push(u.content.text.trim());
      if (u.sessionUpdate === "state_update" && u.state === "idle") idle[params.sessionId] = (idle[params.sessionId] ?? 0) + 1;
      wakers.splice(0).forEach((wake) => wake());
    });
  const stream = transport === "ws" ? createWebSocketStream(url, { WebSocket }) : createHttpStream(url, {});
  const connection = app.connect(stream);
  const agent = connection.agent;
  const idleAt = (sid, k) => within(`idle ${k} on ${sid}`, new Promise((resolve) => {
    const check = () => ((idle[sid] ?? 0) >= k ? resolve() : wakers.push(check));
    check();
  }));
  const init = await within("initialize", agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION, info: { name: "ts-cluster-client", version: "1.0.0" }, capabilities: {},
  }));
  const worker = init.info.name;
  const sessions = [];
  for (let s = 0; s < 2; s++) {
    sessions.push((await within("session/new", agent.request(acp.methods.agent.session.new, { cwd: "/tmp", mcpServers: [] }))).sessionId);
  }
  for (let round = 1; round <= 2; round++) {
    await Promise.all(sessions.map(async (sessionId) => {
      const text = `ts round ${round} connection ${n}`;
      await within("session/prompt", agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }));
      await idleAt(sessionId, round);
    }));
  }
  for (const sid of sessions) {
    const got = words[sid] ?? [];
    const wrong = got.filter((w) => !w.startsWith(`${worker}:`));
    if (wrong.length || got.length !== 10) throw new Error(`connection ${n} (${worker}): words ${JSON.stringify(got)}`);
    record.words += got.length;
  }
  record.perWorker[worker] = (record.perWorker[worker] ?? 0) + 1;
  await connection.close?.();
  await stream.writable.close().catch(() => {});
}

Promise.all(Array.from({ length: record.connections }, (_, n) => one(n)))
  .then(() => { record.ok = true; finish(0); })
  .catch((error) => {
    record.error = String(error?.stack ?? error) + (error?.cause ? ` (cause: ${error.cause?.stack ?? error.cause})` : "");
    finish(1);
  });
