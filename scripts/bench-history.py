#!/usr/bin/env python3
"""Appends one JSON line per zipc-bench run to a history file: the run's
headline rows (those of the README's table, and the NATS bridge rows), each
with its median and spread, so runs can be compared over time without
keeping every results file in the tree.

    python3 scripts/bench-history.py RUN.json [RUN.json ...] --to HISTORY [--commit auto|HASH] [--git-file]
    python3 scripts/bench-history.py RUN.json --to HISTORY --commit-from OTHER_HISTORY

`make bench` appends each run to build/release/bench-results/history.jsonl
with --commit auto (the commit measured, `-dirty` if tracked files differed
from it); `make bench-cite` appends the cited run to the tracked
bench/results/history.jsonl, taking the commit from the line `make bench`
wrote (--commit-from). --git-file (for results files committed earlier)
records the file's path and the last commit that changed it, so the whole run
stays one `git show <recorded_in>:<file>` away. A run already in HISTORY
(same name and date) is not added twice.

A line: {"run", "date", "host", "cpu", "cores", "kernel", "compiler", "lto",
"full", "repetitions", "errors", "commit", ["file", "recorded_in"], "rows"};
"rows" maps "workload/size/transport/wait" to the figures the README shows
for that row ("rt_p50_ns", "msgs_per_s", ...), each median with, where the
run measured it, "<figure>_spread": (max - min) / median across repetitions.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def readme_columns():
    """The README table's columns (scripts/bench-readme.py): the headline rows are its rows."""
    spec = importlib.util.spec_from_file_location("bench_readme", os.path.join(HERE, "bench-readme.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.COLUMNS, mod.SPREAD_OF


# The bridge table's figures (bench-readme.py's bridge_table).
BRIDGE = ("nats-bridge", ("msgs_per_s", "ratio_to_raw_nats", "oneway_p50_us", "oneway_p99_us"))


def sig(v, digits=4):
    """v rounded to `digits` significant digits (None stays None)."""
    if v is None:
        return None
    v = float(v)
    return 0.0 if v == 0 else float(f"{v:.{digits}g}")


def spread_of(row, key):
    """(max - min) / median of the figure `key` across the row's repetitions, or None."""
    sp = (row.get("spread") or {}).get(key)
    if isinstance(sp, dict) and sp.get("rel") is not None:
        return float(sp["rel"])
    runs = row.get("msgs_per_s_runs") if key == "msgs_per_s" else None
    if runs and len(runs) > 1:
        v = sorted(float(x) for x in runs)
        med = v[len(v) // 2]
        return (v[-1] - v[0]) / med if med > 0 else None
    return None


def headline(rows, columns, spread_key):
    metrics = {}
    for _, workload, size, metric, _ in columns:
        metrics.setdefault((workload, size), []).append(metric)
    out = {}
    for r in rows:
        w, size = r.get("workload"), r.get("size")
        wanted = metrics.get((w, size))
        keys = {m: spread_key.get(m) for m in wanted} if wanted else None
        if w == BRIDGE[0]:
            keys = {m: ("msgs_per_s" if m == "msgs_per_s" else None) for m in BRIDGE[1]}
        if not keys:
            continue
        cell = {}
        for m, sk in keys.items():
            if r.get(m) is None:
                continue
            cell[m] = sig(r[m])
            s = spread_of(r, sk) if sk else None
            if s is not None:
                cell[m + "_spread"] = round(s, 3)
        if cell:
            out[f"{w}/{size}/{r.get('transport')}/{r.get('wait')}"] = cell
    return out


def git(*args):
    try:
        return subprocess.run(["git", "-C", HERE, *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def current_commit():
    head = git("rev-parse", "--short=12", "HEAD")
    if not head:
        return None
    return head + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def line_for(path, columns, spread_key, commit, git_file):
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or "results" not in doc or "machine" not in doc:
        raise ValueError(f"{path} is not a zipc-bench results file (no 'machine' and 'results')")
    m, cfg = doc["machine"], doc.get("config", {})
    line = {"run": os.path.splitext(os.path.basename(path))[0], "date": m.get("date"), "host": m.get("host"),
            "cpu": m.get("cpu_model"), "cores": m.get("cores"), "kernel": m.get("kernel"),
            "compiler": m.get("compiler"), "lto": m.get("lto"), "full": cfg.get("full"),
            "repetitions": cfg.get("repetitions"), "errors": len(doc.get("errors", [])), "commit": commit}
    if git_file:
        top = git("rev-parse", "--show-toplevel")
        rel = os.path.relpath(os.path.abspath(path), top) if top else path
        line["file"] = rel
        line["recorded_in"] = git("log", "-1", "--format=%H", "--", ":(top)" + rel)[:12] or None
    line["rows"] = headline(doc["results"], columns, spread_key)
    return line


def read_history(path):
    """The lines of a history file (none if it does not exist); ValueError names a line that is not JSON."""
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for n, text in enumerate(f, 1):
            try:
                out.append(json.loads(text))
            except ValueError:
                raise ValueError(f"{path} line {n} is not JSON") from None
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", metavar="RUN.json")
    ap.add_argument("--to", required=True, metavar="HISTORY", help="the JSON-lines file to append to")
    ap.add_argument("--commit", help="the commit measured: a hash, or auto (git HEAD, -dirty if changed)")
    ap.add_argument("--commit-from", metavar="OTHER_HISTORY",
                    help="take the commit from this history's line for the same run and date, if it has one")
    ap.add_argument("--git-file", action="store_true", help="record the file's path and the commit that last changed it")
    a = ap.parse_args(argv[1:])
    columns, spread_key = readme_columns()
    commit = current_commit() if a.commit == "auto" else a.commit
    try:
        seen = {(old.get("run"), old.get("date")): old for old in read_history(a.to)}
        known = {} if not a.commit_from else {(o.get("run"), o.get("date")): o for o in read_history(a.commit_from)}
    except ValueError as ex:
        print(f"bench-history: {ex}; nothing appended", file=sys.stderr)
        return 1
    lines = []
    for path in a.runs:
        try:
            line = line_for(path, columns, spread_key, commit, a.git_file)
        except (OSError, ValueError) as ex:
            print(f"bench-history: {ex}", file=sys.stderr)
            return 1
        if commit is None and (line["run"], line["date"]) in known:
            line["commit"] = known[(line["run"], line["date"])].get("commit")
        if (line["run"], line["date"]) in seen:
            print(f"bench-history: {line['run']} ({line['date']}) already in {a.to}")
            continue
        seen[(line["run"], line["date"])] = line
        lines.append(line)
    lines.sort(key=lambda x: x["date"] or "")
    if lines:
        if os.path.dirname(a.to):
            os.makedirs(os.path.dirname(a.to), exist_ok=True)
        with open(a.to, "a") as f:
            for line in lines:
                f.write(json.dumps(line, separators=(",", ":")) + "\n")
        print(f"bench-history: {len(lines)} run(s) appended to {a.to}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
