#!/usr/bin/env python3
"""Regenerates the README's benchmark section from a zipc-bench result JSON.

    python3 scripts/bench-readme.py bench/results/<run>.json [README.md]
    python3 scripts/bench-readme.py --check [README.md]   # exit 1 if the section differs
                                                         # from what its results file gives
    python3 scripts/bench-readme.py --source [README.md]  # print the results file it names

`make readme` runs the first form with the run the README already cites, the
one results file kept in bench/results/; `make bench-cite RUN=<json>`
(scripts/bench-cite.sh) puts a new run there and runs it too. `make bench`
never touches the README.

Only the text between the markers

    <!-- bench:begin -->
    <!-- bench:end -->

is replaced; everything else in the README is left exactly as it was. If the
markers are missing the README is not touched (exit 1 with a message). The
section states the machine, CPU, kernel and date of the run, the limits of the
machine, a small table of zipc against the best other transport per workload
(every row is in the .md next to the JSON), iceoryx2 as its authors measure it,
the source articles' reference figures beside ours, and links to the charts.
"""
import json
import os
import sys

BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"


def fmt_ns(v):
    if v is None:
        return "-"
    if v < 1000:
        return f"{v:.0f} ns"
    if v < 1e6:
        return f"{v / 1e3:.1f} us"
    return f"{v / 1e6:.2f} ms"


def fmt_rate(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v / 1e6:.2f} M"
    if v >= 1e3:
        return f"{v / 1e3:.1f} k"
    return f"{v:.0f}"


def fmt_gb(v):
    return "-" if v is None else f"{v:.2f}"


def find(rows, workload, transport, wait, size, metric):
    r = find_row(rows, workload, transport, wait, size)
    return None if r is None else r.get(metric)


def find_row(rows, workload, transport, wait, size):
    for r in rows:
        if (r.get("workload") == workload and r.get("transport") == transport and r.get("wait") == wait
                and r.get("size") == size):
            return r
    return None


# A cell shows the spread of its figure across the row's repetitions when
# half of it (max - min) passes this share of the median.
SPREAD_SHOWN = 0.10
SPREAD_OF = {"rt_p50_ns": "rt_p50_ns", "msgs_per_s": "msgs_per_s", "gbytes_per_s": "msgs_per_s"}


