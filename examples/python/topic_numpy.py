"""Publish numpy arrays on a zipc Topic; a subscriber process reads them in place.

    python examples/python/topic_numpy.py
"""

from __future__ import annotations

import multiprocessing as mp
import os

import numpy as np

import zipc

FRAMES = 50
SHAPE = (256, 256)


def subscriber(name: str, ready: "mp.Queue[str]", out: "mp.Queue[float]") -> None:
    with zipc.Topic.open(name) as topic:
        sub = topic.subscribe(start="oldest")
        ready.put("ready")
        total = 0.0
        for _ in range(FRAMES):
            with sub.acquire(timeout=10.0) as view:  # zero copy: the array lives in the topic's log
                frame = np.frombuffer(view, dtype=np.float32).reshape(SHAPE)
                total += float(frame.mean())
                del frame  # the view must not outlive the loan
        out.put(total)


def main() -> None:
    name = f"example-topic-{os.getpid()}"
    nbytes = int(np.prod(SHAPE)) * 4
    with zipc.Topic.create(name, capacity_bytes=16 * nbytes, max_message_size=nbytes) as topic:
        ready: "mp.Queue[str]" = mp.Queue()
        results: "mp.Queue[float]" = mp.Queue()
        p = mp.Process(target=subscriber, args=(name, ready, results))
        p.start()
        ready.get(timeout=30)
        pub = topic.publisher()
        for i in range(FRAMES):
            with pub.reserve(nbytes, timeout=10.0) as buf:
                np.frombuffer(buf, dtype=np.float32).reshape(SHAPE).fill(float(i))
        total = results.get(timeout=30)
        p.join()
    zipc.Topic.remove(name)
    expected = float(sum(range(FRAMES)))
    assert abs(total - expected) < 1e-3, total
    print(f"ok: {FRAMES} frames of {SHAPE}, sum of means {total}")


if __name__ == "__main__":
    main()
