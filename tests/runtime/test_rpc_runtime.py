"""Behaviour of the generated JSON-RPC runtime (acp_codegen/runtime/_rpc.py) over real pipes."""

from __future__ import annotations

import asyncio
import json
import logging
import tracemalloc
from typing import Any

import pytest
from rpc_peers import RawPeer, pair, rpc, served
from rpc_testkit import TIMEOUT, EchoParams, EchoResult, NoteParams, SlowParams, pipe

# ----------------------------------------------------------------------------- happy paths


async def test_request_response_between_two_connections() -> None:
    async with pair() as p:
        result = await p.client.request("echo", EchoParams(text="hi", shout=True), EchoResult)
        assert result == EchoResult(text="HI")
        raw = await p.client.request("echo", {"text": "plain"}, None)
        assert raw == {"text": "plain"}
        assert await p.client.request("count", None, int) == 1


async def test_bidirectional_call_inside_a_handler() -> None:
    async with pair() as p:
        result = await p.client.request("ask_back", {"text": "abc"}, EchoResult)
        assert result.text == "client said cba"


async def test_concurrent_requests_complete_out_of_order() -> None:
    async with pair() as p:
        results = await asyncio.gather(
            p.client.request("slow", SlowParams(delay=0.3, text="a"), EchoResult),
            p.client.request("slow", SlowParams(delay=0.1, text="b"), EchoResult),
            p.client.request("echo", EchoParams(text="c"), EchoResult),
        )
        assert [r.text for r in results] == ["a", "b", "c"]
        # sent a, b, c in that order; finishing in reverse proves they overlapped
        assert p.handler.finished == ["c", "b", "a"]


async def test_notifications_are_ordered_per_session_and_concurrent_across() -> None:
    async with pair() as p:
        for seq in range(6):
            # later notifications are faster: without per-key ordering they would overtake
            await p.client.notify(
                "note", NoteParams(session_id="s1", seq=seq, delay=0.06 - seq * 0.01)
            )
            await p.client.notify(
                "note", {"sessionId": "s2", "seq": seq, "delay": 0.06 - seq * 0.01}
            )
        await p.handler.wait_notes(12)
        for session in ("s1", "s2"):
            assert [s for k, s in p.handler.notes if k == session] == list(range(6))
        assert p.handler.max_active_notes == 2  # one worker per session, both at once


async def test_notification_handler_errors_do_not_kill_the_connection() -> None:
    async with pair() as p:
        await p.client.notify("bad_note", {"sessionId": "s", "seq": 1})
        await p.client.notify("note", {"sessionId": "s", "seq": 2})
        await p.handler.wait_notes(2)
        assert p.handler.notes == [("s", -1), ("s", 2)]
        assert await p.client.request("echo", {"text": "ok"}, EchoResult) == EchoResult(text="ok")


async def test_wire_format_is_compact_aliased_and_excludes_unset() -> None:
    async with served() as s:
        await s.raw.send(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"a b"}}\n')
        line = await s.raw.recv_line()
        assert line == b'{"jsonrpc":"2.0","id":1,"result":{"text":"a b"}}\n'
        call = asyncio.create_task(
            s.connection.request("anything", NoteParams(session_id="x", seq=3), None)
        )
        line = await s.raw.recv_line()
        # sessionId by alias, the unset `delay` left out, compact separators, first id is 0
        assert line == (
            b'{"jsonrpc":"2.0","id":0,"method":"anything","params":{"sessionId":"x","seq":3}}\n'
        )
        await s.raw.send_json({"jsonrpc": "2.0", "id": 0, "result": [1, 2]})
        assert await asyncio.wait_for(call, TIMEOUT) == [1, 2]


async def test_blank_lines_crlf_and_string_ids() -> None:
    async with served() as s:
        await s.raw.send(b"\n\r\n   \n")
        await s.raw.send(b'{"jsonrpc":"2.0","id":"abc","method":"echo","params":{"text":"x"}}\r\n')
        assert await s.raw.recv() == {"jsonrpc": "2.0", "id": "abc", "result": {"text": "x"}}
        await s.raw.assert_alive()


# ----------------------------------------------------------------------------- error codes


async def test_parse_errors_for_garbage_and_binary() -> None:
    async with served() as s:
        for frame in (b"this is not json\n", b"\xff\xfe\x00\x01\x80garbage\n", b'{"a":\n'):
            await s.raw.send(frame)
            reply = await s.raw.recv()
            assert reply["id"] is None and reply["error"]["code"] == rpc.PARSE_ERROR, reply
            await s.raw.assert_alive()


