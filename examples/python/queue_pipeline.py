"""A producer and a consumer process on one zipc Queue.

The producer writes half its messages with the copy API and half through
zero-copy loans; the consumer iterates until the queue is closed.

    python examples/python/queue_pipeline.py
"""

from __future__ import annotations

import multiprocessing as mp
import os

import zipc

COUNT = 10_000


def consume(name: str, out: "mp.Queue[int]") -> None:
    with zipc.Queue.open(name, role=zipc.Role.consumer) as q:
        total = 0
        for msg in q:  # stops when the producer closes the queue (after draining it)
            total += int.from_bytes(msg[:4], "little")
        out.put(total)


def main() -> None:
    name = f"example-queue-{os.getpid()}"
    with zipc.Queue.create(name, block_size=64, block_count=256) as q:
        results: "mp.Queue[int]" = mp.Queue()
        consumer = mp.Process(target=consume, args=(name, results))
        consumer.start()
        for i in range(COUNT):
            if i % 2:
                q.send(i.to_bytes(4, "little"), timeout=5.0)
            else:
                with q.reserve(4, timeout=5.0) as buf:  # committed when the block ends
                    buf[:] = i.to_bytes(4, "little")
        q.close()  # the consumer drains what is left, then its loop ends
        total = results.get(timeout=30)
        consumer.join()
    zipc.Queue.remove(name)
    assert total == sum(range(COUNT)), total
    print(f"ok: {COUNT} messages, sum {total}")


if __name__ == "__main__":
    main()
