"""The checker: walks a transcript's messages in order and reports every rule of `rules` broken.

Works on the plain JSON of each message, not on parsed models: a transcript worth checking may
be malformed in exactly the ways the rules describe (a missing `messageId`, an empty title), and
a model would reject it before the rule could say why. State is kept per session ID: the
foreground state, the prompt awaiting its `running`, the IDs touched by the current work, the
compactions seen, and whether a `session/resume` (or `session/load`) is replaying history, during
which updates describe the past and the live-work rules do not apply.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from acp_codegen.transcript.read import Entry
from acp_codegen.transcript.rules import (
    ACTIVE_STATES,
    KNOWN_COMPACTION_STATUSES,
    KNOWN_STOP_REASONS,
    MESSAGE_UPDATES,
    REPLAY_REQUESTS,
    TERMINAL_COMPACTION_STATUSES,
    USER_MESSAGE_UPDATES,
    WORK_UPDATES,
    Finding,
)


@dataclass
class _Prompt:
    line: int
    content: Any
    response_line: int | None = None
    message_id: str | None = None


@dataclass
class _Compaction:
    status: str
    terminal_line: int | None = None


@dataclass
class _Session:
    state: str = "idle"
    awaiting_running: int | None = None  # line of a prompt whose work has not reported running
    reported_missing_running: bool = False
    turn_ids: set[tuple[str, str]] = field(default_factory=set)
    cancelled_ids: set[tuple[str, str]] = field(default_factory=set)
    cancelled_line: int = 0
    replaying: int = 0
    compactions: dict[str, _Compaction] = field(default_factory=dict)
    prompts: list[_Prompt] = field(default_factory=list)
    returned: dict[str, int] = field(default_factory=dict)  # prompt messageId -> response line
    user_updates: list[tuple[int, str, str, Any]] = field(
        default_factory=list
    )  # line, id, kind, content


def _id_key(value: Any) -> tuple[bool, Any] | None:
    return (
        (isinstance(value, str), value)
        if isinstance(value, (str, int)) and not isinstance(value, bool)
        else None
    )


def _text(value: Any) -> str:
    return json.dumps(value)


class Checker:
    """Feed entries in order with `add`, then `finish` for the findings."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.sessions: dict[str, _Session] = {}
        self.pending: dict[tuple[bool, Any], tuple[str, Any, int]] = (
            {}
        )  # client requests: method, params, line

    def _session(self, params: Any) -> tuple[str, _Session] | None:
        sid = params.get("sessionId") if isinstance(params, dict) else None
        if not isinstance(sid, str):
            return None
        return sid, self.sessions.setdefault(sid, _Session())

    def _find(self, line: int, rule: str, message: str, session: str | None) -> None:
        self.findings.append(Finding(line, rule, message, session, "agent"))

    def add(self, entry: Entry) -> None:
        """Take the next message of the transcript."""
        message, line = entry.message, entry.line
        method, key = message.get("method"), _id_key(message.get("id"))
        if entry.sender == "client" and isinstance(method, str):
            if key is not None:
                self.pending[key] = (method, message.get("params"), line)
            self._client(method, message.get("params"), line)
        elif entry.sender == "agent" and method == "session/update":
            found = self._session(message.get("params"))
            update = message["params"].get("update") if found else None
            if found and isinstance(update, dict):
                self._update(found[0], found[1], update, line)
        elif entry.sender == "agent" and method is None and key is not None and key in self.pending:
            self._response(*self.pending.pop(key), message, line)

    def _client(self, method: str, params: Any, line: int) -> None:
        found = self._session(params)
        if found is None:
            return
        _, s = found
        if method == "session/prompt":
            s.prompts.append(_Prompt(line, params.get("prompt")))
            if s.state not in ACTIVE_STATES and s.awaiting_running is None:
                s.awaiting_running, s.reported_missing_running = line, False
        elif method in REPLAY_REQUESTS:
            s.replaying += 1

    def _response(
        self, method: str, params: Any, request_line: int, message: dict[str, Any], line: int
    ) -> None:
        found = self._session(params)
        if found is None:
            return
        sid, s = found
        if method in REPLAY_REQUESTS:
            s.replaying = max(0, s.replaying - 1)
            return
        if method != "session/prompt":
            return
        prompt = next((p for p in s.prompts if p.line == request_line), None)
        if (
            "result" not in message
        ):  # rejected before insertion: no foreground work was started by it
            if s.awaiting_running == request_line:
                s.awaiting_running = None
            return
        result = message["result"]
        message_id = result.get("messageId") if isinstance(result, dict) else None
        if not isinstance(message_id, str) or not message_id:
            got = (
                f"got {_text(message_id)}"
                if isinstance(result, dict) and "messageId" in result
                else "missing"
            )
            self._find(
                line,
                "prompt-response-message-id",
                (
                    f"the response to the session/prompt of line {request_line} has no messageId "
                    f"({got})"
                ),
                sid,
            )
            return
        if message_id in s.returned:
            self._find(
                line,
                "prompt-message-id-reused",
                f"messageId {_text(message_id)} was already returned for another prompt on line "
                f"{s.returned[message_id]}",
                sid,
            )
        s.returned.setdefault(message_id, line)
        if prompt is not None:
            prompt.response_line, prompt.message_id = line, message_id

    def _update(self, sid: str, s: _Session, update: dict[str, Any], line: int) -> None:
        kind = update.get("sessionUpdate")
        if not isinstance(kind, str):
            return
        if kind in MESSAGE_UPDATES and not isinstance(update.get("messageId"), str):
            self._find(line, "message-id-missing", f"{kind} without a messageId", sid)
        if (
            kind in USER_MESSAGE_UPDATES
            and isinstance(update.get("messageId"), str)
            and not s.replaying
        ):
            s.user_updates.append((line, update["messageId"], kind, update.get("content")))
        if kind == "state_update":
            self._state(sid, s, update, line)
        elif kind == "notice":
            title = update.get("title")
            if not isinstance(title, str) or not title:
                self._find(line, "notice-empty-title", f"notice title is {_text(title)}", sid)
        elif kind == "compaction_update":
            self._compaction(sid, s, update, line)
        elif kind == "compaction_summary_chunk":
            self._compaction_chunk(sid, s, update, line)
        elif kind == "subagent_update" and isinstance(update.get("state"), dict):
            self._stop_reason(sid, update["state"], line, "subagent_update state")
        if kind in WORK_UPDATES and not s.replaying:
            self._work(sid, s, kind, update, line)

    def _work(self, sid: str, s: _Session, kind: str, update: dict[str, Any], line: int) -> None:
        entity, id_field = WORK_UPDATES[kind]
        ident = update.get(id_field)
        key = (entity, ident) if isinstance(ident, str) else None
        if key is not None and key in s.cancelled_ids:
            self._find(
                line,
                "update-after-cancelled-idle",
                f"{kind} for {id_field} {_text(ident)} of the work cancelled by the idle on line "
                f"{s.cancelled_line}",
                sid,
            )
        if s.awaiting_running is not None and not s.reported_missing_running:
            s.reported_missing_running = True
            self._find(
                line,
                "work-without-running",
                f"{kind} for the prompt of line {s.awaiting_running} before any running state",
                sid,
            )
        if key is not None and (s.state in ACTIVE_STATES or s.awaiting_running is not None):
            s.turn_ids.add(key)

    def _stop_reason(self, sid: str, update: dict[str, Any], line: int, where: str) -> str | None:
        stop = update.get("stopReason")
        if not isinstance(stop, str):
            return None
        if stop not in KNOWN_STOP_REASONS and not stop.startswith("_"):
            self._find(
                line,
                "custom-stop-reason",
                f"{where}: stop reason {_text(stop)} is neither known nor `_`-prefixed",
                sid,
            )
        return stop

    def _state(self, sid: str, s: _Session, update: dict[str, Any], line: int) -> None:
        state = update.get("state")
        if not isinstance(state, str):
            return
        if state in ACTIVE_STATES:
            s.awaiting_running = None
            s.cancelled_ids = set()  # new work: IDs may be reused by it
        elif state == "idle":
            stop = self._stop_reason(sid, update, line, "idle")
            if not s.replaying:
                if s.state in ACTIVE_STATES and stop is None:
                    self._find(
                        line,
                        "idle-without-stop-reason",
                        f"idle after {s.state} ends foreground work but has no stopReason",
                        sid,
                    )
                if (
                    s.awaiting_running is not None
                    and stop is not None
                    and not s.reported_missing_running
                ):
                    self._find(
                        line,
                        "work-without-running",
                        (
                            f"the prompt of line {s.awaiting_running} ended ({stop}) without a "
                            "running state"
                        ),
                        sid,
                    )
                if stop == "cancelled":
                    s.cancelled_ids, s.cancelled_line = s.turn_ids, line
            if stop is not None or s.state in ACTIVE_STATES:
                s.turn_ids, s.awaiting_running = set(), None
        s.state = state

    def _compaction(self, sid: str, s: _Session, update: dict[str, Any], line: int) -> None:
        cid, status = update.get("compactionId"), update.get("status")
        if not isinstance(cid, str) or not isinstance(status, str):
            return
        if status not in KNOWN_COMPACTION_STATUSES and not status.startswith("_"):
            self._find(
                line,
                "custom-compaction-status",
                (
                    f"compaction {_text(cid)}: status {_text(status)} is neither known nor "
                    "`_`-prefixed"
                ),
                sid,
            )
        summary = update.get("summary")
        if isinstance(summary, list) and summary and status != "completed":
            self._find(
                line,
                "compaction-summary-status",
                f"compaction {_text(cid)}: a non-empty summary with status {_text(status)}",
                sid,
            )
        if update.get("error") is not None and status != "failed":
            self._find(
                line,
                "compaction-error-status",
                f"compaction {_text(cid)}: an error with status {_text(status)}",
                sid,
            )
        track = s.compactions.get(cid)
        if track is None:
            track = s.compactions[cid] = _Compaction(status)
        elif track.terminal_line is not None and not s.replaying:
            if status in TERMINAL_COMPACTION_STATUSES:
                self._find(
                    line,
                    "compaction-terminal-twice",
                    f"compaction {_text(cid)}: a second terminal status ({status}) after "
                    f"{track.status} on line {track.terminal_line}",
                    sid,
                )
            elif status == "in_progress":
                self._find(
                    line,
                    "compaction-id-reused",
                    (
                        f"compaction {_text(cid)} starts again after it ended on line "
                        f"{track.terminal_line}"
                    ),
                    sid,
                )
                track.terminal_line = None
        track.status = status
        if status in TERMINAL_COMPACTION_STATUSES and track.terminal_line is None:
            track.terminal_line = line

    def _compaction_chunk(self, sid: str, s: _Session, update: dict[str, Any], line: int) -> None:
        cid = update.get("compactionId")
        if not isinstance(cid, str):
            return
        track = s.compactions.get(cid)
        if track is None:
            self._find(
                line,
                "compaction-chunk-before-start",
                f"compaction_summary_chunk for {_text(cid)} before its first compaction_update",
                sid,
            )
        elif track.status in TERMINAL_COMPACTION_STATUSES:
            self._find(
                line,
                "compaction-chunk-after-terminal",
                f"compaction_summary_chunk for {_text(cid)} after its terminal status "
                f"({track.status}) on line {track.terminal_line}",
                sid,
            )

    def finish(self) -> list[Finding]:
        """Run the end-of-transcript rules and return every finding, in line order."""
        for sid, s in self.sessions.items():
            self._user_messages(sid, s)
        return sorted(self.findings)

    def _user_messages(self, sid: str, s: _Session) -> None:
        # Updates may arrive before or after the response, so the association is judged at the end.
        reported = {message_id for _, message_id, _, _ in s.user_updates}
        for prompt in s.prompts:
            if (
                prompt.message_id is None
                or prompt.response_line is None
                or prompt.message_id in reported
            ):
                continue
            stray = next(
                (
                    u
                    for u in s.user_updates
                    if u[0] > prompt.line
                    and u[1] not in s.returned
                    and _same_content(u[2], u[3], prompt.content)
                ),
                None,
            )
            if stray is not None:
                self._find(
                    stray[0],
                    "user-message-id-mismatch",
                    f"{stray[2]} for the prompt of line {prompt.line} uses messageId "
                    f"{_text(stray[1])}, but the response on line {prompt.response_line} returned "
                    f"{_text(prompt.message_id)}",
                    sid,
                )
            else:
                self._find(
                    prompt.response_line,
                    "user-message-missing",
                    f"no user_message update reports messageId {_text(prompt.message_id)} "
                    f"(the prompt of line {prompt.line})",
                    sid,
                )


def _same_content(kind: str, content: Any, prompt: Any) -> bool:
    if not isinstance(prompt, list):
        return False
    return content == prompt if kind == "user_message" else content in prompt


def check(entries: Iterable[Entry]) -> list[Finding]:
    """Every finding of a transcript, in line order."""
    checker = Checker()
    for entry in entries:
        checker.add(entry)
    return checker.finish()
