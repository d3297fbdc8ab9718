#!/usr/bin/env python3
"""Wake-up latency in Python: a paced publisher process stamps each message
(time.perf_counter_ns, one clock for both processes on Linux); the receiver
takes the difference on arrival. Rows, alternating in repetitions:

* zipc blocking  - ``sub.recv()`` in a plain loop (the baseline);
* zipc asyncio   - ``await zipc.aio.recv(sub)`` (WaitSet readiness fd in the loop's epoll);
* asyncio socket - ``await loop.sock_recv`` on a Unix socketpair (asyncio's own IPC).

    python bench/studies/wakeup.py [--reps 3] [--n 2000] [--gap-us 500]

Figures are only meaningful on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import multiprocessing.synchronize
import os
import socket
import statistics
import struct
import time
from typing import Callable, Dict, List

import zipc
import zipc.aio

CTX = mp.get_context("fork")
WARMUP = 100


def _pace(gap_ns: int, send: Callable[[bytes], None], n: int) -> None:
    # The sender sleeps between messages, so the receiver is asleep too when
    # each one is sent: every message measures one wake-up, not a backlog.
    for i in range(n + WARMUP):
        time.sleep(gap_ns / 1e9)
        send(struct.pack("<QQ", time.perf_counter_ns(), i))


def _topic_publisher(name: str, gap_ns: int, n: int, ready: "mp.synchronize.Event") -> None:
    pub = zipc.Topic.open(name).publisher()
    ready.wait(10)
    _pace(gap_ns, lambda b: pub.publish(b, timeout=5), n)


def _socket_sender(sock: socket.socket, gap_ns: int, n: int, ready: "mp.synchronize.Event") -> None:
    ready.wait(10)
    _pace(gap_ns, sock.sendall, n)


def _stats(lat: List[int]) -> Dict[str, float]:
    lat = sorted(lat[WARMUP:])
    pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] / 1000.0  # noqa: E731
    return {"p50_us": pick(0.5), "p99_us": pick(0.99), "p999_us": pick(0.999)}


def zipc_row(n: int, gap_ns: int, use_asyncio: bool) -> Dict[str, float]:
    name = f"bench-wakeup-{os.getpid()}"
    zipc.remove_segment(name)
    # The block strategy: the receiver sleeps in the kernel like asyncio's
    # epoll does (adaptive would spin first, which a loaded host punishes).
    topic = zipc.Topic.create(name, capacity_bytes=1 << 20, max_message_size=64, wait=zipc.WaitStrategy.block)
    sub = topic.subscribe()
    ready = CTX.Event()
    p = CTX.Process(target=_topic_publisher, args=(name, gap_ns, n, ready))
    p.start()
    lat: List[int] = []
    try:
        if use_asyncio:

            async def run() -> None:
                ready.set()
                for _ in range(n + WARMUP):
                    msg = await zipc.aio.recv(sub, timeout=10)
                    lat.append(time.perf_counter_ns() - struct.unpack_from("<Q", msg)[0])

            asyncio.run(run())
            zipc.aio.release(sub)
        else:
            ready.set()
            for _ in range(n + WARMUP):
                msg = sub.recv(timeout=10)
                lat.append(time.perf_counter_ns() - struct.unpack_from("<Q", msg)[0])
    finally:
        p.join(30)
        topic.detach()
        zipc.remove_segment(name)
    return _stats(lat)


def socket_row(n: int, gap_ns: int) -> Dict[str, float]:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ready = CTX.Event()
    p = CTX.Process(target=_socket_sender, args=(a, gap_ns, n, ready))
    p.start()
    lat: List[int] = []

    async def run() -> None:
        loop = asyncio.get_running_loop()
        b.setblocking(False)
        ready.set()
        for _ in range(n + WARMUP):
            msg = await loop.sock_recv(b, 64)
            lat.append(time.perf_counter_ns() - struct.unpack_from("<Q", msg)[0])

    try:
        asyncio.run(run())
    finally:
        p.join(30)
        a.close()
        b.close()
    return _stats(lat)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--gap-us", type=int, default=500)
    args = ap.parse_args()
    gap_ns = args.gap_us * 1000
    rows: Dict[str, Callable[[], Dict[str, float]]] = {
        "zipc blocking recv": lambda: zipc_row(args.n, gap_ns, False),
        "zipc asyncio (zipc.aio.recv)": lambda: zipc_row(args.n, gap_ns, True),
        "asyncio Unix socket (sock_recv)": lambda: socket_row(args.n, gap_ns),
    }
    runs: Dict[str, List[Dict[str, float]]] = {k: [] for k in rows}
    for _ in range(args.reps):
        for k, fn in rows.items():
            runs[k].append(fn())
    base = statistics.median(r["p50_us"] for r in runs["zipc blocking recv"])
    print(f"wake-up latency, {args.n} messages every {args.gap_us} us, median of {args.reps} alternating reps")
    print("| receiver | p50 us | p99 us | p99.9 us | p50 vs blocking | p50 spread |")
    print("|---|---|---|---|---|---|")
    for k, rs in runs.items():
        med = {m: statistics.median(r[m] for r in rs) for m in ("p50_us", "p99_us", "p999_us")}
        spread = f"{min(r['p50_us'] for r in rs):.1f}-{max(r['p50_us'] for r in rs):.1f}"
        print(f"| {k} | {med['p50_us']:.1f} | {med['p99_us']:.1f} | {med['p999_us']:.1f} | "
              f"{med['p50_us'] / base:.2f}x | {spread} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
