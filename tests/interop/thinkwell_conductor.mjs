// `@thinkwell/conductor` (a TypeScript conductor nobody here wrote) serving one client on this
// process's stdio, with the chain given as JSON: [{command, args}, ...], proxies first, agent last.
//
// usage: node thinkwell_conductor.mjs '[{"command": "python3", "args": ["proxy.py"]}, ...]'
//
// It speaks the earlier draft of the proxy-chains RFD: `initialize` with `_meta.proxy: true` to
// each proxy and `_proxy/successor/request` / `_proxy/successor/notification` envelopes.

import { createInterface } from "node:readline";

import { Conductor, fromCommands } from "@thinkwell/conductor";

class StdioClient {
  async connect() {
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    async function* messages() {
      for await (const line of lines) {
        if (line.trim()) yield JSON.parse(line);
      }
    }
    return {
      send: (message) => process.stdout.write(JSON.stringify(message) + "\n"),
      messages: messages(),
      close: async () => lines.close(),
    };
  }
}

const conductor = new Conductor({
  instantiator: fromCommands(JSON.parse(process.argv[2])),
  mcpBridgeMode: "disabled",
  logging: { level: "error" },
});
await conductor.connect(new StdioClient());
await conductor.shutdown();
process.exit(0);
