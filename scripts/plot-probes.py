#!/usr/bin/env python3
"""One run's bracketing cache-line probes over time, from a zipc-bench result JSON.

    python3 scripts/plot-probes.py bench/results/<date>-<host>.json [--table]

Writes <json stem>-probes.png (matplotlib; skipped with a message without
it) and, with --table, prints a markdown table: the probes in 60-second
bins (count, min, median, max) and how many runs were measured again
because their two brackets disagreed.
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
    lines.append("")
    lines.append(f"{len(log)} probes; {runs} bracketed latency runs, {retried} of them measured again "
                 f"(brackets more than {probes.get('agreement', 1.25)}x apart), {unsettled} still apart after "
                 f"{probes.get('max_retries', 2)} retries.")
    return "\n".join(lines)


def plot(doc, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot-probes: matplotlib missing, no chart", file=sys.stderr)
        return False
    log = doc.get("probes", {}).get("log", [])
    fig, ax = plt.subplots(figsize=(9, 3.2))
    for kind, color in (("2cpu", "tab:blue"), ("1cpu-yield", "tab:orange")):
        pts = [(p["t_s"], p["ns"]) for p in log if p.get("kind") == kind]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=4, color=color,
                       label="two CPUs (spin)" if kind == "2cpu" else "one CPU (yield)")
    ax.set_yscale("log")
    ax.set_xlabel("seconds into the suite")
    ax.set_ylabel("cache-line round trip (ns)")
    ax.set_title("Bracketing probes of one zipc-bench run (" + doc.get("machine", {}).get("cpu_model", "?") + ")")
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