@pytest.mark.parametrize(
    ("frame", "reply_id"),
    [
        (b"[]", None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}}]', None),
        (b'"just a string"', None),
        (b"42", None),
        (b'{"jsonrpc":"2.0","id":7}', 7),
        (b'{"jsonrpc":"2.0","params":{}}', None),
        (b'{"jsonrpc":"2.0","id":null,"method":"echo","params":{"text":"x"}}', None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"echo","params":{"text":"x"}}', None),
        (b'{"jsonrpc":"2.0","id":true,"method":"echo","params":{"text":"x"}}', None),
        (b'{"jsonrpc":"2.0","id":{},"method":"echo","params":{"text":"x"}}', None),
        (b'{"jsonrpc":"1.0","id":3,"method":"echo","params":{"text":"x"}}', 3),
        (b'{"id":4,"method":"echo","params":{"text":"x"}}', 4),
        (b'{"jsonrpc":"2.0","id":5,"method":12}', 5),
        (b'{"jsonrpc":"2.0","id":6,"method":"echo","params":"text"}', 6),
        (b'{"jsonrpc":"2.0","id":8,"method":"echo","params":null}', 8),
        (b'{"jsonrpc":"2.0","id":9,"method":"note","params":{"sessionId":"s","seq":1}}', 9),
        (b'{"jsonrpc":"2.0","id":10,"method":"$/cancel_request","params":{"requestId":1}}', 10),
    ],
)
async def test_invalid_requests(frame: bytes, reply_id: Any) -> None:
    async with served() as s:
        await s.raw.send(frame + b"\n")
        reply = await s.raw.recv()
        assert reply["id"] == reply_id
        assert reply["error"]["code"] == rpc.INVALID_REQUEST, reply
        await s.raw.assert_alive()


async def test_duplicate_in_flight_id_is_rejected() -> None:
    async with served() as s:
        slow = {"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {"delay": 0.2, "text": "a"}}
        await s.raw.send_json(slow)
        await s.raw.send_json({**slow, "params": {"delay": 0, "text": "b"}})
        first = await s.raw.recv()
        assert first["error"]["code"] == rpc.INVALID_REQUEST
        assert await s.raw.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"text": "a"}}


async def test_oversized_line_is_rejected_with_bounded_memory() -> None:
    limit = 1 << 20
    async with served(max_line_bytes=limit) as s:
        block = b"x" * (1 << 20)
        tracemalloc.start()
        try:
            await s.raw.send(b'{"jsonrpc":"2.0","id":77,"method":"echo","params":{"text":"')
            reply = None
            for _ in range(60):
                await s.raw.send(block)
            await s.raw.send(b'"}}\n')
            reply = await s.raw.recv()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert reply["id"] == 77  # recovered from the start of the line
        assert reply["error"]["code"] == rpc.INVALID_REQUEST
        assert "too large" in reply["error"]["message"]
        assert str(limit) in reply["error"]["message"]
        assert peak < 12 * limit, peak  # the 60 MB line was never buffered whole
        await s.raw.assert_alive()


async def test_oversized_line_variants() -> None:
    async with served(max_line_bytes=1000) as s:
        big = "y" * 5000
        # id after the huge params: cannot be recovered -> null
        await s.raw.send_json(
            {"jsonrpc": "2.0", "method": "echo", "params": {"text": big}, "id": 3}
        )
        reply = await s.raw.recv()
        assert reply["id"] is None and reply["error"]["code"] == rpc.INVALID_REQUEST
        # an oversized id-like key nested in params is not taken for the id
        await s.raw.send_json(
            {"jsonrpc": "2.0", "method": "echo", "params": {"id": 5, "text": big}, "id": 6}
        )
        reply = await s.raw.recv()
        assert reply["id"] is None
        # oversized last line without newline at EOF is covered by the EOF tests; a line of
        # exactly the limit is fine
        frame = {"jsonrpc": "2.0", "id": 9, "method": "echo", "params": {"text": ""}}
        pad = 1000 - len(json.dumps(frame, separators=(",", ":")))
        frame["params"]["text"] = "z" * pad
        await s.raw.send(json.dumps(frame, separators=(",", ":")).encode() + b"\n")
        assert (await s.raw.recv())["result"]["text"] == "z" * pad
        await s.raw.assert_alive()


