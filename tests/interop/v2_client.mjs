// A v2 ACP *client* built on the reference SDK (@agentclientprotocol/sdk, v2 draft with unstable
// features) that drives an agent subprocess over its stdio and prints a JSON record of what it
// observed.
//
// usage: node v2_client.mjs [--scenario lifecycle|cancel-permission|cancel-held-prompt] AGENT_COMMAND [ARGS...]
//
// Scenario "lifecycle" (the default; one session):
//   1. initialize, session/new
//   2. session/prompt "ask permission then echo": expects the prompt to be accepted with a
//      messageId, a user_message with that id, state_update running, a permission request that
//      this client answers (allow), agent_message_chunks, and state_update idle/end_turn.
//   3. session/prompt with 200 "slow" words; after the third agent_message_chunk of that prompt
//      this client sends session/cancel and waits for state_update idle/cancelled.
//
// Scenario "cancel-permission": initialize, session/new, session/prompt "wait for permission";
//   this client's user never answers the permission prompt: when it arrives the client sends
//   session/cancel and keeps the request open until the agent cancels it with $/cancel_request
//   (the handler's signal aborts), then answers the `cancelled` outcome as the schema requires,
//   and waits for state_update idle/cancelled.
//
// Scenario "cancel-held-prompt": initialize, session/new, session/prompt "wait for permission";
//   while the permission prompt is open (the agent is busy), a second session/prompt is sent
//   with a `cancellationSignal`; the agent holds it (no insertion while busy). Aborting the
//   signal sends $/cancel_request, and the held prompt must be rejected with -32800. Then the
//   permission is granted and the first prompt ends with state_update idle/end_turn.
//
// stdout carries exactly one JSON document: {ok, error, exports, sdkVersion, initialize,
// sessionId, prompts, events, frames}. `events` are in arrival order; `frames` are the raw
// JSON-RPC frames in both directions ("out" = client -> agent).

import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";

import { initializeV2, runScenario, sdkVersion, spawnAgent, within } from "./frames.mjs";

const STEP_MS = 10_000;
const TOTAL_MS = 25_000;

const record = {
  ok: false,
  error: null,
  sdkVersion: sdkVersion(),
  exports: [
    "@agentclientprotocol/sdk/experimental/v2/unstable: client, ndJsonStream, methods, PROTOCOL_VERSION, RequestError",
    "ClientApp.connect(stream) -> ClientConnection; ClientConnection.agent: ClientContext",
  ],
  initialize: null,
  sessionId: null,
  prompts: [],
  events: [],
  frames: [],
};

function finish(code) {
  process.stdout.write(JSON.stringify(record) + "\n", () => process.exit(code));
}

let command = process.argv.slice(2);
let scenarioName = "lifecycle";
if (command[0] === "--scenario") {
  scenarioName = command[1];
  command = command.slice(2);
}
if (command.length === 0 || !["lifecycle", "cancel-permission", "cancel-held-prompt"].includes(scenarioName)) {
  process.stderr.write(
    "usage: node v2_client.mjs [--scenario lifecycle|cancel-permission|cancel-held-prompt] AGENT_COMMAND [ARGS...]\n",
  );
  process.exit(2);
}
record.scenario = scenarioName;

const { child, childExit, output, input, overall } = spawnAgent(command, record, TOTAL_MS, finish);
const stream = acp.ndJsonStream(output, input);

// Waiters for session updates: resolved by the (synchronous, hence in-order) update handler.
const waiters = [];
function waitForUpdate(what, predicate) {
  return within(
    STEP_MS,
    what,
    new Promise((resolve) => waiters.push({ predicate, resolve })),
  );
}

let onChunk = null;
let permissionArrived;
const permissionAsked = new Promise((resolve) => (permissionArrived = resolve));
let releasePermission;
const permissionGate = new Promise((resolve) => (releasePermission = resolve));

const abbreviate = (text) => (text.length > 60 ? `${text.slice(0, 57)}...` : text);