def half_spread(row, metric):
    """Half the max - min of the figure across repetitions, over its median (None: no repetitions)."""
    key = SPREAD_OF.get(metric)
    if key is None:
        return None
    sp = (row.get("spread") or {}).get(key)
    if isinstance(sp, dict) and sp.get("rel") is not None:
        return float(sp["rel"]) / 2
    runs = row.get("msgs_per_s_runs") if key == "msgs_per_s" else None
    if runs and len(runs) > 1:
        v = sorted(float(x) for x in runs)
        med = v[len(v) // 2]
        return (v[-1] - v[0]) / 2 / med if med > 0 else None
    return None




COLUMNS = [
    ("ping-pong 64 B p50", "pingpong", 64, "rt_p50_ns", fmt_ns),
    ("ping-pong 64 B p99", "pingpong", 64, "rt_p99_ns", fmt_ns),
    ("ping-pong 4 KiB p50", "pingpong", 4096, "rt_p50_ns", fmt_ns),
    ("ping-pong 64 B, 1 CPU p50", "pingpong-1cpu", 64, "rt_p50_ns", fmt_ns),
    ("stream 100 B msgs/s", "stream", 100, "msgs_per_s", fmt_rate),
    ("stream 64 KiB GB/s", "stream", 65536, "gbytes_per_s", fmt_gb),
    ("fan-out 100 B to 1 msgs/s", "fanout-1", 100, "msgs_per_s", fmt_rate),
    ("fan-out 100 B to 4 msgs/s", "fanout-4", 100, "msgs_per_s", fmt_rate),
    ("req/resp 256 KiB rt/s", "reqrep", 262144, "msgs_per_s", fmt_rate),
]


def bridge_table(rows):
    """The NATS bridge extra's rows (zipc-bench-bridge), if the run has them."""
    rows = [r for r in rows if r.get("workload") == "nats-bridge"]
    if not rows:
        return []
    out = ["Between hosts: zipc -> `zipc bridge` -> NATS -> `zipc bridge` -> zipc on loopback, beside the NATS C "
           "client publishing and subscribing on the same nats-server (docs/guide/bridge.md). Throughput flat out; "
           "one-way latency at a paced 5 k msgs/s; ratios and added p50 against the raw NATS run of the same "
           "repetition (median):",
           "",
           "| transport | wait | size | msgs/s | vs raw NATS | p50 one way | p99 one way | p50 over raw NATS |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (r.get("size", 0), r.get("transport") != "nats-c-client",
                                         r.get("transport", ""), r.get("wait", ""))):
        def us(key):
            v = r.get(key)
            return "-" if v is None else fmt_ns(float(v) * 1000)
        # A row measured against another baseline (the JetStream bridge against
        # the NATS C client's own JetStream publisher and consumer) names it.
        ratio = r.get("ratio_to_baseline", r.get("ratio_to_raw_nats"))
        base = r.get("baseline", "raw NATS")
        over = r.get("p50_over_raw_us")
        t = r.get("transport", "?")
        name = f"**{t}**" if r.get("family") == "zipc" else t
        out.append(f"| {name} | {r.get('wait', '-')} | {r.get('size', 0)} B | {fmt_rate(r.get('msgs_per_s'))} | "
                   f"{'-' if ratio is None else f'{ratio:.2f}x' + ('' if base == 'raw NATS' else f' of {base}')} | {us('oneway_p50_us')} | {us('oneway_p99_us')} | "
                   f"{'-' if over is None else f'{over:+.1f} us'} |")
    out.append("")
    return out


LOWER_IS_BETTER = {"rt_p50_ns", "rt_p99_ns"}


def best(rows, workload, size, wait, metric, families):
    """The row of the given families with the best figure for (workload, size, wait, metric)."""
    found = [r for r in rows if r.get("workload") == workload and r.get("size") == size and r.get("wait") == wait
             and r.get("family") in families and r.get(metric) is not None and not r.get("error")]
    if not found:
        return None
    pick = min if metric in LOWER_IS_BETTER else max
    return pick(found, key=lambda r: float(r[metric]))


def ratio_table(rows):
    """Per workload and wait class: zipc's best row against the best other transport
    (a peer library or an OS mechanism) of the same run, same wait class."""
    out = ["| workload | wait | zipc (best) | best other | zipc ahead by |",
           "|---|---|---|---|---:|"]
    for title, workload, size, metric, fmt in COLUMNS:
        for wait in ("busy", "block"):
            z = best(rows, workload, size, wait, metric, {"zipc"})
            o = best(rows, workload, size, wait, metric, {"peer", "os"})
            if z is None or o is None:
                continue
            zv, ov = float(z[metric]), float(o[metric])
            if zv <= 0 or ov <= 0:
                continue
            ahead = ov / zv if metric in LOWER_IS_BETTER else zv / ov

            def cell(r, v):
                h = half_spread(r, metric)
                return fmt(v) + (f" ±{h * 100:.0f}%" if h is not None and h > SPREAD_SHOWN else "") + f" ({r['transport']})"
            out.append(f"| {title} | {wait} | {cell(z, zv)} | {cell(o, ov)} | {ahead:.2f}x |")
    if len(out) == 2:
        return []
    return (["zipc against the best other transport of the same run, per workload and wait class (busy polling "
             "with busy polling, blocking with blocking; zipc's block wait polls up to 4 us before it sleeps, which a pipe "
             "or a socket cannot do, so a peer that answers within 4 us costs it no wake-up). \"zipc ahead by\" is the other's figure over zipc's for "
             "latency and zipc's over the other's for throughput: above 1 zipc is faster, below 1 it is slower. "
             f"±N% is half the spread (max - min) of a figure across its repetitions, shown where it passes "
             f"{SPREAD_SHOWN * 100:.0f}%.",
             ""] + out + [""])


