"""The agent command `probe client` gives a client: copies its stdin to the probe's Unix socket
and the socket to its stdout, byte for byte, until either side closes.

Standard library only and no package imports beyond it, so the client starts it quickly.
"""

from __future__ import annotations

import os
import socket
import sys
import threading


def _pump_in(conn: socket.socket) -> None:
    while True:
        data = os.read(0, 65536)
        if not data:
            break
        conn.sendall(data)
    try:
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def main(argv: list[str]) -> int:
    """Relay stdio to the socket named by `argv[0]`."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(argv[0])
    threading.Thread(target=_pump_in, args=(conn,), daemon=True).start()
    while True:
        data = conn.recv(65536)
        if not data:
            break
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