const app = acp
  .client({ name: "acp-codegen-interop-client" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params, requestId, signal }) => {
    record.events.push({
      kind: "permission",
      requestId,
      sessionId: params.sessionId,
      title: params.title,
      options: params.options.map((option) => option.optionId),
    });
    const selected = { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
    if (scenarioName === "lifecycle") return selected;
    if (scenarioName === "cancel-held-prompt") {
      permissionArrived();
      return permissionGate.then(() => selected);
    }
    // cancel-permission: the user does not decide; the client cancels the session's work and
    // answers `cancelled` once the agent withdraws the request with $/cancel_request.
    record.events.push({ kind: "cancel_sent" });
    void agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
    return new Promise((resolve) => {
      let timer = null;
      const answer = (how) => {
        if (timer === undefined) return; // answered already
        clearTimeout(timer);
        timer = undefined;
        record.events.push({ kind: "permission_answered", how, reason: signal.reason?.code ?? null });
        resolve({ outcome: { outcome: "cancelled" } });
      };
      timer = setTimeout(() => answer("timeout"), STEP_MS);
      if (signal.aborted) answer("aborted");
      else signal.addEventListener("abort", () => answer("aborted"), { once: true });
    });
  })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const update = params.update;
    const event = { kind: "update", sessionId: params.sessionId, sessionUpdate: update.sessionUpdate };
    if ("messageId" in update) event.messageId = update.messageId;
    if (update.sessionUpdate === "state_update") {
      event.state = update.state;
      if (update.stopReason !== undefined) event.stopReason = update.stopReason;
    } else if (update.sessionUpdate === "agent_message_chunk") {
      event.text = update.content?.text;
    } else if (update.sessionUpdate === "user_message") {
      event.text = abbreviate((update.content ?? []).map((block) => block.text ?? `<${block.type}>`).join(" "));
    } else if (!update.sessionUpdate.match(/^[a-z]/)) {
      event.raw = update;
    }
    record.events.push(event);
    if (update.sessionUpdate === "agent_message_chunk" && onChunk) onChunk(event);
    for (let i = 0; i < waiters.length; ) {
      if (waiters[i].predicate(params)) {
        waiters[i].resolve(params);
        waiters.splice(i, 1);
      } else {
        i += 1;
      }
    }
  });

/** @type {acp.ClientConnection} */
const connection = app.connect(stream);
const agent = connection.agent;

const isIdle = (sessionId) => (params) =>
  params.sessionId === sessionId &&
  params.update.sessionUpdate === "state_update" &&
  params.update.state === "idle";

async function prompt(sessionId, text) {
  const entry = { text: abbreviate(text), messageId: null };
  record.prompts.push(entry);
  record.events.push({ kind: "prompt_sent", index: record.prompts.length - 1 });
  const response = await within(
    STEP_MS,
    "the session/prompt response",
    agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }),
  );
  entry.messageId = response.messageId;
  record.events.push({ kind: "prompt_accepted", index: record.prompts.length - 1, messageId: response.messageId });
  return response;
}

async function scenario() {
  const init = await initializeV2(acp, agent, "acp-codegen-interop-client", STEP_MS);
  record.initialize = init;
  const session = await within(
    STEP_MS,
    "the session/new response",
    agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] }),
  );
  const sessionId = session.sessionId;
  record.sessionId = sessionId;

  if (scenarioName === "cancel-permission") {
    const idle = waitForUpdate("idle after session/cancel", isIdle(sessionId));
    await prompt(sessionId, "wait for permission");
    await idle;
    return;
  }

  if (scenarioName === "cancel-held-prompt") {
    const idle = waitForUpdate("idle after the permission was granted", isIdle(sessionId));
    await prompt(sessionId, "wait for permission");
    await within(STEP_MS, "the permission request", permissionAsked);
    const controller = new AbortController();
    record.events.push({ kind: "held_prompt_sent" });
    const held = agent.request(
      acp.methods.agent.session.prompt,
      { sessionId, prompt: [{ type: "text", text: "held prompt" }] },
      { cancellationSignal: controller.signal },
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    record.events.push({ kind: "held_prompt_aborted" });
    controller.abort();
    try {
      const response = await within(STEP_MS, "the answer to the withdrawn prompt", held);
      record.events.push({ kind: "held_prompt_result", messageId: response.messageId });
    } catch (error) {
      if (!(error instanceof acp.RequestError)) throw error;
      record.events.push({ kind: "held_prompt_result", code: error.code, message: error.message });
    }
    releasePermission();
    await idle;
    return;
  }

  // Prompt 1: full lifecycle with a permission round trip.
  const idle1 = waitForUpdate("idle after the first prompt", isIdle(sessionId));
  await prompt(sessionId, "ask permission then echo");
  await idle1;

  // Prompt 2: cancelled in the middle, after the third chunk.
  let chunks = 0;
  let cancelSent;
  const cancelled = new Promise((resolve, reject) => {
    onChunk = () => {
      chunks += 1;
      if (chunks === 3) {
        onChunk = null;
        record.events.push({ kind: "cancel_sent" });
        cancelSent = agent.notify(acp.methods.agent.session.cancel, { sessionId });
        cancelSent.then(resolve, reject);
      }
    };
  });
  const idle2 = waitForUpdate("idle after session/cancel", isIdle(sessionId));
  await prompt(sessionId, Array(200).fill("slow").join(" "));
  await within(STEP_MS, "three chunks of the second prompt", cancelled);
  await idle2;
}

await runScenario(scenario, { connection, child, childExit, overall }, record, finish);