async def test_oversized_response_fails_the_pending_request() -> None:
    async with served(max_line_bytes=1000) as s:
        call = asyncio.create_task(s.connection.request("anything", {"x": 1}, None))
        request = await s.raw.recv()
        await s.raw.send_json({"jsonrpc": "2.0", "id": request["id"], "result": "r" * 5000})
        with pytest.raises(rpc.RpcError) as info:
            await asyncio.wait_for(call, TIMEOUT)
        assert info.value.code == rpc.INVALID_REQUEST
        assert "too large" in info.value.message
        await s.raw.expect_silence()  # a response is never answered
        await s.raw.assert_alive()


async def test_method_not_found() -> None:
    async with served() as s:
        for method in ("nope", "missing", "_ext/unimplemented"):
            reply = await s.raw.call(method, {"text": "x"})
            assert reply["error"]["code"] == rpc.METHOD_NOT_FOUND, reply
            assert reply["error"]["data"] == {"method": method}
        reply = await s.raw.call("fail", {"kind": "notimpl"})
        assert reply["error"] == {
            "code": rpc.METHOD_NOT_FOUND,
            "message": "Method not found",
            "data": {"method": "fail"},
        }
        await s.raw.assert_alive()


async def test_extension_methods_without_hooks() -> None:
    async with served(handler=object()) as s:
        reply = await s.raw.call("_ext/thing", {"a": 1})
        assert reply["error"]["code"] == rpc.METHOD_NOT_FOUND
        await s.raw.send_json({"jsonrpc": "2.0", "method": "_ext/note", "params": {}})
        await s.raw.expect_silence()


async def test_invalid_params_carry_details() -> None:
    async with served() as s:
        reply = await s.raw.call("echo", {"txt": "x", "shout": "loud"})
        error = reply["error"]
        assert error["code"] == rpc.INVALID_PARAMS and error["message"] == "Invalid params"
        by_field = {tuple(e["loc"]): e["type"] for e in error["data"]}
        assert by_field == {("text",): "missing", ("shout",): "bool_parsing"}
        assert all(set(e) == {"loc", "msg", "type"} for e in error["data"])
        reply = await s.raw.call("echo", [1, 2])
        assert reply["error"]["code"] == rpc.INVALID_PARAMS
        reply = await s.raw.call("echo")  # no params at all: validated as {}
        assert reply["error"]["code"] == rpc.INVALID_PARAMS
        await s.raw.assert_alive()


async def test_handler_exceptions() -> None:
    async with served() as s:
        reply = await s.raw.call("fail", {"kind": "boom"})
        # the exception text stays in our log: the peer learns only that it failed
        assert reply["error"] == {"code": rpc.INTERNAL_ERROR, "message": "Internal error"}
        reply = await s.raw.call("fail", {"kind": "rpc"})
        assert reply["error"] == {
            "code": -32042,
            "message": "custom failure",
            "data": {"why": "because"},
        }
        reply = await s.raw.call("fail", {"kind": "unserializable"})
        assert reply["error"]["code"] == rpc.INTERNAL_ERROR
        reply = await s.raw.call("weird", {"x": -1})  # validator raising a non-ValueError
        assert reply["error"] == {"code": rpc.INTERNAL_ERROR, "message": "Internal error"}
        reply = await s.raw.call("weird", {"x": -2})  # again, on the method's cached route
        assert reply["error"] == {"code": rpc.INTERNAL_ERROR, "message": "Internal error"}
        await s.raw.assert_alive()


async def test_notification_kind_mismatch_and_bad_params_are_dropped() -> None:
    async with served() as s:
        for message in (
            {"jsonrpc": "2.0", "method": "echo", "params": {"text": "x"}},  # request w/o id
            {"jsonrpc": "2.0", "method": "note", "params": {"sessionId": 1}},  # invalid params
            {"jsonrpc": "2.0", "method": "unknown/notification"},
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 12345}},
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": None}},
            {"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "peer complains"}},
            {"jsonrpc": "2.0", "id": 424242, "result": "unknown id"},
        ):
            await s.raw.send_json(message)
        await s.raw.expect_silence()
        await s.raw.assert_alive()
        assert s.handler.finished == ["alive"] and s.handler.notes == []


