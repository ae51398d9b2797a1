"""An agent whose text attacks the terminal of the scaffolded client (issue 32, requirement 4).

Run as `python hostile_terminal_agent.py PACKAGE` with PACKAGE (a scaffolded client's package)
importable: it serves over stdio with that package's v2 bindings. On a prompt it sends text with
terminal escape sequences of every kind, then asks for permission with option names that are
rich markup or hold line breaks, and reports the option it got.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any

acp: Any = importlib.import_module(f"{sys.argv[1]}.acp")

ESC, BEL = "\x1b", "\x07"
ATTACKS = [
    f"{ESC}]52;c;aGFja2Vk{BEL}",  # OSC 52: write the clipboard
    f"{ESC}]0;owned{BEL}",  # the window title
    f"{ESC}[2J{ESC}[H",  # clear the screen, cursor home
    f"{ESC}]8;;https://evil.example{ESC}\\click{ESC}]8;;{ESC}\\",  # a hyperlink
    f"{ESC}[31mred{ESC}[0m",  # CSI colour
    "\x9b2J\x9d0;c1 title\x9c",  # C1 CSI and OSC
    "\u202eevil\u202c",  # a right-to-left override
    "back\rspace\x08",
]
OPTIONS = [("slash", "[/]"), ("markup", "[bold red]Allow[/]"), ("lines", "ok\n  3) Fake option")]


class HostileAgent(acp.Agent):  # type: ignore[misc]
    """One prompt, one attack of each kind."""

    async def initialize(self, params: Any) -> Any:
        return acp.InitializeResponse(
            protocol_version=2,
            info=acp.Implementation(
                name="hostile", title=f"Hostile{ESC}]0;title{BEL}", version="1"
            ),
            capabilities=acp.AgentCapabilities(session=acp.SessionCapabilities()),
        )

    async def session_new(self, params: Any) -> Any:
        return acp.NewSessionResponse(session_id="s")

    async def session_prompt(self, params: Any) -> Any:
        await self.peer.session("s").user_message("u", content=params.prompt)
        task = asyncio.get_running_loop().create_task(self.play())
        self.task = task
        return acp.PromptResponse(message_id="u")

    async def play(self) -> None:
        updates = self.peer.session("s")
        await updates.state_update_running()
        for i, attack in enumerate(ATTACKS):
            await updates.agent_message_chunk(f"<{i}:{attack}>", "m")
        await updates.tool_call_update(
            "c", title=f"tool{ESC}]0;t{BEL}\nfake line", status="pending"
        )
        await updates.notice("warning", f"note{ESC}[2J", description="d\x9b")
        options = [
            acp.PermissionOption(option_id=i, name=n, kind=acp.PermissionOptionKind.ALLOW_ONCE)
            for i, n in OPTIONS
        ]
        answer = await self.peer.session_request_permission("s", f"Go{ESC}[2J?", options)
        outcome = answer.outcome.to_dict()
        said = f"got {outcome['outcome']} {outcome.get('optionId', '')}"
        await updates.agent_message_chunk(said, "m2")
        await updates.state_update_idle_end_turn()


if __name__ == "__main__":
    asyncio.run(acp.serve_agent(HostileAgent()))
