// One load process of bench/remote.py: CONNECTIONS connections to an ACP endpoint over
// WebSocket or Streamable HTTP, each with one session streaming PROMPTS prompts of WORDS words
// (the echo agent sends one agent_message_chunk per word).
//
// usage: node remote_load.mjs ws|http URL CONNECTIONS PROMPTS WORDS [OPENING] [raw|sdk] [deflate]
//
// CLIENT "raw" (the default) speaks the transport itself: `ws` text frames, or node:http POSTs
// and SSE streams parsed by hand, one JSON.parse per message and no schema validation, so that
// one load process costs a fraction of what a server spends per update (a load the servers
// cannot outrun). "sdk" uses the reference TypeScript SDK's ws-client and http-client
// (@agentclientprotocol/sdk, pinned in tests/remote/package.json), which validate every
// notification against the schema and cost several times more CPU per update than either server.
//
// Talks to its parent over stdio, one JSON line each way:
//   1. opens the connections (at most OPENING at a time: the accept queue stays short), each
//      initialized with one session, then prints {"ready": N, "opened_s": T};
//   2. waits for "go" on stdin, runs the prompts (every connection at once, its prompts one after
//      another), then prints {"updates", "expected", "latencies_ms", "began", "ended", "errors"}
//      (began/ended: epoch seconds of this process, comparable between processes on one host);
//   3. on "close" or stdin EOF closes its connections and exits 0.
// A failure prints {"error": MESSAGE} and exits 1. Updates are counted per connection as they
// arrive; a turn ends with the state_update idle of its session.

import http from "node:http";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

// The packages live in tests/remote/node_modules (pinned there, installed by its conftest or
// `npm install` in that directory): resolve them from there, not from bench/.
const pinned = createRequire(new URL("../tests/remote/package.json", import.meta.url));
const load = (name) => import(pathToFileURL(pinned.resolve(name)).href);
const { default: WebSocket } = await load("ws");
const acp = await load("@agentclientprotocol/sdk/experimental/v2/unstable");
const { createWebSocketStream } = await load("@agentclientprotocol/sdk/experimental/ws-client");
const { createHttpStream } = await load("@agentclientprotocol/sdk/experimental/http-client");

const TURN_TIMEOUT_MS = 300_000;
const [transport, url, connectionsArg, promptsArg, wordsArg, openingArg, clientArg, deflateArg] = process.argv.slice(2);
const client = clientArg ?? "raw";
// "deflate": the raw WebSocket client offers permessage-deflate, as browsers and `ws` clients do
// by default (the server decides whether to take it).
const perMessageDeflate = deflateArg === "deflate";
const connections = Number(connectionsArg);
const prompts = Number(promptsArg);
const words = Number(wordsArg);
const opening = Number(openingArg ?? 16);
const text = Array.from({ length: words }, (_, i) => `w${i}`).join(" ");
// user_message, state running, one chunk per word, state idle
const updatesPerTurn = words + 3;

const now = () => (performance.timeOrigin + performance.now()) / 1000;
const say = (record) => new Promise((resolve) => process.stdout.write(JSON.stringify(record) + "\n", resolve));
const fail = async (error) => {
  await say({ error: String(error?.stack ?? error) });
  process.exit(1);
};

/** `prompts` turns one after another: send the prompt, wait for the turn's end (the peer calls
 * `turnDone` on its idle update), note each turn's latency. */
async function runTurns(peer, latencies, sendPrompt) {
  for (let i = 0; i < prompts; i += 1) {
    let timer;
    const idle = new Promise((resolve, reject) => {
      peer.turnDone = resolve;
      timer = setTimeout(() => reject(new Error(`turn not finished within ${TURN_TIMEOUT_MS} ms`)), TURN_TIMEOUT_MS);
    });
    const began = performance.now();
    await sendPrompt();
    await idle.finally(() => clearTimeout(timer));
    latencies.push(performance.now() - began);
  }
}

