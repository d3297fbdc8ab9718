#!/usr/bin/env python3
"""Python IPC benchmark: zipc against multiprocessing.Pipe, multiprocessing.Queue,
multiprocessing.shared_memory + semaphores, pyzmq, iceoryx2, Zenoh and eCAL, Python processes
at both ends (transports.py).

Rows: ping-pong 64 B (round-trip p50/p99/p99.9), stream 100 B (msgs/s), and a
1 MiB numpy array per message (GB/s; the consumer copies each array into its
own, the same work everywhere; zipc writes and reads it through loans). The
copy limit is measured in the same run: the same two copies with a spin flag
and no IPC library. Repetitions alternate transports; figures are medians.

    python bench/python/bench.py [--reps 3] [--quick] [--out build/bench-results/python.json]

bench/results/python.json is the run the README and docs/guide/python.md quote.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import statistics
import sys
import time
import traceback
from typing import Any, Callable, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transports import Transport, all_transports, now  # noqa: E402

CTX = mp.get_context("fork")

# zipc C++ figures (bench harness, same machine, README table): round trip p50 and
# stream 100 B, used for "how much of the C++ speed Python keeps".
CPP_REFERENCE = {"pingpong64_p50_us": {"busy": 0.433, "adaptive": 0.435}, "stream100_msgs_s": 24.73e6}

PINGPONG_N = {"zipc-busy": 10000, "zipc-adaptive": 20000, "iceoryx2": 10000, "zenoh": 5000, "pyzmq": 5000, "mp.Pipe": 5000,
              "mp.Queue": 3000, "mp.shared_memory+sem": 5000}
STREAM_N = {"zipc-adaptive": 300000, "zipc-adaptive-batch64": 2000000, "iceoryx2": 100000, "zenoh": 100000, "ecal": 50000, "pyzmq": 200000, "mp.Pipe": 100000, "mp.Queue": 50000,
            "mp.shared_memory+sem": 50000}
ARRAY_N = 400
ARRAY_BYTES = 1 << 20


def _run_peer(target: Callable[..., None], args: tuple, main: Callable[[], Any]) -> Any:
    p = CTX.Process(target=target, args=args, daemon=True)
    p.start()
    try:
        deadline = time.monotonic() + 30
        while not args[0].wait(0.1):
            if not p.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("peer not ready (it failed: see stderr)")
        return main()
    finally:
        p.join(60)
        if p.is_alive():
            p.kill()
            p.join()


def pingpong(t: Transport, n: int) -> Dict[str, float]:
    t.setup("pingpong", 64)
    try:
        ready = CTX.Event()
        lat = _run_peer(t.echo, (ready,), lambda: t.pingpong(n, 64))
    finally:
        t.teardown()
    lat = sorted(lat[len(lat) // 10:])  # the first 10% warm up
    q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] / 1000.0  # noqa: E731
    return {"p50_us": q(0.50), "p99_us": q(0.99), "p999_us": q(0.999), "mean_us": statistics.fmean(lat) / 1000.0}


def stream(t: Transport, n: int, size: int) -> float:
    """Messages (or arrays) per second, first send to last receipt."""
    t.setup("stream" if size <= 4096 else "array", size)
    try:
        ready, out = CTX.Event(), CTX.Queue()

        def main() -> float:
            t.open_producer(size)  # ports and connections: not timed
            t0 = now()
            t.produce(n, size)
            end = out.get(timeout=120)
            return n / ((end - t0) / 1e9)

        return float(_run_peer(t.consume, (ready, n, size, out), main))
    finally:
        t.teardown()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a tenth of the iterations")
    ap.add_argument("--only", default="", help="comma-separated transports")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    scale = 0.1 if a.quick else 1.0
    makers = all_transports()
    names = [n for n in makers if not a.only or n in a.only.split(",")]
    samples: Dict[str, Dict[str, List[Any]]] = {}
    errors: Dict[str, str] = {}

    def record(row: str, name: str, fn: Callable[[], Any]) -> None:
        key = f"{row}/{name}"
        if key in errors:
            return
        try:
            v = fn()
            samples.setdefault(row, {}).setdefault(name, []).append(v)
        except Exception as e:  # a transport that fails is reported, not fatal
            errors[key] = f"{type(e).__name__}: {e}"
            traceback.print_exc()

    for rep in range(a.reps):
        order = names if rep % 2 == 0 else list(reversed(names))  # alternate
        for name in order:
            if name in PINGPONG_N:
                record("pingpong_64B", name, lambda: pingpong(makers[name](), max(500, int(PINGPONG_N[name] * scale))))
            if name in STREAM_N:
                record("stream_100B", name, lambda: stream(makers[name](), max(2000, int(STREAM_N[name] * scale)), 100))
            if name not in ("zipc-busy", "zipc-adaptive-batch64"):
                n = max(40, int(ARRAY_N * scale))
                record("array_1MiB", name, lambda: stream(makers[name](), n, ARRAY_BYTES) * ARRAY_BYTES / 1e9)
        print(f"rep {rep + 1}/{a.reps} done", file=sys.stderr)

    rows: Dict[str, Dict[str, Any]] = {}
    for row, per in samples.items():
        rows[row] = {}
        for name, vals in per.items():
            if row == "pingpong_64B":
                rows[row][name] = {k: statistics.median(v[k] for v in vals) for k in vals[0]}
            else:
                unit = "GB_s" if row == "array_1MiB" else "msgs_s"
                rows[row][name] = {unit: statistics.median(vals)}

    ratios: Dict[str, Any] = {}
    pp = rows.get("pingpong_64B", {})
    if "mp.Pipe" in pp:
        for z in ("zipc-busy", "zipc-adaptive"):
            if z in pp:
                ratios[f"pingpong p50 {z} / mp.Pipe (goal <= 0.05)"] = pp[z]["p50_us"] / pp["mp.Pipe"]["p50_us"]
    st = rows.get("stream_100B", {})
    if "zipc-adaptive" in st and "mp.Queue" in st:
        ratios["stream zipc / mp.Queue (goal >= 10)"] = st["zipc-adaptive"]["msgs_s"] / st["mp.Queue"]["msgs_s"]
    if "zipc-adaptive-batch64" in st and "mp.Queue" in st:
        ratios["stream zipc batches of 64 / mp.Queue"] = st["zipc-adaptive-batch64"]["msgs_s"] / st["mp.Queue"]["msgs_s"]
        ratios["python keeps of C++ stream 100 B (batches of 64)"] = st["zipc-adaptive-batch64"]["msgs_s"] / CPP_REFERENCE["stream100_msgs_s"]
    ar = rows.get("array_1MiB", {})
    if "zipc-adaptive" in ar and "copy-limit" in ar:
        ratios["array zipc / copy limit (goal >= 0.5)"] = ar["zipc-adaptive"]["GB_s"] / ar["copy-limit"]["GB_s"]
    for other in ("pyzmq", "iceoryx2", "zenoh", "ecal"):
        if other in pp and "zipc-adaptive" in pp:
            ratios[f"pingpong p50 {other} / zipc-adaptive (> 1: zipc ahead)"] = pp[other]["p50_us"] / pp["zipc-adaptive"]["p50_us"]
        if other in st and "zipc-adaptive" in st:
            ratios[f"stream zipc / {other} (> 1: zipc ahead)"] = st["zipc-adaptive"]["msgs_s"] / st[other]["msgs_s"]
        if other in ar and "zipc-adaptive" in ar:
            ratios[f"array zipc / {other} (> 1: zipc ahead)"] = ar["zipc-adaptive"]["GB_s"] / ar[other]["GB_s"]
    for w in ("busy", "adaptive"):
        if f"zipc-{w}" in pp:
            ratios[f"python keeps of C++ pingpong p50 ({w})"] = CPP_REFERENCE["pingpong64_p50_us"][w] / pp[f"zipc-{w}"]["p50_us"]
    if "zipc-adaptive" in st:
        ratios["python keeps of C++ stream 100 B"] = st["zipc-adaptive"]["msgs_s"] / CPP_REFERENCE["stream100_msgs_s"]

    result = {
        "benchmark": "zipc python", "reps": a.reps, "quick": a.quick, "cpus": os.cpu_count(),
        "python": platform.python_version(), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "rows": rows, "ratios": ratios, "errors": errors,
        "cpp_reference": CPP_REFERENCE,
    }
    text = json.dumps(result, indent=2)
    if a.out:
        if os.path.dirname(a.out):
            os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