async def test_bad_params_of_a_notification_seen_before_drop_only_it_in_its_turn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A typed notification seen before is validated by its worker, just before its handler runs:
    # invalid params still drop that one only, and the ones around it keep their order.
    async with served() as s:
        with caplog.at_level(logging.WARNING):
            for seq in (1, "two", 3, 4):
                params = {"sessionId": "s", "seq": seq, "delay": 0.01 if seq == 1 else 0}
                await s.raw.send_json({"jsonrpc": "2.0", "method": "note", "params": params})
            await s.handler.wait_notes(3)
        await s.raw.expect_silence()
        await s.raw.assert_alive()
        assert s.handler.notes == [("s", 1), ("s", 3), ("s", 4)]
        assert "invalid params for notification note dropped" in caplog.text


# ----------------------------------------------------------------------------- cancellation


async def test_peer_cancel_request_answers_request_cancelled() -> None:
    async with served() as s:
        await s.raw.send_json(
            {"jsonrpc": "2.0", "id": "long", "method": "slow", "params": {"delay": 30, "text": "L"}}
        )
        await asyncio.sleep(0.02)
        assert s.handler.started == ["L"]
        await s.raw.send_json(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "long"}}
        )
        reply = await s.raw.recv()
        assert reply == {
            "jsonrpc": "2.0",
            "id": "long",
            "error": {"code": rpc.REQUEST_CANCELLED, "message": "Request cancelled"},
        }
        assert s.handler.cancelled == ["L"]
        await s.raw.assert_alive()


async def test_cancel_before_the_handler_started() -> None:
    async with served() as s:
        # both frames in one write: the task is cancelled before its first step
        await s.raw.send(
            b'{"jsonrpc":"2.0","id":1,"method":"slow","params":{"delay":30,"text":"never"}}\n'
            b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}\n'
        )
        reply = await s.raw.recv()
        assert reply["id"] == 1 and reply["error"]["code"] == rpc.REQUEST_CANCELLED
        assert s.handler.started == []
        await s.raw.assert_alive()


async def test_cancelling_an_outbound_request_notifies_the_peer() -> None:
    async with served() as s:
        call = asyncio.create_task(s.connection.request("peer/slow", {"x": 1}, None))
        request = await s.raw.recv()
        assert request["id"] == 0 and request["method"] == "peer/slow"
        call.cancel()
        cancel = await s.raw.recv()
        assert cancel == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": 0},
        }
        with pytest.raises(asyncio.CancelledError):
            await call
        # the late answer is ignored; the connection keeps working
        await s.raw.send_json(
            {"jsonrpc": "2.0", "id": 0, "error": {"code": -32800, "message": "x"}}
        )
        await s.raw.assert_alive()


async def test_cancel_between_two_connections() -> None:
    async with pair() as p:
        call = asyncio.create_task(p.client.request("slow", {"delay": 30, "text": "c"}, EchoResult))
        await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.sleep(0.05)
        assert p.handler.cancelled == ["c"]
        assert await p.client.request("echo", {"text": "ok"}, EchoResult) == EchoResult(text="ok")


# ----------------------------------------------------------------------------- responses


async def test_error_responses_and_result_validation() -> None:
    async with served() as s:
        call = asyncio.create_task(s.connection.request("peer/x", None, EchoResult))
        request = await s.raw.recv()
        assert "params" not in request
        await s.raw.send_json(
            {
                "jsonrpc": "2.0",
                "id": request["id"],
                "error": {"code": -32001, "message": "no", "data": [1]},
            }
        )
        with pytest.raises(rpc.RpcError) as info:
            await asyncio.wait_for(call, TIMEOUT)
        assert (info.value.code, info.value.message, info.value.data) == (-32001, "no", [1])

        call = asyncio.create_task(s.connection.request("peer/x", None, EchoResult))
        request = await s.raw.recv()
        await s.raw.send_json({"jsonrpc": "2.0", "id": request["id"], "result": {"wrong": 1}})
        with pytest.raises(rpc.ResultValidationError) as failure:
            await asyncio.wait_for(call, TIMEOUT)
        assert isinstance(failure.value, ValueError)
        assert failure.value.method == "peer/x"

        call = asyncio.create_task(s.connection.request("peer/x", None, EchoResult))
        request = await s.raw.recv()
        # malformed response with our id: fails the call; a response is never answered
        await s.raw.send_json({"jsonrpc": "2.0", "id": request["id"], "result": 1, "error": {}})
        with pytest.raises(rpc.RpcError) as info:
            await asyncio.wait_for(call, TIMEOUT)
        assert info.value.code == rpc.INVALID_REQUEST and "Invalid Response" in info.value.message
        await s.raw.expect_silence()
        await s.raw.assert_alive()