def authors_table(rows):
    """iceoryx2 measured as its own benchmark measures it, beside zipc measured the same way
    and beside both fair rows of the run (bench/peers/iceoryx2/src/authors.rs)."""
    ref = [r for r in rows if r.get("workload") == "pingpong-authors" and r.get("oneway_mean_ns") is not None]
    if not ref:
        return []
    out = ["iceoryx2's published latency comes from its own benchmark: two threads of one process, a buffer of one "
           "with safe overflow, the payload never written or read, tight polling, and the mean of the total time "
           "over 2 x iterations. The same run measures iceoryx2 and a zipc queue that way, beside the fair rows "
           "above (separate processes, every byte written and checked; half the round-trip p50 for one way):",
           "",
           "| size | iceoryx2, authors' set-up | zipc queue, same set-up | iceoryx2, fair row | zipc queue, fair row |",
           "|---:|---:|---:|---:|---:|"]
    for size in sorted({r.get("size") for r in ref}):
        def mean(t):
            r = next((r for r in ref if r.get("transport") == t and r.get("size") == size), None)
            return None if r is None else float(r["oneway_mean_ns"])

        def fair(t):
            r = find_row(rows, "pingpong", t, "busy", size)
            return None if r is None or r.get("rt_p50_ns") is None else float(r["rt_p50_ns"]) / 2
        out.append(f"| {size} B | {fmt_ns(mean('iceoryx2'))} | {fmt_ns(mean('zipc-queue'))} | "
                   f"{fmt_ns(fair('iceoryx2'))} | {fmt_ns(fair('zipc-queue'))} |")
    out.append("")
    return out


# Rows of family "peer" that are not IPC peers: the heap extras' allocators and
# locks, and the NATS client (the bridge's table sets zipc beside it).
NOT_IPC_PEERS = ("glibc-malloc", "zipc::", "std::mutex", "nats-c-client")


def headline_metric(row):
    """The figure a row is judged by: a round trip's p50, else its rate."""
    if row.get("rt_p50_ns") is not None and str(row.get("latency", "round trip")) == "round trip":
        return "rt_p50_ns"
    return "msgs_per_s" if row.get("msgs_per_s") is not None else None


