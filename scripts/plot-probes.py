#!/usr/bin/env python3
"""One run's bracketing probes over time, from a zipc-bench result JSON: the
cache-line round trips around latency runs and, in files that have them, the
in-process ring around two-process throughput runs.

    python3 scripts/plot-probes.py build/release/bench-results/<date>-<host>.json [--table]

Writes <json stem>-probes.png (matplotlib; skipped with a message without
it) and, with --table, prints markdown tables: the cache-line probes in
60-second bins (count, min, median, max), the ring probes of each kind, and
how many runs were measured again because their two brackets disagreed.
"""
import json
import os
import sys


def bins(log, width=60.0):
    out = {}
    for p in log:
        if p.get("kind") != "2cpu":
            continue
        out.setdefault(int(p["t_s"] // width), []).append(p["ns"])
    return [(k * width, sorted(v)) for k, v in sorted(out.items())]


def table(doc):
    probes = doc.get("probes", {})
    log = probes.get("log", [])
    lines = ["| seconds into the suite | probes | min | median | max |", "|---|---:|---:|---:|---:|"]
    for t, v in bins(log):
        lines.append(f"| {t:.0f}-{t + 60:.0f} | {len(v)} | {v[0]:.0f} ns | {v[len(v) // 2]:.0f} ns | {v[-1]:.0f} ns |")
    retried = sum(1 for r in doc.get("results", []) for run in r.get("runs", []) if run.get("attempts", 1) > 1)
    unsettled = sum(r.get("probe_unsettled_runs", 0) for r in doc.get("results", []))
    runs = sum(1 for r in doc.get("results", []) for run in r.get("runs", []) if "probe_before_ns" in run)
    ring_runs = sum(1 for r in doc.get("results", []) for run in r.get("runs", []) if "ring_before" in run)
    rings = ring_kinds(log)
    if rings:
        lines += ["", "| ring probe | probes | min | median | max |", "|---|---:|---:|---:|---:|"]
        for kind, v in rings:
            unit = " GB/s" if kind.startswith("xcore") else " M msgs/s"
            scale = 1 if kind.startswith("xcore") else 1e-6
            lines.append(f"| {kind} | {len(v)} | {v[0] * scale:.1f}{unit} | {v[len(v) // 2] * scale:.1f}{unit} | "
                         f"{v[-1] * scale:.1f}{unit} |")
    lines.append("")
    lines.append(f"{len(log)} probes; {runs} bracketed latency runs and {ring_runs} bracketed throughput runs, "
                 f"{retried} of them measured again (brackets more than {probes.get('agreement', 1.25)}x apart), "
                 f"{unsettled} still apart after {probes.get('max_retries', 2)} retries.")
    return "\n".join(lines)


def ring_kinds(log):
    out = {}
    for p in log:
        if p.get("kind", "").startswith(("ring-", "xcore-")) and p.get("value", 0) > 0:
            out.setdefault(p["kind"], []).append(p["value"])
    return sorted((k, sorted(v)) for k, v in out.items())


def plot(doc, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot-probes: matplotlib missing, no chart", file=sys.stderr)
        return False
    log = doc.get("probes", {}).get("log", [])
    rings = ring_kinds(log)
    if rings:
        fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9, 5.6), sharex=True)
        # Each ring kind over its own median: the placement's effect on
        # throughput, on one scale for every message size.
        for kind, v in rings:
            med = v[len(v) // 2]
            pts = [(p["t_s"], p["value"] / med) for p in log if p.get("kind") == kind and p.get("value", 0) > 0]
            ax2.scatter([p[0] for p in pts], [p[1] for p in pts], s=4, label=kind)
        ax2.set_ylabel("ring probe / its median")
        ax2.set_xlabel("seconds into the suite")
        ax2.legend(loc="upper right", fontsize=7, ncol=3)
        ax2.grid(True, alpha=0.3)
    else:
        fig, ax = plt.subplots(figsize=(9, 3.2))
    for kind, color in (("2cpu", "tab:blue"), ("1cpu-yield", "tab:orange")):
        pts = [(p["t_s"], p["ns"]) for p in log if p.get("kind") == kind]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=4, color=color,
                       label="two CPUs (spin)" if kind == "2cpu" else "one CPU (yield)")
    ax.set_yscale("log")
    if not rings:
        ax.set_xlabel("seconds into the suite")
    ax.set_ylabel("cache-line round trip (ns)")
    ax.set_title("Bracketing probes of one zipc-bench run (" + doc.get("machine", {}).get("cpu_model", "?") + ")")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper right", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"plot-probes: wrote {png}")
    return True


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)
    if not doc.get("probes", {}).get("log"):
        print("plot-probes: no probes in this result file (written before probes, or --no-limits)", file=sys.stderr)
        return 1
    plot(doc, os.path.splitext(argv[1])[0] + "-probes.png")
    if "--table" in argv:
        print(table(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
