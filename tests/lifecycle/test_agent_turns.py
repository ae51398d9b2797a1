"""The runtime runs the turn (issue 31, requirements 1 and 6): an agent process whose only code is
its `respond` coroutine (`lifecycle_agent.py`), driven over real pipes by a raw JSON-RPC peer,
follows every MUST of the prompt lifecycle the runtime owns, in ACP v1 and v2 from the same code.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from wire_peer import WirePeer, prompt

PACKAGES = {1: "acp_v1", 2: "acp_v2_draft"}


@pytest.fixture(params=[1, 2], ids=["v1", "v2"])
async def peer(request: pytest.FixtureRequest) -> AsyncIterator[tuple[WirePeer, int, str]]:
    version: int = request.param
    started = await WirePeer.start(PACKAGES[version])
    try:
        yield started, version, await started.open_session(version)
    finally:
        await started.kill()


@pytest.fixture
async def v2() -> AsyncIterator[tuple[WirePeer, str]]:
    started = await WirePeer.start("acp_v2_draft")
    try:
        yield started, await started.open_session(2)
    finally:
        await started.kill()


def is_update(kind: str, **fields: Any) -> Any:
    def check(message: dict[str, Any]) -> bool:
        update = message.get("params", {}).get("update", {}) if message.get("method") else {}
        return bool(
            update.get("sessionUpdate") == kind
            and all(update.get(k) == v for k, v in fields.items())
        )

    return check


def idle(reason: str) -> Any:
    return is_update("state_update", state="idle", stopReason=reason)


async def turn_end(p: WirePeer, version: int, request_id: int) -> tuple[int, str]:
    """Where the turn of `request_id` ended and its stop reason (v2: idle; v1: the answer)."""
    answer = await p.answer(request_id)
    if version == 1:
        return p.seen.index(answer), answer["result"]["stopReason"]
    start = await p.wait_for(is_update("user_message", messageId=answer["result"]["messageId"]))
    end = await p.wait_for(
        lambda m: is_update("state_update", state="idle")(m)
        and "stopReason" in m["params"]["update"],
        start,
    )
    return end, p.seen[end]["params"]["update"]["stopReason"]


async def test_v2_acceptance_is_insertion_then_running_output_and_idle(
    v2: tuple[WirePeer, str],
) -> None:
    p, sid = v2
    request_id = await p.request("session/prompt", prompt(sid, "hello there"))
    answer = await p.answer(request_id)
    message_id = answer["result"]["messageId"]
    echo = await p.wait_for(is_update("user_message", messageId=message_id))
    assert p.seen[echo]["params"]["update"]["content"] == [{"type": "text", "text": "hello there"}]
    running = await p.wait_for(is_update("state_update", state="running"), echo)
    end = await p.wait_for(idle("end_turn"), running)
    turn = p.updates(running + 1, end)
    said = [u for u in turn if u["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(u["content"]["text"] for u in said) == "hello there "
    assert len({u["messageId"] for u in said}) == 1 and said[0]["messageId"] != message_id
    assert all("messageId" in u for u in turn if u["sessionUpdate"].endswith("_chunk"))
    assert not any(u["sessionUpdate"] == "state_update" for u in turn)


async def test_v2_identical_prompts_get_distinct_ids_and_run_one_at_a_time(
    v2: tuple[WirePeer, str],
) -> None:
    p, sid = v2
    first = await p.request("session/prompt", prompt(sid, "same slow"))
    second = await p.request("session/prompt", prompt(sid, "same slow"))
    ids = [(await p.answer(r))["result"]["messageId"] for r in (first, second)]
    assert ids[0] != ids[1]
    one = await p.wait_for(is_update("user_message", messageId=ids[0]))
    one_end = await p.wait_for(idle("end_turn"), one)
    two = await p.wait_for(is_update("user_message", messageId=ids[1]))
    assert two > one_end  # the second is inserted only when the first turn is over
    # ... and answered only then: acceptance means insertion, not receipt or queueing
    assert p.seen.index(await p.answer(second)) > one_end
    await p.wait_for(idle("end_turn"), two)


async def test_v1_prompts_of_a_session_run_one_at_a_time(peer: tuple[WirePeer, int, str]) -> None:
    p, version, sid = peer
    first = await p.request("session/prompt", prompt(sid, "one slow"))
    second = await p.request("session/prompt", prompt(sid, "two slow"))
    end_one, reason_one = await turn_end(p, version, first)
    end_two, reason_two = await turn_end(p, version, second)
    assert (reason_one, reason_two) == ("end_turn", "end_turn")
    chunks = [
        u["content"]["text"] for u in p.updates() if u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert chunks == ["one ", "slow ", "two ", "slow "]  # never interleaved
    assert end_one < end_two


async def test_session_cancel_ends_the_turn_cancelled_and_nothing_follows(
    peer: tuple[WirePeer, int, str],
) -> None:
    p, version, sid = peer
    request_id = await p.request("session/prompt", prompt(sid, "hang"))
    await p.wait_for(is_update("agent_message_chunk"))
    await p.notify("session/cancel", {"sessionId": sid})
    end, reason = await turn_end(p, version, request_id)
    assert reason == "cancelled"
    assert p.updates(end + 1) == []  # nothing of the turn after its end
    # the session takes the next prompt normally
    _, reason = await turn_end(p, version, await p.request("session/prompt", prompt(sid, "again")))
    assert reason == "end_turn"


async def test_v1_cancel_request_of_the_prompt_answers_cancelled() -> None:
    p = await WirePeer.start("acp_v1")
    try:
        sid = await p.open_session(1)
        request_id = await p.request("session/prompt", prompt(sid, "hang"))
        await p.wait_for(is_update("agent_message_chunk"))
        await p.notify("$/cancel_request", {"requestId": request_id})
        assert (await p.answer(request_id))["result"] == {"stopReason": "cancelled"}
    finally:
        await p.kill()


async def test_v2_a_queued_prompt_is_refused_by_cancel_and_never_inserted(
    v2: tuple[WirePeer, str],
) -> None:
    p, sid = v2
    hanging = await p.request("session/prompt", prompt(sid, "hang"))
    queued = await p.request("session/prompt", prompt(sid, "queued"))
    withdrawn = await p.request("session/prompt", prompt(sid, "withdrawn"))
    await p.wait_for(is_update("agent_message_chunk"))
    await p.notify("$/cancel_request", {"requestId": withdrawn})
    assert (await p.answer(withdrawn))["error"]["code"] == -32800
    await p.notify("session/cancel", {"sessionId": sid})
    assert (await p.answer(queued))["error"]["code"] == -32800
    await turn_end(p, 2, hanging)
    texts = [u["content"][0]["text"] for u in p.updates() if u["sessionUpdate"] == "user_message"]
    assert texts == ["hang"]


async def test_v2_session_close_cancels_and_the_idle_comes_first(v2: tuple[WirePeer, str]) -> None:
    p, sid = v2
    request_id = await p.request("session/prompt", prompt(sid, "hang"))
    await p.wait_for(is_update("agent_message_chunk"))
    closed = p.seen.index(await p.call("session/close", {"sessionId": sid}))
    end, reason = await turn_end(p, 2, request_id)
    assert reason == "cancelled" and end < closed
    again = await p.call("session/prompt", prompt(sid, "after close"))
    assert again["error"]["code"] == -32002


async def test_an_exception_ends_the_turn_with_error_and_its_text_stays_inside(
    peer: tuple[WirePeer, int, str],
) -> None:
    p, version, sid = peer
    request_id = await p.request("session/prompt", prompt(sid, "fail"))
    answer = await p.answer(request_id)
    if version == 1:  # v1 has no `error` stop reason: a JSON-RPC error, without the text
        assert answer["error"] == {"code": -32603, "message": "Internal error"}
        end = p.seen.index(answer)
    else:
        end, reason = await turn_end(p, 2, request_id)
        assert reason == "error"
    calls = [u for u in p.updates(0, end) if u.get("toolCallId")]
    assert calls[-1]["status"] == "failed"  # the open tool call is failed before the end
    status, stderr = await p.close()
    assert status == 0 and b"secret failure text" in stderr
    assert all("secret" not in str(message) for message in p.seen)


async def test_cancel_during_a_pending_permission_request(peer: tuple[WirePeer, int, str]) -> None:
    p, version, sid = peer
    p.permission = None  # the client does not answer by itself
    request_id = await p.request("session/prompt", prompt(sid, "permission please"))
    asked = p.seen[await p.wait_for(lambda m: m.get("method") == "session/request_permission")]
    await p.notify("session/cancel", {"sessionId": sid})
    if version == 2:  # v2 withdraws the request; the tool call ends cancelled before the idle
        await p.wait_for(
            lambda m: m.get("method") == "$/cancel_request"
            and m["params"]["requestId"] == asked["id"]
        )
    else:  # v1: the client answers its pending permission requests `cancelled`
        await p.answer_permission(asked["id"], "cancelled")
    end, reason = await turn_end(p, version, request_id)
    assert reason == "cancelled"
    call = [u for u in p.updates(0, end) if u.get("toolCallId")][-1]
    # v2 ends the open call `cancelled`; v1's client marks the calls of a turn it cancels itself
    assert call["status"] == ("cancelled" if version == 2 else "pending")
    if version == 2:
        states = [u["state"] for u in p.updates() if u["sessionUpdate"] == "state_update"]
        assert states == ["running", "requires_action", "idle"]


async def test_permission_granted_or_refused(peer: tuple[WirePeer, int, str]) -> None:
    p, version, sid = peer
    _, reason = await turn_end(
        p, version, await p.request("session/prompt", prompt(sid, "permission"))
    )
    assert reason == "end_turn"
    p.permission = "reject"
    _, reason = await turn_end(
        p, version, await p.request("session/prompt", prompt(sid, "permission refuse"))
    )
    assert reason == "refusal"  # the stop reason `respond` returned
