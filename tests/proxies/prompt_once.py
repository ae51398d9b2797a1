"""A generated acp_v2_draft client that runs an agent command, opens one session, sends each
prompt and awaits its turn (`PromptingClient`), then prints one JSON record: {"said": [the text
of each turn's reply], "stopReasons": [...], "initialize": the agent's answer}.

usage: python prompt_once.py PROMPT... -- AGENT_COMMAND [ARGS...]
"""

from __future__ import annotations

import asyncio
import json
import sys

import acp_v2_draft as acp
from acp_runtime.lifecycle import PromptingClient


class Client(PromptingClient, acp.Client):
    pass


async def main(prompts: list[str], command: list[str]) -> None:
    client = Client()
    agent, connection, process = await acp.connect_agent(command, client)
    async with connection:
        init = await agent.initialize(2, acp.Implementation(name="prompt-once", version="1"))
        session = await agent.session_new(cwd="/tmp", mcp_servers=[])
        turns = [await client.prompt(session.session_id, text) for text in prompts]
    await asyncio.wait_for(process.wait(), 15)
    record = {
        "said": [turn.text for turn in turns],
        "stopReasons": [turn.stop_reason for turn in turns],
        "initialize": init.to_dict(),
    }
    print(json.dumps(record))


if __name__ == "__main__":
    split = sys.argv.index("--")
    asyncio.run(main(sys.argv[1:split], sys.argv[split + 1 :]))
