#!/usr/bin/env python3
"""Draws the zipc-bench charts from a result JSON (docs/design/bench.md).

    python3 scripts/plot.py build/release/bench-results/<date>-<host>.json [--out-dir DIR]

Writes, next to the JSON (or in DIR):
  <stem>-latency.png     ping-pong round-trip p50 by message size, one line per transport/wait
  <stem>-throughput.png  one-way streaming GB/s by message size, one line per transport/wait
  <stem>-transports.png  ping-pong 64 B round trips/s per transport/wait (2 CPUs and 1 CPU)
"""
import argparse
import json
import os
import sys


def series(rows, workload, metric):
    out = {}
    for r in rows:
        if r.get("workload") != workload or r.get(metric) is None:
            continue
        key = f"{r['transport']} ({r.get('wait', '-')})"
        out.setdefault(key, []).append((r["size"], r[metric]))
    return {k: sorted(v) for k, v in out.items()}


def style(name):
    if name.startswith("zipc"):
        return dict(linewidth=2.5, marker="o")
    return dict(linewidth=1.2, marker=".", alpha=0.85)


def line_chart(plt, data, title, ylabel, path, scale=1.0):
    fig, ax = plt.subplots(figsize=(10, 6))
    for name, pts in sorted(data.items()):
        ax.plot([p[0] for p in pts], [p[1] * scale for p in pts], label=name, **style(name))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--out-dir")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot: matplotlib not installed (make deps); charts skipped", file=sys.stderr)
        return 1
    with open(a.json) as f:
        doc = json.load(f)
    rows = doc.get("results", [])
    m = doc.get("machine", {})
    where = f"{m.get('cpu_model', '?')}, {m.get('cores', '?')} CPUs, kernel {m.get('kernel', '?')}"
    out_dir = a.out_dir or os.path.dirname(os.path.abspath(a.json))
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, os.path.splitext(os.path.basename(a.json))[0])
    written = []

    lat = series(rows, "pingpong", "rt_p50_ns")
    if lat:
        line_chart(plt, lat, f"Ping-pong round trip, p50 (lower is better)\n{where}", "round trip p50 (us)",
                   stem + "-latency.png", scale=1e-3)
        written.append(stem + "-latency.png")
    thr = series(rows, "stream", "gbytes_per_s")
    if thr:
        line_chart(plt, thr, f"One-way streaming throughput (higher is better)\n{where}", "GB/s",
                   stem + "-throughput.png")
        written.append(stem + "-throughput.png")

    bars = []
    for w in ("pingpong", "pingpong-1cpu"):
        for r in rows:
            if r.get("workload") == w and r.get("size") == 64 and r.get("msgs_per_s"):
                bars.append((f"{r['transport']} ({r.get('wait')}){' 1 CPU' if w.endswith('1cpu') else ''}",
                             r["msgs_per_s"]))
    if bars:
        bars.sort(key=lambda b: b[1])
        fig, ax = plt.subplots(figsize=(10, max(4, 0.25 * len(bars))))
        ax.barh([b[0] for b in bars], [b[1] for b in bars],
                color=["tab:orange" if b[0].startswith("zipc") else "tab:blue" for b in bars])
        ax.set_xscale("log")
        ax.set_xlabel("round trips per second, 64 B (higher is better)")
        ax.set_title(f"Ping-pong 64 B per transport\n{where}")
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(True, axis="x", which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(stem + "-transports.png", dpi=110)
        plt.close(fig)
        written.append(stem + "-transports.png")
    for w in written:
        print(f"plot: wrote {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
