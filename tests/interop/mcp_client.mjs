// A v2 ACP *client* built on the reference SDK (@agentclientprotocol/sdk, v2 draft with unstable
// features) that provides an MCP server over ACP with the SDK's own `McpOverAcpProvider`: "calc",
// one tool `add(a, b)`, answered by a plain handler (MCP 2026-07-28 outcomes; an unknown method is
// an inner MCP error -32601). It drives an agent subprocess over its stdio: initialize,
// session/new declaring the server (`"type": "acp"`), one prompt per argument of `--prompt`
// (default "use the tools"), each awaited until the agent's first agent_message_chunk, and prints a JSON
// record: {ok, error, initialize, said (agent_message_chunk texts), mcp (the MCP requests the
// server got: method and the protocol version of their `_meta`), agentExit, frames}.
//
// usage: node mcp_client.mjs [--prompt TEXT]... AGENT_COMMAND [ARGS...]

import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";

import { initializeV2, runScenario, sdkVersion, spawnAgent, within } from "./frames.mjs";

const STEP_MS = 10_000;
const TOTAL_MS = 25_000;

const record = { ok: false, error: null, sdkVersion: sdkVersion(), initialize: null, said: [], mcp: [], frames: [] };

function finish(code) {
  process.stdout.write(JSON.stringify(record) + "\n", () => process.exit(code));
}

let command = process.argv.slice(2);
const prompts = [];
while (command[0] === "--prompt") {
  prompts.push(command[1]);
  command = command.slice(2);
}
if (prompts.length === 0) prompts.push("use the tools");
if (command.length === 0) {
  process.stderr.write("usage: node mcp_client.mjs [--prompt TEXT]... AGENT_COMMAND [ARGS...]\n");
  process.exit(2);
}

const { child, childExit, output, input, overall } = spawnAgent(command, record, TOTAL_MS, finish);

const ADD = {
  name: "add",
  description: "Add two integers.",
  inputSchema: {
    type: "object",
    properties: { a: { type: "integer" }, b: { type: "integer" } },
    required: ["a", "b"],
  },
};

async function calc(context) {
  record.mcp.push({ method: context.method, protocolVersion: context.protocolVersion });
  switch (context.method) {
    case "server/discover":
      return {
        result: {
          supportedVersions: [acp.MCP_PROTOCOL_VERSION],
          capabilities: { tools: {} },
          resultType: "complete",
          cacheScope: "private",
          ttlMs: 0,
          _meta: { "io.modelcontextprotocol/serverInfo": { name: "calc", version: "1.0.0" } },
        },
      };
    case "tools/list":
      return { result: { tools: [ADD], resultType: "complete", cacheScope: "private", ttlMs: 0 } };
    case "tools/call": {
      const { a, b } = context.params?.arguments ?? {};
      return {
        result: { content: [{ type: "text", text: String(a + b) }], isError: false, resultType: "complete" },
      };
    }
    default:
      throw new acp.McpProtocolError(-32601, `Method not found: ${context.method}`);
  }
}

let replyWaiter = null;
const provider = new acp.McpOverAcpProvider();
const app = acp
  .client({ name: "acp-codegen-interop-mcp-client" })
  .onRequest(acp.methods.client.mcp.message, provider.handleRequest)
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const update = params.update;
    if (update.sessionUpdate === "agent_message_chunk") record.said.push(update.content?.text);
    if (update.sessionUpdate === "agent_message_chunk" && replyWaiter) {
      replyWaiter();
      replyWaiter = null;
    }
  });

/** @type {acp.ClientConnection} */
const connection = app.connect(acp.ndJsonStream(output, input));
const agent = connection.agent;
const server = provider.registerServer(agent, { name: "calc", handler: calc });

async function scenario() {
  record.initialize = await initializeV2(acp, agent, "acp-codegen-interop-mcp-client", STEP_MS);
  const session = await within(
    STEP_MS,
    "the session/new response",
    agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [server.declaration] }),
  );
  for (const text of prompts) {
    const reply = new Promise((resolve) => (replyWaiter = resolve));
    await within(
      STEP_MS,
      "the session/prompt response",
      agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text }],
      }),
    );
    await within(STEP_MS, "the agent's reply (an agent_message_chunk)", reply);
  }
}

await runScenario(scenario, { connection, child, childExit, overall }, record, finish);
