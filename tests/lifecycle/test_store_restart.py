"""A session survives its agent process (issue 35, requirement 4): an agent keeping its sessions
in `SqliteHistory` streams a turn over a real pipe and is killed with SIGKILL; a new agent process
on the same file answers `session/resume` of that session with its history (each entity once,
with its original ids), and its next prompt is answered. Without a store the same resume is
`-32002` (resource not found)."""

from __future__ import annotations

from pathlib import Path

from wire_peer import WirePeer, prompt

PACKAGE = "acp_v2_draft"


async def first_life(db: str) -> tuple[str, str, list[dict[str, object]]]:
    """Open a session, run one turn, then kill the agent: its id, the message id, its updates."""
    agent = await WirePeer.start(PACKAGE, history_db=db)
    try:
        session_id = await agent.open_session(2)
        answer = await agent.call("session/prompt", prompt(session_id, "remember these words"))
        await agent.wait_for(lambda m: m.get("params", {}).get("update", {}).get("stopReason"))
        return session_id, answer["result"]["messageId"], agent.updates()
    finally:
        await agent.kill()  # SIGKILL: no shutdown, no flush


async def resume(agent: WirePeer, session_id: str) -> dict[str, object]:
    params = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": {}}
    await agent.call("initialize", params)
    return await agent.call(
        "session/resume", {"sessionId": session_id, "cwd": "/tmp", "replayFrom": {"type": "start"}}
    )


async def test_a_session_is_resumed_by_a_new_agent_process_on_the_same_file(tmp_path: Path) -> None:
    db = str(tmp_path / "sessions.db")
    session_id, message_id, live = await first_life(db)
    reply = next(u for u in live if u["sessionUpdate"] == "agent_message_chunk")
    agent = await WirePeer.start(PACKAGE, history_db=db)
    try:
        answer = await resume(agent, session_id)
        assert "result" in answer, answer
        replayed = agent.updates()
        kinds = [u["sessionUpdate"] for u in replayed]
        assert kinds == [
            "user_message",
            "agent_thought",
            "agent_message",
            "plan_update",
            "state_update",
        ]
        assert replayed[0]["messageId"] == message_id
        assert replayed[2] == {
            "sessionUpdate": "agent_message",
            "messageId": reply["messageId"],
            "content": [{"type": "text", "text": w + " "} for w in "remember these words".split()],
        }
        assert replayed[-1] == {"sessionUpdate": "state_update", "state": "idle"}
        again = await agent.call("session/prompt", prompt(session_id, "and more"))
        assert "messageId" in again["result"]
        listed = await agent.call("session/list", {})
        assert [s["sessionId"] for s in listed["result"]["sessions"]] == [session_id]
        assert listed["result"]["sessions"][0]["title"] == "remember these words"
    finally:
        await agent.kill()


async def test_without_a_store_a_new_process_does_not_know_the_session(tmp_path: Path) -> None:
    agent = await WirePeer.start(PACKAGE)
    try:
        answer = await resume(agent, "sess_unknown")
        assert answer["error"]["code"] == -32002
    finally:
        await agent.kill()
