"""End of input (issue 31, requirement 2): a prompt followed by EOF on the agent's stdin. Every
prompt received is answered, each turn finishes (or, past `Limits.turn_timeout`, is cancelled)
and ends with its final `idle` (v2) or answer (v1) before the process exits, over real pipes."""

from __future__ import annotations

import pytest
from test_agent_turns import PACKAGES, is_update, turn_end
from wire_peer import WirePeer, prompt


@pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])
async def test_prompts_then_eof_every_turn_finishes_before_exit(version: int) -> None:
    p = await WirePeer.start(PACKAGES[version])
    try:
        sid = await p.open_session(version)
        first = await p.request("session/prompt", prompt(sid, "first slow prompt"))
        second = await p.request("session/prompt", prompt(sid, "second slow"))
        status, _ = await p.close()  # EOF at once: nothing inserted yet
        assert status == 0
        assert [(await turn_end(p, version, r))[1] for r in (first, second)] == ["end_turn"] * 2
        chunks = [
            u["content"]["text"] for u in p.updates() if u["sessionUpdate"] == "agent_message_chunk"
        ]
        assert chunks == ["first ", "slow ", "prompt ", "second ", "slow "]
    finally:
        await p.kill()


@pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])
async def test_a_turn_past_the_limit_is_cancelled_and_reported_before_exit(version: int) -> None:
    p = await WirePeer.start(PACKAGES[version], turn_timeout=0.5)
    try:
        sid = await p.open_session(version)
        request_id = await p.request("session/prompt", prompt(sid, "hang"))
        await p.wait_for(is_update("agent_message_chunk"))
        status, stderr = await p.close()
        assert status == 0 and b"Traceback" not in stderr
        end, reason = await turn_end(p, version, request_id)
        assert reason == "cancelled" and end == len(p.seen) - 1  # the last thing it sent
    finally:
        await p.kill()


async def test_eof_during_a_permission_request_ends_the_turn_cancelled() -> None:
    p = await WirePeer.start("acp_v2_draft")
    try:
        sid = await p.open_session(2)
        p.permission = None
        request_id = await p.request("session/prompt", prompt(sid, "permission"))
        await p.wait_for(lambda m: m.get("method") == "session/request_permission")
        status, _ = await p.close()
        assert status == 0
        _, reason = await turn_end(p, 2, request_id)
        assert reason == "cancelled"  # the answer cannot come any more
    finally:
        await p.kill()