# ----------------------------------------------------------------------------- extensions


async def test_extension_methods_are_routed_to_the_hooks() -> None:
    async with served() as s:
        reply = await s.raw.call("_ext/thing", {"any": ["thing"]})
        assert reply["result"] == {"method": "_ext/thing", "params": {"any": ["thing"]}}
        await s.raw.send_json({"jsonrpc": "2.0", "method": "_ext/note", "params": [1, 2]})
        await s.raw.assert_alive()
        assert s.handler.extensions == [
            ("request", "_ext/thing", {"any": ["thing"]}),
            ("notification", "_ext/note", [1, 2]),
        ]


# ----------------------------------------------------------------------------- EOF and close


async def test_eof_answers_requests_still_running_then_cancels_past_the_time_limit() -> None:
    inbound_reader, inbound_writer = await pipe()
    outbound_reader, outbound_writer = await pipe()
    from rpc_testkit import build_server

    handler, table = build_server(rpc)
    limits = rpc.Limits(shutdown_timeout=0.5)
    connection = rpc.Connection(handler, table, inbound_reader, outbound_writer, limits=limits)
    run_task = asyncio.create_task(connection.run())
    raw = RawPeer(outbound_reader, inbound_writer)
    slow = {"jsonrpc": "2.0", "method": "slow"}
    await raw.send_json({**slow, "id": 1, "params": {"delay": 30, "text": "too slow"}})
    await raw.send_json({**slow, "id": 2, "params": {"delay": 0.2, "text": "in time"}})
    pending = asyncio.create_task(connection.request("peer/never", {}, None))
    assert (await raw.recv())["method"] == "peer/never"
    assert handler.started == ["too slow", "in time"]
    inbound_writer.close()  # EOF for the connection
    # our request fails at once: no answer can come any more
    with pytest.raises(ConnectionError, match="ended its output"):
        await asyncio.wait_for(pending, TIMEOUT)
    assert await raw.recv() == {"jsonrpc": "2.0", "id": 2, "result": {"text": "in time"}}
    assert await raw.recv() == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": rpc.REQUEST_CANCELLED, "message": "Request cancelled"},
    }
    await asyncio.wait_for(run_task, TIMEOUT)  # run() returns normally
    assert handler.cancelled == ["too slow"] and handler.finished == ["in time"]
    assert connection.closed
    assert await outbound_reader.read() == b""  # then the writer is closed
    with pytest.raises(ConnectionError):
        await connection.request("peer/x", {}, None)
    with pytest.raises(ConnectionError):
        await connection.notify("peer/x", {})


async def test_close_stops_a_running_connection() -> None:
    async with served() as s:
        pending = asyncio.create_task(s.connection.request("peer/never", {}, None))
        await s.raw.recv()
        await s.connection.close()
        with pytest.raises(ConnectionError):
            await pending
        assert s.run_task.done()
        await s.connection.close()  # idempotent


async def test_async_with_and_trailing_line_without_newline() -> None:
    inbound_reader, inbound_writer = await pipe()
    outbound_reader, outbound_writer = await pipe()
    from rpc_testkit import build_server

    handler, table = build_server(rpc)
    async with rpc.Connection(handler, table, inbound_reader, outbound_writer) as connection:
        raw = RawPeer(outbound_reader, inbound_writer)
        await raw.assert_alive()
        # a last line without newline is still parsed (a request there would be cancelled by
        # the EOF right away, a parse error is answered from the read loop itself)
        await raw.send(b'{"jsonrpc":"2.0","id":1,"method":')
        inbound_writer.close()
        assert (await raw.recv())["error"]["code"] == rpc.PARSE_ERROR
        await asyncio.sleep(0.05)
        assert connection.closed


async def test_close_right_after_enter() -> None:
    inbound_reader, inbound_writer = await pipe()
    outbound_reader, outbound_writer = await pipe()
    connection = rpc.Connection(object(), {}, inbound_reader, outbound_writer)
    async with connection:
        pass
    assert connection.closed
    assert await outbound_reader.read() == b""
    inbound_writer.close()


