"""One asyncio loop reads four zipc topics and serves a TCP socket, no thread per channel.

A publisher process writes to four topics; the loop awaits them with
zipc.aio (the event loop's add_reader on a WaitSet's readiness fd) while an
asyncio TCP echo server on 127.0.0.1 answers a client in the same loop.

    python examples/python/asyncio_topics.py
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import time
from typing import Dict, List

import zipc
import zipc.aio

TOPICS = 4
PER_TOPIC = 50


def publish(names: List[str]) -> None:
    pubs = [zipc.Topic.open(n).publisher() for n in names]
    for i in range(PER_TOPIC):
        for k, pub in enumerate(pubs):
            pub.publish(b"%d:%d" % (k, i), timeout=5)
        time.sleep(0.001)


async def read_topic(sub: zipc.Subscriber, counts: Dict[int, int], k: int) -> None:
    for _ in range(PER_TOPIC):
        msg = await zipc.aio.recv(sub, timeout=30)
        topic, _, seq = msg.partition(b":")
        assert int(topic) == k and int(seq) == counts[k]
        counts[k] += 1


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(await reader.readline())
    await writer.drain()
    writer.close()


async def main() -> None:
    names = [f"example-aio-{os.getpid()}-{k}" for k in range(TOPICS)]
    topics = [zipc.Topic.create(n) for n in names]
    subs = [t.subscribe() for t in topics]
    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    counts = {k: 0 for k in range(TOPICS)}
    publisher = mp.get_context("spawn").Process(target=publish, args=(names,))
    publisher.start()
    try:
        readers = [asyncio.create_task(read_topic(s, counts, k)) for k, s in enumerate(subs)]
        r, w = await asyncio.open_connection("127.0.0.1", port)
        w.write(b"hello over tcp\n")
        reply = await r.readline()
        w.close()
        await asyncio.gather(*readers)
        assert reply == b"hello over tcp\n"
        assert all(c == PER_TOPIC for c in counts.values()), counts
    finally:
        publisher.join(30)
        server.close()
        for s in subs:
            zipc.aio.release(s)
        for n in names:
            zipc.remove_segment(n)
    print(f"ok: {TOPICS} topics x {PER_TOPIC} messages and a TCP echo in one asyncio loop")


if __name__ == "__main__":
    asyncio.run(main())
