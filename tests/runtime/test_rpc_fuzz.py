"""Malformed frames, each followed by a valid request that must still succeed."""

from __future__ import annotations

import random

from rpc_peers import rpc, served

PARSE, INVALID, NOT_FOUND, PARAMS, INTERNAL = -32700, -32600, -32601, -32602, -32603
LIMIT = 1 << 20


def _random_garbage(count: int) -> list[tuple[bytes, int | None]]:
    rng = random.Random(20240601)
    frames = []
    for _ in range(count):
        data = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300)))
        frames.append((data.replace(b"\n", b"\x00"), PARSE))
    return frames


FRAMES: list[tuple[bytes, int | None]] = [
    # not JSON at all
    (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}', PARSE),  # truncated
    (b'{"jsonrpc":"2.0","id":1,"method":"echo",}', PARSE),  # trailing comma
    (b"{'jsonrpc':'2.0','id':1,'method':'echo'}", PARSE),  # single quotes
    (b"NaN", PARSE),
    (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"\xc3"}}', PARSE),  # bad UTF-8
    (b"[" * 5000, PARSE),  # nesting beyond the parser's depth limit
    (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}}', PARSE),  # BOM
    (b"\x00\x01\x02\x03", PARSE),
    # JSON, but not a message
    (b"[]", INVALID),
    (b'[{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}}]', INVALID),  # batch
    (b"null", INVALID),
    (b"true", INVALID),
    (b"{}", INVALID),
    (b'{"jsonrpc":"2.0"}', INVALID),
    (b'{"jsonrpc":"2.0","id":1}', INVALID),
    (b'{"jsonrpc":2.0,"id":1,"method":"echo","params":{"text":"x"}}', INVALID),
    (b'{"jsonrpc":"2.0","id":[1],"method":"echo","params":{"text":"x"}}', INVALID),
    (b'{"jsonrpc":"2.0","id":null,"method":"echo","params":{"text":"x"}}', INVALID),
    (b'{"jsonrpc":"2.0","id":1,"method":null}', INVALID),
    (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":5}', INVALID),
    (b'{"jsonrpc":"2.0","method":"note","params":"bad"}', INVALID),
    (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"' + b"h" * (3 * LIMIT), INVALID),
    (b'{"jsonrpc":"2.0","id":1,"method":"note","params":{"sessionId":"s","seq":1}}', INVALID),
    # well-formed requests the server cannot serve
    (b'{"jsonrpc":"2.0","id":1,"method":"unknown/method"}', NOT_FOUND),
    (b'{"jsonrpc":"2.0","id":1,"method":"_ext/unimplemented","params":{}}', NOT_FOUND),
    (b'{"jsonrpc":"2.0","id":1,"method":"missing","params":{"text":"x"}}', NOT_FOUND),
    (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":5}}', PARAMS),
    (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":["x"]}', PARAMS),
    (b'{"jsonrpc":"2.0","id":1,"method":"slow","params":{"delay":"soon"}}', PARAMS),
    (b'{"jsonrpc":"2.0","id":1,"method":"fail","params":{"kind":"boom"}}', INTERNAL),
    # nothing to answer
    (b'{"jsonrpc":"2.0","method":"no/such/notification"}', None),
    (b'{"jsonrpc":"2.0","method":"note","params":{"seq":"x"}}', None),
    (b'{"jsonrpc":"2.0","id":1,"result":"for nobody"}', None),
    # broken responses are never answered (an error with a null id would fail the peer's request)
    (b'{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}', None),
    (b'{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}', None),
    (b'{"jsonrpc":"2.0","id":1,"result":Infinity}', None),
    (b'{"jsonrpc":"2.0","id":1,"result":1e999}', None),
    # non-finite numbers in a request: a parse error, answered with the request's id
    (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x","n":1e999}}', PARSE),
    (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x","n":-1E400}}', PARSE),
    (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x","n":NaN}}', PARSE),
    (b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', None),
    (b"   \t ", None),
    *_random_garbage(8),
]


async def test_malformed_frames_then_valid_requests() -> None:
    async with served(max_line_bytes=LIMIT) as s:
        for index, (frame, expected) in enumerate(FRAMES):
            await s.raw.send(frame + b"\n")
            if expected is not None:
                reply = await s.raw.recv()
                assert reply["jsonrpc"] == "2.0", (index, frame[:80])
                assert reply["error"]["code"] == expected, (index, frame[:80], reply)
                assert isinstance(reply["error"]["message"], str)
                assert reply["id"] in (None, 1), (index, reply)
            # the next message must be the answer to this valid request, nothing else
            await s.raw.assert_alive()
        assert not s.connection.closed


async def test_malformed_frames_in_one_write() -> None:
    """The same frames glued into a single write: framing must split them identically."""
    async with served(max_line_bytes=LIMIT) as s:
        expected = [code for _, code in FRAMES if code is not None]
        # distinct ids, or requests still in flight would make later ones duplicates
        frames = [f.replace(b'"id":1,', b'"id":%d,' % (i + 1)) for i, (f, _) in enumerate(FRAMES)]
        await s.raw.send(b"".join(frame + b"\n" for frame in frames))
        codes = [(await s.raw.recv())["error"]["code"] for _ in expected]
        # answers from handler tasks (-32601 via NotImplementedError, -32603) may come later
        assert sorted(codes) == sorted(expected)
        await s.raw.assert_alive()
        assert rpc.PARSE_ERROR == PARSE
