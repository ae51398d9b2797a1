"""Every builder, for each package, through a real pipe: the agent (a child process) calls each
session-handle builder and each client-request builder with the fields of a schema instance, the
client calls each agent-request builder; the other end checks that exactly that value arrived.
Cases come from the IR (`acp_codegen.render.dispatch`), the values from the schema."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

import pytest
from bindings_support import (
    HERE,
    PACKAGES,
    PYTHON,
    context,
    fanouts,
    instance_for,
    package,
    python_env,
    request_builders,
    update_builders,
    without_extras,
)
from pydantic import ValidationError


def _recorder(acp: Any) -> Any:
    """A client that keeps every session update and answers every request with an echo error."""

    class Recorder(acp.Client):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            self.updates: list[Any] = []
            self.variants: list[str] = []

        async def session_update(self, params: Any) -> None:
            self.updates.append(params)
            await super().session_update(params)

        async def extension_request(self, method: str, params: Any) -> Any:
            if method == "_client/echo":
                return {"echo": params}
            return await super().extension_request(method, params)

    def echo(wire: str) -> Any:
        async def handler(self: Any, params: Any) -> Any:
            raise acp.RpcError(
                -32099,
                "echo",
                {"method": wire, "params": None if params is None else params.to_dict()},
            )

        return handler

    for wire, spec in acp.CLIENT_METHODS.items():
        if spec.kind == "request":
            setattr(Recorder, spec.handler, echo(wire))
    for case in fanouts(acp.__name__, "client"):
        for c in case.cases:

            async def variant(self: Any, params: Any, update: Any, _tag: str = c.tag) -> None:
                self.variants.append(_tag)

            setattr(Recorder, c.handler, variant)
    return Recorder()


async def _next_update(recorder: Any, count: int) -> Any:
    for _ in range(400):
        if len(recorder.updates) > count:
            return recorder.updates[count]
        await asyncio.sleep(0.005)
    raise AssertionError("no update arrived")


def _sent(b: Any, parsed: Any) -> dict[str, Any]:
    """What a builder sends for a parsed value's fields: its wire form less unknown top-level
    fields (not parameters) and optional fields set to null (`None` means omitted)."""
    optional = {p.name for p in b.params if not p.required}
    data = without_extras(parsed)
    for py, info in type(parsed).model_fields.items():
        if py in optional and getattr(parsed, py) is None:
            data.pop(info.alias or py, None)
    return data


def _cases(builders: Any, pkg: str) -> list[tuple[Any, Any, dict[str, Any]]]:
    acp = package(pkg)
    out = []
    for b in builders:
        cls = getattr(acp, b.model)
        value = instance_for(pkg, cls)
        assert value is not None, f"{pkg}: no schema instance of {b.model} for builder {b.name}"
        out.append((b, cls, value))
    return out


@pytest.mark.parametrize(
    "pkg",
    # the draft in the README's test command; the stable subset and v1 in `nox -s slow`
    [pytest.param(p, marks=() if p == "acp_v2_draft" else pytest.mark.slow) for p in PACKAGES],
)
async def test_every_builder_round_trips_through_a_pipe(pkg: str) -> None:
    acp = package(pkg)
    recorder = _recorder(acp)
    handle = context(pkg).handle
    async with acp.spawn_agent(
        PYTHON,
        str(HERE / "builder_peer.py"),
        pkg,
        client=recorder,
        env=python_env(),
        stderr=subprocess.PIPE,
    ) as agent:
        checked = 0
        # agent -> client: the session handle, one builder per session/update variant
        for b, cls, wire in _cases(update_builders(pkg), pkg):
            count = len(recorder.updates)
            params = [p.name for p in b.params]
            await agent.ext_request(
                "_test/emit",
                {
                    "model": b.model,
                    "wire": wire,
                    "params": params,
                    "builder": b.name,
                    "session": "sess-1",
                },
            )
            arrived = await _next_update(recorder, count)
            assert arrived.session_id == "sess-1"
            assert type(arrived.update) is cls, (b.name, type(arrived.update))
            assert arrived.update.to_dict() == _sent(b, cls.from_dict(wire)), b.name
            checked += 1
        assert checked == len(update_builders(pkg)) and (checked > 10 if handle else True)
        # agent -> client: every request / notification builder of the client peer
        # the peers' builders are keyed by handler name (a wire name can be a request and a notification)
        client_specs = {
            spec.handler: spec
            for spec in (*acp.CLIENT_REQUESTS.values(), *acp.CLIENT_NOTIFICATIONS.values())
        }
        agent_specs = {
            spec.handler: spec
            for spec in (*acp.AGENT_REQUESTS.values(), *acp.AGENT_NOTIFICATIONS.values())
        }
        for b, cls, wire in _cases(request_builders(pkg, "client").values(), pkg):
            handler = next(h for h, m in request_builders(pkg, "client").items() if m is b)
            method, kind = client_specs[handler].method, client_specs[handler].kind
            answer = await agent.ext_request(
                "_test/call_client",
                {
                    "model": b.model,
                    "wire": wire,
                    "params": [p.name for p in b.params],
                    "handler": b.name,
                },
            )
            if kind == "request":
                assert answer["error"] == {
                    "method": method,
                    "params": _sent(b, cls.from_dict(wire)),
                }, method
            checked += 1
        # client -> agent: every request / notification builder of the agent peer
        for b, cls, wire in _cases(request_builders(pkg, "agent").values(), pkg):
            handler = next(h for h, m in request_builders(pkg, "agent").items() if m is b)
            method = agent_specs[handler].method
            parsed = cls.from_dict(wire)
            kwargs = {
                p.name: getattr(parsed, p.name)
                for p in b.params
                if p.name in parsed.model_fields_set
            }
            expected = {"method": method, "params": _sent(b, parsed)}
            if agent_specs[handler].kind == "request":
                with pytest.raises(acp.RpcError) as caught:
                    await getattr(agent, b.name)(**kwargs)
                assert caught.value.data == expected, method
                with pytest.raises(acp.RpcError) as caught:
                    await getattr(agent, b.name)(parsed)  # the params model itself
                assert caught.value.data["params"] == parsed.to_dict()
            else:
                await getattr(agent, b.name)(**kwargs)
                seen = await agent.ext_request("_test/seen", None)
                assert seen[-1] == expected, method
            checked += 1
        assert checked >= 20


async def test_text_parameters_take_a_plain_str() -> None:
    acp = package("acp_v2_draft")
    recorder = _recorder(acp)
    async with acp.spawn_agent(
        PYTHON, str(HERE / "builder_peer.py"), "acp_v2_draft", client=recorder, env=python_env()
    ) as agent:
        await agent.ext_request("_test/text", {"session": "s", "extra": {"message_id": "m7"}})
        update = (await _next_update(recorder, 0)).update
        assert update.to_dict() == {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m7",
            "content": {"type": "text", "text": "plain text"},
        }
        assert recorder.variants == ["agent_message_chunk"]
        for prompt in (
            "hi",
            ["hi", acp.ContentBlockText(text="there")],
            (acp.ContentBlockText(text="x"),),
        ):
            with pytest.raises(acp.RpcError) as caught:
                await agent.prompt("s", prompt)
            blocks = [prompt] if isinstance(prompt, str) else list(prompt)
            assert caught.value.data["params"]["prompt"] == [
                {"type": "text", "text": b} if isinstance(b, str) else b.to_dict() for b in blocks
            ]
        with pytest.raises(ValidationError) as bad:
            await agent.prompt("s", "hi", meta=5)  # strict: a wrong type never reaches the wire
        assert bad.value.errors()[0]["loc"] == ("meta",)
        with pytest.raises(TypeError, match="message_idd"):
            await agent.prompt("s", "hi", message_idd="m")  # a misspelled parameter