/** Shared by both raw clients: JSON-RPC ids, the answers awaited, the updates counted. */
class RawPeer {
  constructor() {
    this.updates = 0;
    this.turnDone = null;
    this.sessionId = null;
    this.nextId = 1;
    this.pending = new Map();
  }

  /** One message from the agent: an answer, a session/update, or a request we do not serve. */
  receive(text) {
    const message = JSON.parse(text);
    if (message.method === "session/update") {
      this.updates += 1;
      const update = message.params.update;
      if (update.sessionUpdate === "state_update" && update.state === "idle" && this.turnDone) {
        const done = this.turnDone;
        this.turnDone = null;
        done();
      }
    } else if (message.method === undefined) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (waiter && "error" in message) waiter.reject(new Error(JSON.stringify(message.error)));
      else waiter?.resolve(message.result);
    } else if (message.id !== undefined) {
      this.send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
    }
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ jsonrpc: "2.0", id, method, params }).catch(reject);
    });
  }

  async open() {
    await this.connect();
    await this.request("initialize", {
      protocolVersion: 2,
      info: { name: "bench-load", version: "1.0.0" },
      capabilities: {},
    });
    const created = await this.request("session/new", { cwd: process.cwd(), mcpServers: [] });
    this.sessionId = created.sessionId;
    await this.attach();
  }

  drive(latencies) {
    const prompt = [{ type: "text", text }];
    return runTurns(this, latencies, () => this.request("session/prompt", { sessionId: this.sessionId, prompt }));
  }
}

/** WebSocket: one text frame per message (the `ws` package, as the SDK's ws-client uses). */
class RawWs extends RawPeer {
  connect() {
    return new Promise((resolve, reject) => {
      this.ws = new WebSocket(url, { perMessageDeflate });
      this.ws.on("open", resolve);
      this.ws.on("error", reject);
      this.ws.on("message", (data) => this.receive(data.toString()));
    });
  }

  async attach() {}

  send(message) {
    return new Promise((resolve, reject) => this.ws.send(JSON.stringify(message), (e) => (e ? reject(e) : resolve())));
  }

  async close() {
    this.ws.close();
  }
}

// POSTs share at most 256 kept-alive sockets per load process: thousands opened at once would
// overflow the server's accept queue (node's is 511) and be reset, which is the kernel's figure.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** Streamable HTTP: POST per message (200 for initialize, 202 otherwise), answers and updates on
 * the connection's SSE stream and on the session's, opened before the session's first prompt. */
class RawHttp extends RawPeer {
  async connect() {
    this.connectionId = null;
    this.streams = [];
  }

  post(message, sessionId, retry = true) {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    if (this.connectionId) headers["acp-connection-id"] = this.connectionId;
    if (sessionId) headers["acp-session-id"] = sessionId;
    const body = JSON.stringify(message);
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method: "POST", agent, headers }, (res) => {
        const parts = [];
        res.on("data", (part) => parts.push(part));
        res.on("end", () => {
          if (res.statusCode === 200 && message.method === "initialize") {
            this.connectionId = res.headers["acp-connection-id"];
            this.receive(Buffer.concat(parts).toString());
            resolve();
          } else if (res.statusCode === 202) resolve();
          else reject(new Error(`POST ${message.method ?? "response"}: ${res.statusCode} ${Buffer.concat(parts)}`));
        });
      });
      req.on("error", (error) => {
        // A kept-alive socket the server closed as we reused it (the server's keep-alive timeout
        // ended it): the request never reached the server, send it again on a fresh socket.
        if (retry && req.reusedSocket && error.code === "ECONNRESET") this.post(message, sessionId, false).then(resolve, reject);
        else reject(error);
      });
      req.end(body);
    });
  }

  send(message) {
    if (message.method === "initialize") return this.post(message, null);
    return this.connectionId && this.streams.length === 0
      ? this.listen(null).then(() => this.post(message, message.params?.sessionId))
      : this.post(message, message.params?.sessionId);
  }

  /** Open an SSE stream (the connection's, or a session's); resolves once it answered 200. */
  listen(sessionId) {
    const headers = { accept: "text/event-stream", "acp-connection-id": this.connectionId };
    if (sessionId) headers["acp-session-id"] = sessionId;
    return new Promise((resolve, reject) => {
      const req = http.get(url, { agent: false, headers }, (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`GET stream: ${res.statusCode}`));
          res.resume();
          return;
        }
        res.setEncoding("utf8");
        let pending = "";
        res.on("data", (chunk) => {
          pending += chunk;
          let end;
          while ((end = pending.indexOf("\n\n")) >= 0) {
            const event = pending.slice(0, end);
            pending = pending.slice(end + 2);
            const data = event
              .split("\n")
              .filter((line) => line.startsWith("data:"))
              .map((line) => line.slice(line[5] === " " ? 6 : 5));
            if (data.length) this.receive(data.join("\n"));
          }
        });
        resolve();
      });
      req.on("error", reject);
      this.streams.push(req);
    });
  }

  attach() {
    return this.listen(this.sessionId);
  }

  async close() {
    await new Promise((resolve) => {
      const headers = { "acp-connection-id": this.connectionId };
      const req = http.request(url, { method: "DELETE", agent, headers }, (res) => res.resume().on("end", resolve));
      req.on("error", resolve);
      req.end();
    });
    for (const stream of this.streams) stream.destroy();
  }
}

