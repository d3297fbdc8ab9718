"""A Python RPC server (handler on several threads) and a client process.

    python examples/python/rpc_echo.py
"""

from __future__ import annotations

import os
import subprocess
import sys

import zipc


def handler(request: bytes) -> bytes:
    return request[::-1]


def client(name: str) -> None:
    c = zipc.RpcClient.connect(name, timeout=5.0)
    assert c.call(b"hello", timeout=5.0) == b"olleh"
    tickets = [c.call_async(b"abc%d" % i) for i in range(4)]  # pipelined
    replies = [t.wait(5.0) for t in tickets]
    assert replies == [(b"abc%d" % i)[::-1] for i in range(4)], replies
    print("client ok")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--client":
        client(sys.argv[2])
        return
    name = f"example-rpc-{os.getpid()}"
    with zipc.RpcServer.create(name, max_clients=4) as server:
        server.start(handler, threads=2)
        out = subprocess.run([sys.executable, __file__, "--client", name], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "client ok" in out.stdout, out.stderr
        print(f"ok: served {server.served} calls")


if __name__ == "__main__":
    main()
