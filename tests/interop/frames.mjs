import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Shared helpers of the interop scripts: a raw-frame tap on the byte streams and a bounded wait.
//
// The SDK works on web streams of bytes (`ndJsonStream(output, input)`); tapping the bytes on
// both sides records every frame exactly as it went over the pipe, so that a failing run can
// show the raw JSON-RPC traffic.

/** Wrap a web ReadableStream<Uint8Array> so that every complete line is passed to `onLine`. */
export function tapReadable(readable, onLine) {
  const decoder = new TextDecoder();
  let pending = "";
  return readable.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true });
        let newline;
        while ((newline = pending.indexOf("\n")) >= 0) {
          onLine(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
        }
        controller.enqueue(chunk);
      },
      flush() {
        if (pending) onLine(pending);
      },
    }),
  );
}

/** Wrap a web WritableStream<Uint8Array> so that every complete line written is passed to `onLine`. */
export function tapWritable(writable, onLine) {
  const decoder = new TextDecoder();
  const writer = writable.getWriter();
  let pending = "";
  return new WritableStream({
    async write(chunk) {
      pending += decoder.decode(chunk, { stream: true });
      let newline;
      while ((newline = pending.indexOf("\n")) >= 0) {
        onLine(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
      }
      await writer.write(chunk);
    },
    async close() {
      await writer.close();
    },
    async abort(reason) {
      await writer.abort(reason);
    },
  });
}

/** Parse a raw frame for the record; keeps the raw text when it is not JSON. */
export function frameRecord(direction, line) {
  try {
    return { dir: direction, msg: JSON.parse(line) };
  } catch {
    return { dir: direction, raw: line };
  }
}

/** Reject with a clear message when `promise` does not settle within `ms`. */
export function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Send a v2 `initialize` (the SDK's protocol version, client `name` 1.0.0, no capabilities) on
 * `agent` (a ClientConnection's agent side of the v2 API `acp`) and await its answer within `ms`.
 */
export function initializeV2(acp, agent, name, ms) {
  return within(
    ms,
    "the initialize response",
    agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name, version: "1.0.0" },
      capabilities: {},
    }),
  );
}

/** The version of the installed SDK (read from its package.json, which "exports" does not expose). */
export function sdkVersion() {
  let dir = dirname(fileURLToPath(import.meta.resolve("@agentclientprotocol/sdk/experimental/v2/unstable")));
  for (;;) {
    try {
      const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (meta.name === "@agentclientprotocol/sdk") return meta.version;
    } catch {
      // not there: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * Start the agent command with piped stdio for a driver script: its byte streams tapped into
 * `record.frames`, a deadline of `totalMs` for the whole run, start failures in `record.error`.
 * `finish(code)` prints the record and exits. Returns {child, childExit, output, input, overall}.
 */
export function spawnAgent(command, record, totalMs, finish) {
  const overall = setTimeout(() => {
    record.error = record.error ?? `scenario did not finish within ${totalMs} ms`;
    child.kill("SIGKILL");
    finish(1);
  }, totalMs);
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  child.on("error", (error) => {
    record.error = `could not start the agent: ${error.message}`;
    finish(1);
  });
  const childExit = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const output = tapWritable(Writable.toWeb(child.stdin), (line) => record.frames.push(frameRecord("out", line)));
  const input = tapReadable(Readable.toWeb(child.stdout), (line) => record.frames.push(frameRecord("in", line)));
  return { child, childExit, output, input, overall };
}

/**
 * End a driver script's run: close the connection and the agent's stdin, give the agent 5 s to
 * exit (then kill it), note how it ended in `record.agentExit`, and `finish` with the outcome.
 */
export async function endRun({ connection, child, childExit, overall }, record, finish) {
  connection.close();
  child.stdin.end();
  const exit = await Promise.race([childExit, new Promise((resolve) => setTimeout(() => resolve(null), 5_000))]);
  if (exit === null) {
    child.kill("SIGKILL");
    record.agentExit = "killed after 5 s";
  } else {
    record.agentExit = exit;
  }
  clearTimeout(overall);
  finish(record.ok ? 0 : 1);
}

/** Run `scenario()`, note its outcome in `record` (ok, or the error and its code), then `endRun`. */
export async function runScenario(scenario, handles, record, finish) {
  try {
    await scenario();
    record.ok = true;
  } catch (error) {
    record.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    if (error && typeof error === "object" && "code" in error) record.error += ` (code ${error.code})`;
  } finally {
    await endRun(handles, record, finish);
  }
}
