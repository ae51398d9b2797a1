"""The stdio MCP server that the conductor's bridge gives an agent without ACP MCP support.

    python mcp_shim.py SOCKET SERVER_ID

It connects to the conductor's bridge socket, names the ACP MCP server it stands for (one JSON
line, `{"serverId": ...}`), then copies MCP lines both ways: the agent's stdin to the socket, the
socket to the agent's stdout. The conductor turns each MCP request into an `mcp/message` request to
the component that provides the server. Standard library only, and run as a file (not `-m`), so
it starts whatever environment the agent gives its MCP servers.
"""

from __future__ import annotations

import json
import socket
import sys
import threading


def _copy_stdin(connection: socket.socket) -> None:
    try:
        for line in sys.stdin.buffer:
            connection.sendall(line if line.endswith(b"\n") else line + b"\n")
    except OSError:
        pass
    finally:
        try:
            connection.shutdown(socket.SHUT_WR)  # EOF for the bridge: the agent is done
        except OSError:
            pass


def main(argv: list[str]) -> int:
    """Relay MCP between this process's stdio and the bridge socket `argv[1]`."""
    if len(argv) != 3:
        print("usage: mcp_shim.py SOCKET SERVER_ID", file=sys.stderr)
        return 2
    path, server_id = argv[1], argv[2]
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
    except OSError as exc:
        print(f"mcp_shim: cannot reach the conductor's bridge at {path}: {exc}", file=sys.stderr)
        return 1
    connection.sendall(json.dumps({"serverId": server_id}).encode() + b"\n")
    threading.Thread(target=_copy_stdin, args=(connection,), daemon=True).start()
    out = sys.stdout.buffer
    while chunk := connection.recv(65536):
        out.write(chunk)
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