/** One connection: its stream, agent peer, session and the turn it waits for. */
class SdkLoad {
  constructor() {
    this.updates = 0;
    this.turnDone = null;
    this.sessionId = null;
    const app = acp.client({ name: "bench-load" }).onNotification(acp.methods.client.session.update, ({ params }) => {
      this.updates += 1;
      const update = params.update;
      if (update.sessionUpdate === "state_update" && update.state === "idle" && this.turnDone) {
        const done = this.turnDone;
        this.turnDone = null;
        done();
      }
    });
    this.stream = transport === "ws" ? createWebSocketStream(url, { WebSocket }) : createHttpStream(url, {});
    this.connection = app.connect(this.stream);
    this.agent = this.connection.agent;
  }

  async open() {
    await this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "bench-load", version: "1.0.0" },
      capabilities: {},
    });
    const created = await this.agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
    this.sessionId = created.sessionId;
  }

  drive(latencies) {
    const request = { sessionId: this.sessionId, prompt: [{ type: "text", text }] };
    return runTurns(this, latencies, () => this.agent.request(acp.methods.agent.session.prompt, request));
  }

  async close() {
    try {
      await this.connection.close?.();
      await this.stream.writable.close();
    } catch {
      // already closed by the server
    }
  }
}

async function openAll() {
  const loads = [];
  let next = 0;
  async function opener() {
    while (next < connections) {
      next += 1;
      const one = client === "sdk" ? new SdkLoad() : transport === "ws" ? new RawWs() : new RawHttp();
      loads.push(one);
      await one.open();
    }
  }
  await Promise.all(Array.from({ length: Math.min(opening, connections) }, opener));
  return loads;
}

async function main() {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const began = now();
  const loads = await openAll();
  await say({ ready: loads.length, opened_s: now() - began });
  const go = await lines.next();
  if (go.done || go.value.trim() !== "go") {
    await Promise.all(loads.map((load) => load.close()));
    process.exit(0);
  }
  const counted = loads.reduce((sum, load) => sum + load.updates, 0);
  const latencies = [];
  const errors = [];
  const start = now();
  await Promise.all(loads.map((load) => load.drive(latencies).catch((error) => errors.push(String(error)))));
  const ended = now();
  const updates = loads.reduce((sum, load) => sum + load.updates, 0) - counted;
  await say({
    updates,
    expected: connections * prompts * updatesPerTurn,
    latencies_ms: latencies,
    began: start,
    ended,
    errors: errors.slice(0, 5),
  });
  await lines.next(); // "close" or EOF
  await Promise.all(loads.map((load) => load.close()));
  process.exit(0);
}

main().catch(fail);
