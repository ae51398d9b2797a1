// A v2 ACP *agent* built on the reference SDK (@agentclientprotocol/sdk, v2 draft with unstable
// features) that uses MCP servers provided over ACP with the SDK's own `McpOverAcpCaller` (MCP
// 2026-07-28 requests carried by `mcp/message`). It says so in `initialize`
// (`capabilities.session.mcp.acp`), keeps the `"type": "acp"` servers each `session/new`
// declares, and answers every prompt by calling the tool named in the prompt's first word on each
// of them with the integers that follow ("add 2 40"): one agent_message_chunk per server,
// "NAME: TEXT" for the tool's first text block (with " (progress 1,2,...)" when the server sent
// progress notifications for the call, which asks for them with a `progressToken`), "NAME: mcp error CODE" for an inner MCP error,
// "NAME: acp error CODE" when the `mcp/message` request itself failed; then idle / end_turn.
//
// usage: node mcp_agent.mjs [--frames PATH]
//   --frames PATH: append every raw JSON-RPC frame ({"dir": "in"|"out", "msg": ...}) to PATH.

import { appendFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";

import { frameRecord, tapReadable, tapWritable } from "./frames.mjs";

const framesIndex = process.argv.indexOf("--frames");
const framesPath = framesIndex >= 0 ? process.argv[framesIndex + 1] : null;
const logFrame = (direction) => (line) => {
  if (framesPath) appendFileSync(framesPath, JSON.stringify(frameRecord(direction, line)) + "\n");
};

const mcp = new acp.McpOverAcpCaller({ clientInfo: { name: "sdk-mcp-agent", version: "1.0.0" } });
let nextId = 1;
/** sessionId -> the ACP MCP servers its session/new declared */
const servers = new Map();

const update = (sessionId, update) =>
  connection.client.notify(acp.methods.client.session.update, { sessionId, update });

async function call(server, tool, numbers) {
  try {
    const listed = await mcp.request(connection.client, server.serverId, "tools/list", {});
    if ("error" in listed) return `mcp error ${listed.error.code}`;
    const found = listed.result.tools.find((t) => t.name === tool);
    if (!found) return `no tool ${tool}`;
    // the numbers go to the tool's parameters in the order its input schema lists them
    const names = Object.keys(found.inputSchema?.properties ?? {});
    const args = Object.fromEntries(numbers.map((n, i) => [names[i], n]));
    const progress = [];
    const outcome = await mcp.request(
      connection.client,
      server.serverId,
      "tools/call",
      { name: tool, arguments: args, _meta: { progressToken: `p${nextId++}` } },
      { onNotification: (note) => progress.push(note.params?.progress) },
    );
    if ("error" in outcome) return `mcp error ${outcome.error.code}`;
    const text = outcome.result.content.find((block) => block.type === "text");
    const said = text ? text.text : JSON.stringify(outcome.result);
    return progress.length ? `${said} (progress ${progress.join(",")})` : said;
  } catch (error) {
    if (error instanceof acp.RequestError) return `acp error ${error.code}`;
    throw error;
  }
}

async function work(sessionId, text) {
  const [tool, ...rest] = text.split(/\s+/).filter(Boolean);
  await update(sessionId, { sessionUpdate: "state_update", state: "running" });
  for (const server of servers.get(sessionId) ?? []) {
    const said = await call(server, tool, rest.map(Number));
    await update(sessionId, {
      sessionUpdate: "agent_message_chunk",
      messageId: "m_tools",
      content: { type: "text", text: `${server.name}: ${said}` },
    });
  }
  await update(sessionId, { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
}

const app = acp
  .agent({ name: "sdk-mcp-agent" })
  .onNotification(acp.methods.agent.mcp.message, mcp.handleNotification)
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "sdk-mcp-agent", version: "1.0.0" },
    capabilities: { session: { mcp: { acp: {} } } },
  }))
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    const sessionId = `sess_mcp_${nextId++}`;
    servers.set(sessionId, (params.mcpServers ?? []).filter(acp.isMcpServerAcp));
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params }) => {
    const sessionId = params.sessionId;
    const messageId = `msg_mcp_${nextId++}`;
    const text = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join(" ");
    await update(sessionId, { sessionUpdate: "user_message", messageId, content: params.prompt });
    setImmediate(() => {
      work(sessionId, text).catch((error) => {
        process.stderr.write(`mcp_agent: prompt work failed: ${error?.stack ?? error}\n`);
        process.exitCode = 1;
      });
    });
    return { messageId };
  });

/** @type {acp.AgentConnection} */
const connection = app.connect(
  acp.ndJsonStream(
    tapWritable(Writable.toWeb(process.stdout), logFrame("out")),
    tapReadable(Readable.toWeb(process.stdin), logFrame("in")),
  ),
);

await connection.closed;
process.exit(process.exitCode ?? 0);