def peers_table(rows):
    """Per peer library: every row it shares with zipc (workload, size, wait
    class), zipc's best row there against it; how often zipc is ahead, the
    median ratio, and the rows where zipc is furthest behind and ahead."""
    shared = {}
    for p in rows:
        t = p.get("transport", "")
        if p.get("family") != "peer" or p.get("error") or any(n in t for n in NOT_IPC_PEERS):
            continue
        metric = headline_metric(p)
        if metric is None or not p.get(metric):
            continue
        z = best(rows, p.get("workload"), p.get("size"), p.get("wait"), metric, {"zipc"})
        if z is None or not z.get(metric):
            continue
        zv, pv = float(z[metric]), float(p[metric])
        ahead = pv / zv if metric in LOWER_IS_BETTER else zv / pv
        shared.setdefault(t, []).append((ahead, p, z, metric))
    if not shared:
        return []

    def where(entry):
        ahead, p, z, metric = entry
        fmt = fmt_ns if metric in LOWER_IS_BETTER else fmt_rate

        def fig(r):
            h = half_spread(r, metric)
            return fmt(float(r[metric])) + (f" ±{h * 100:.0f}%" if h is not None and h > SPREAD_SHOWN else "")
        return (f"{p['workload']} {p.get('size', 0)} B {p.get('wait', '-')}: {ahead:.2f}x "
                f"({z['transport']} {fig(z)} vs {fig(p)})")

    out = ["zipc against each peer library, on every row the two share (same workload, size and wait class; "
           "zipc's best row there; round trips by p50, the rest by msgs/s). How each peer is set up, and why that is "
           "how its authors would: [docs/design/peers.md](docs/design/peers.md).",
           "",
           "| peer | shared rows | zipc ahead on | median ratio | zipc furthest behind | zipc furthest ahead |",
           "|---|---:|---:|---:|---|---|"]
    for t in sorted(shared):
        e = sorted(shared[t], key=lambda x: x[0])
        med = e[len(e) // 2][0] if len(e) % 2 else (e[len(e) // 2 - 1][0] * e[len(e) // 2][0]) ** 0.5
        n_ahead = sum(1 for x in e if x[0] > 1)
        out.append(f"| {t} | {len(e)} | {n_ahead} | {med:.2f}x | {where(e[0])} | {where(e[-1]) if len(e) > 1 else '-'} |")
    out.append("")
    return out


def section(doc, json_path, readme_dir):
    m = doc.get("machine", {})
    lim = doc.get("limits", {})
    rows = doc.get("results", [])
    rel = os.path.relpath(json_path, readme_dir)
    stem = os.path.splitext(rel)[0]
    out = [BEGIN,
           f"<!-- generated by scripts/bench-readme.py from {rel}; edit the script, not this text -->",
           "",
           f"Measured by `make bench` on **{m.get('host', '?')}**: {m.get('cpu_model', '?')}, "
           f"{m.get('cores', '?')} CPUs, Linux {m.get('kernel', '?')}, on {m.get('date', '?')} "
           f"(default suite, release build{' with link-time optimization' if m.get('lto') else ''}, "
           f"{m.get('compiler', 'gcc')}). Your machine will differ: run it.",
           ""]
    if lim:
        memcpy = lim.get("memcpy_gbps", {})
        spsc = lim.get("spsc_inproc_msgs_per_s", {})
        xcore = lim.get("xcore_copy_gbps", {})
        out += ["Limits of this machine, measured at the start of the same run (a row's `ratio_to_limit` in the "
                "JSON is relative to these unless its `ratio_basis` names the probes measured around it):",
                "",
                f"- cache-line round trip between two processes on two CPUs: {fmt_ns(lim.get('cacheline_rtt_ns'))}; "
                f"on one CPU with yield: {fmt_ns(lim.get('cacheline_rtt_1cpu_yield_ns'))}",
                f"- futex wake round trip across CPUs: {fmt_ns(lim.get('futex_rtt_ns'))}",
                "- memcpy, one thread: " + ", ".join(f"{k} B {float(v):.1f} GB/s" for k, v in sorted(memcpy.items(), key=lambda kv: int(kv[0]))),
                "- in-process SPSC ring, two threads: " +
                ", ".join(f"{k} B {fmt_rate(float(v))} msgs/s" for k, v in sorted(spsc.items(), key=lambda kv: int(kv[0]))),
                "- the same ring carrying big messages, copied in by one thread and out by the other (cross-core copy, "
                "the basis for messages over 1 KiB): " +
                ", ".join(f"{k} B {float(v):.1f} GB/s" for k, v in sorted(xcore.items(), key=lambda kv: int(kv[0]))),
                ""]
    out += ratio_table(rows)
    out += ["Round trip = request out and reply back between two processes; stream = one-way, flat out, "
            "latency from send to receipt; fan-out = one publisher, every subscriber process gets every message "
            "(msgs/s delivered in total). Every payload byte is written by the sender and checked by the receiver. "
            "Each figure is the median of repetitions that alternated with the other transports; every transport's "
            "row, with its spread, is in the full table linked below.",
            ""]
    out += peers_table(rows)
    out += authors_table(rows)
    out += bridge_table(rows)
    ref = doc.get("reference", [])
    if ref:
        out += ["The figures the source articles report (docs/design/reference.md), each the **author's figure on the "
                "author's hardware**, beside our closest row from this run:",
                "",
                "| ref | author's figure (author's hardware) | ours, this machine |",
                "|---|---|---|"]
        out += [f"| {r['section']} | {r['author']} | {r['ours']} |" for r in ref]
        out.append("")
    charts = [(n, f"{stem}-{n}.png") for n in ("latency", "throughput", "transports")]
    charts = [(n, p) for n, p in charts if os.path.exists(os.path.join(readme_dir, p))]
    if charts:
        out.append(" ".join(f"![{n}]({p})" for n, p in charts))
        out.append("")
    md = stem + ".md"
    extra = f" and the full table in [{md}]({md})" if os.path.exists(os.path.join(readme_dir, md)) else ""
    hist = os.path.join(os.path.dirname(rel), "history.jsonl")
    if os.path.exists(os.path.join(readme_dir, hist)):
        extra += f"; the headline rows of every run committed so far, one line each, in [{hist}]({hist})"
    out.append(f"All rows: [{rel}]({rel}){extra}. Schema and method: [docs/design/bench.md](docs/design/bench.md).")
    nerr = len(doc.get("errors", []))
    if nerr:
        out.append(f"\n**{nerr} run(s) failed in this run**; see `errors` in the JSON.")
    out.append(END)
    return "\n".join(out)


def source_of(text):
    """The results file a README's section says it was generated from."""
    marker = "generated by scripts/bench-readme.py from "
    i = text.find(marker)
    if i < 0:
        return None
    return text[i + len(marker):].split(";", 1)[0].strip()


def check(readme):
    try:
        with open(readme) as f:
            text = f.read()
    except FileNotFoundError:
        print(f"bench-readme: {readme} not found", file=sys.stderr)
        return 1
    b, e = text.find(BEGIN), text.find(END)
    src = source_of(text)
    if b < 0 or e < b or not src:
        print(f"bench-readme: {readme} has no generated benchmark section", file=sys.stderr)
        return 1
    base = os.path.dirname(os.path.abspath(readme))
    json_path = os.path.join(base, src)
    try:
        with open(json_path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as ex:
        print(f"bench-readme: {readme} names {src}, which cannot be read: {ex}", file=sys.stderr)
        return 1
    want = section(doc, json_path, base)
    have = text[b:e + len(END)]
    if want == have:
        print(f"bench-readme: {readme} matches {src}")
        return 0
    wl, hl = want.splitlines(), have.splitlines()
    for i in range(max(len(wl), len(hl))):
        w = wl[i] if i < len(wl) else "<missing>"
        h = hl[i] if i < len(hl) else "<missing>"
        if w != h:
            print(f"bench-readme: {readme} does not match {src} (run: make readme)\n"
                  f"  section line {i + 1}\n  README: {h}\n  from results: {w}", file=sys.stderr)
            break
    return 1


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    if argv[1] == "--check":
        return check(argv[2] if len(argv) > 2 else "README.md")
    if argv[1] == "--source":
        with open(argv[2] if len(argv) > 2 else "README.md") as f:
            src = source_of(f.read())
        if not src:
            return 1
        print(src)
        return 0
    json_path = argv[1]
    readme = argv[2] if len(argv) > 2 else "README.md"
    with open(json_path) as f:
        doc = json.load(f)
    try:
        with open(readme) as f:
            text = f.read()
    except FileNotFoundError:
        print(f"bench-readme: {readme} not found", file=sys.stderr)
        return 1
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < 0 or e < b:
        print(f"bench-readme: {readme} has no '{BEGIN}' ... '{END}' markers; not touched", file=sys.stderr)
        return 1
    new = text[:b] + section(doc, json_path, os.path.dirname(os.path.abspath(readme))) + text[e + len(END):]
    if new != text:
        with open(readme, "w") as f:
            f.write(new)
        print(f"bench-readme: {readme} benchmark section regenerated from {json_path}")
    else:
        print(f"bench-readme: {readme} already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
