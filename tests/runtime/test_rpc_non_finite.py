"""Non-finite numbers are refused wherever they are in a message, and only they are (issue 35).

JSON has no infinity, but a number literal too large for a float parses to one. The connection
tells such lines from their bytes before it walks the parsed message; these tests check every
shape of literal that overflows (a long exponent, a long mantissa, both at the limit) in every
position (request params at any depth, notification params, a response's result), over real pipes,
and that literals that only look large are delivered exactly.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from rpc_peers import rpc, served

OVERFLOWING = [
    b"1e999",
    b"1E+999",
    b"-1e400",
    b"2e308",
    b"1.5e309",
    b"0.0001e313",
    b"1" + b"0" * 250 + b"e99",  # a two-digit exponent on a long mantissa
    b"-2" + b"0" * 209 + b".5e99",
    b"1" + b"0" * 320 + b".5",  # no exponent at all
    b"9" * 400 + b"e-80",  # a negative exponent does not bring it back
]

# (literal, the value it must arrive as)
LARGE_LOOKING = [
    (b"1e308", 1e308),
    (b"1.7976931348623157e308", 1.7976931348623157e308),
    (b"1e-999", 0.0),
    (b"-1E-400", -0.0),
    (b"1" + b"0" * 400, 10**400),  # an integer: exact, never a float
    (b"1" + b"0" * 200 + b"e90", 1e290),
    (b"12345678901234567890", 12345678901234567890),
]

POSITIONS = [
    b'{"n":%s}',
    b'{"deep":{"er":[1,2,{"n":[%s]}]}}',
    b"[%s]",
    b'{"text":"e999 and 1e999 as text","list":[0,%s]}',
]


@pytest.mark.parametrize("literal", OVERFLOWING)
@pytest.mark.parametrize("position", POSITIONS)
async def test_a_request_holding_infinity_is_a_parse_error(literal: bytes, position: bytes) -> None:
    async with served() as s:
        params = position % literal
        await s.raw.send(b'{"jsonrpc":"2.0","id":7,"method":"_ext/x","params":%s}\n' % params)
        reply = await s.raw.recv()
        assert reply["id"] == 7
        assert reply["error"]["code"] == rpc.PARSE_ERROR
        assert s.handler.extensions == []  # the handler never saw it
        await s.raw.assert_alive()


@pytest.mark.parametrize("literal", OVERFLOWING)
async def test_a_notification_holding_infinity_is_dropped_and_order_kept(literal: bytes) -> None:
    async with served() as s:
        lines = [
            b'{"jsonrpc":"2.0","method":"_ext/n","params":{"seq":1}}',
            b'{"jsonrpc":"2.0","method":"_ext/n","params":{"seq":2,"n":%s}}' % literal,
            b'{"jsonrpc":"2.0","method":"_ext/n","params":{"seq":3}}',
        ]
        await s.raw.send(b"".join(line + b"\n" for line in lines))
        await s.raw.expect_silence()  # a notification is never answered
        await s.raw.assert_alive()
        seen = [params["seq"] for kind, _, params in s.handler.extensions if kind != "request"]
        assert seen == [1, 3]


@pytest.mark.parametrize("literal", OVERFLOWING)
async def test_a_response_holding_infinity_fails_its_request(literal: bytes) -> None:
    async with served() as s:
        call = asyncio.create_task(s.connection.request("peer/x", {}, None))
        request = await s.raw.recv()
        await s.raw.send(
            b'{"jsonrpc":"2.0","id":%d,"result":{"v":[%s]}}\n' % (request["id"], literal)
        )
        with pytest.raises(rpc.RpcError) as info:
            await asyncio.wait_for(call, 5)
        assert info.value.code == rpc.PARSE_ERROR
        await s.raw.expect_silence()
        await s.raw.assert_alive()


@pytest.mark.parametrize(("literal", "value"), LARGE_LOOKING)
async def test_finite_numbers_that_look_large_arrive_exactly(literal: bytes, value: object) -> None:
    async with served() as s:
        await s.raw.send(
            b'{"jsonrpc":"2.0","id":8,"method":"_ext/x","params":{"n":%s,"t":"1e999"}}\n' % literal
        )
        reply = await s.raw.recv()
        assert reply["id"] == 8, reply
        assert s.handler.extensions == [("request", "_ext/x", {"n": value, "t": "1e999"})]
        # and what went back is the same number
        sent = json.loads(json.dumps(reply["result"]["params"]["n"]))
        assert sent == value