def test_module_surface() -> None:
    assert (rpc.PARSE_ERROR, rpc.INVALID_REQUEST, rpc.METHOD_NOT_FOUND) == (-32700, -32600, -32601)
    assert (rpc.INVALID_PARAMS, rpc.INTERNAL_ERROR, rpc.REQUEST_CANCELLED) == (
        -32602,
        -32603,
        -32800,
    )
    spec = rpc.MethodSpec("a", "request", EchoParams, EchoResult, "a")
    with pytest.raises(AttributeError):
        spec.method = "b"
    error = rpc.RpcError(1, "m")
    assert error.to_dict() == {"code": 1, "message": "m"} and error.data is None
    assert rpc.default_order_key("x", {"sessionId": "s"}) == "s"
    assert rpc.default_order_key("x", {"sessionId": 1}) == rpc.default_order_key("x", [])
    assert rpc.to_jsonable(NoteParams(sessionId="s", seq=1)) == {"sessionId": "s", "seq": 1}
    assert rpc.to_jsonable([EchoResult(text="a")], list[EchoResult]) == [{"text": "a"}]
    assert rpc.Connection.from_streams is not None
    for name in rpc.__all__:
        assert hasattr(rpc, name), name


def test_a_method_spec_looks_a_named_type_up_in_its_module_when_first_read() -> None:
    """A generated table names its types (`models=`); the spec reads like one built with them."""
    import types

    module = types.ModuleType("fake_models")
    lazy = rpc.MethodSpec("a", "request", "EchoParams", "EchoResult", "a", models=module)
    module.EchoParams, module.EchoResult = EchoParams, EchoResult
    eager = rpc.MethodSpec("a", "request", EchoParams, EchoResult, "a")
    assert lazy.params is EchoParams and lazy.result is EchoResult
    del module.EchoParams  # looked up once: the spec keeps the class
    assert lazy.params is EchoParams
    assert lazy == eager and hash(lazy) == hash(eager) and repr(lazy) == repr(eager)
    assert (
        rpc.MethodSpec("a", "request", "EchoParams", None, "a").params == "EchoParams"
    )  # no module
    with pytest.raises(AttributeError):
        lazy.handler = "b"
    with pytest.raises(AttributeError):
        _ = rpc.MethodSpec("a", "request", "Missing", None, "a", models=module).params


def test_a_method_spec_copies_pickles_and_matches_like_the_frozen_dataclass_it_was() -> None:
    import copy
    import pickle
    import types

    module = types.ModuleType("fake_models")
    module.EchoParams, module.EchoResult = EchoParams, EchoResult
    for fresh in (True, False):  # names not looked up yet, and looked up
        spec = rpc.MethodSpec(
            "a", "request", "EchoParams", "EchoResult", "a", cancelled={"x": 1}, models=module
        )
        if not fresh:
            _ = spec.params
        for other in (copy.copy(spec), copy.deepcopy(spec), pickle.loads(pickle.dumps(spec))):
            assert other == spec and other.params is EchoParams and other.cancelled == {"x": 1}
    match spec:
        case rpc.MethodSpec("a", "request", params, result, "a"):
            assert (params, result) == (EchoParams, EchoResult)
        case _:
            raise AssertionError("no match")
    changed = spec.__replace__(handler="b")
    assert changed.handler == "b" and changed.params is EchoParams and changed.method == "a"


def test_a_request_spec_can_also_dispatch_a_notification_of_its_name() -> None:
    """`with_notification`: one name a side handles both as a request and as a notification (the
    generated `*_METHODS` tables build it at import, so no type is looked up)."""
    import copy
    import pickle
    import types

    module = types.ModuleType("fake_models")
    request = rpc.MethodSpec("m", "request", "EchoParams", "EchoResult", "m", models=module)
    note = rpc.MethodSpec("m", "notification", "NoteParams", None, "m_notification", models=module)
    both = request.with_notification(note)
    assert both.notification is note and request.notification is None
    module.EchoParams, module.EchoResult, module.NoteParams = (
        EchoParams,
        EchoResult,
        NoteParams,
    )  # not read before
    assert both.params is EchoParams and both.notification.params is NoteParams
    assert both != request and both == request.with_notification(note)
    for other in (copy.copy(both), pickle.loads(pickle.dumps(both))):
        assert other == both and other.notification == note
    assert both.__replace__(handler="x").notification == note
