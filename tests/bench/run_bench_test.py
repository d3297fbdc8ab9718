#!/usr/bin/env python3
"""`make bench` writes only under the build directory, and `make bench-cite`
makes a run the one the tree keeps.

    python3 tests/bench/run_bench_test.py stays-in-build REPO_ROOT BUILD_DIR
    python3 tests/bench/run_bench_test.py cite REPO_ROOT BUILD_DIR

Both run scripts/run-bench.sh (what `make bench` runs) on one tiny row (pipe
ping-pong, one repetition, no limits probe, no extras) with a build directory
of their own that holds only a link to zipc-bench, so the developer's results
and history are not touched. Exit 77 (skipped) without zipc-bench or git.
"""
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
ROW = "pingpong/64/pipe/block"
SMOKE = ["--filter", "^pingpong/pipe/64/block$", "--repetitions", "1", "--budget", "0.02", "--no-limits",
         "--no-extras"]


def fail(msg):
    print("FAIL: " + msg)
    return 1


def tracked_state(root):
    """git status plus a hash of every tracked file's change: equal before and after means nothing tracked changed."""
    status = subprocess.run(["git", "-C", root, "status", "--porcelain", "-uall"], capture_output=True, text=True,
                            check=True).stdout
    diff = subprocess.run(["git", "-C", root, "diff", "HEAD", "--binary"], capture_output=True, check=True).stdout
    return status, hashlib.sha256(diff).hexdigest()


def run_bench(root, build):
    """Runs scripts/run-bench.sh with `build` as its build directory; returns (exit status, output)."""
    env = dict(os.environ, ZIPC_BUILD_DIR=build, ZIPC_BENCH_NO_ICEORYX2="1", ZIPC_BENCH_NO_AERON="1",
               ZIPC_BENCH_NO_ZENOH="1", MPLBACKEND="Agg")
    p = subprocess.run(["bash", os.path.join(root, "scripts", "run-bench.sh"), *SMOKE], capture_output=True,
                       text=True, env=env, timeout=300)
    return p.returncode, p.stdout + p.stderr


def own_build_dir(tmp, real_build):
    build = os.path.join(tmp, "build")
    os.makedirs(os.path.join(build, "bench"))
    os.symlink(os.path.join(real_build, "bench", "zipc-bench"), os.path.join(build, "bench", "zipc-bench"))
    return build


def history(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def stays_in_build(root, real_build, tmp):
    build = own_build_dir(tmp, real_build)
    before = tracked_state(root)
    for n in (1, 2):
        rc, out = run_bench(root, build)
        if rc != 0:
            return fail(f"run-bench.sh exited {rc}:\n{out}")
    if tracked_state(root) != before:
        return fail("run-bench.sh changed tracked files (git status / git diff HEAD differ from before the run)")
    runs = sorted(glob.glob(os.path.join(build, "bench-results", "*.json")), key=len)
    if len(runs) != 2 or runs[1] != runs[0][:-len(".json")] + "-run2.json":
        return fail(f"two runs should give <date>-<host>.json and <date>-<host>-run2.json, got {runs}")
    for r in runs:
        if not os.path.exists(r[:-len(".json")] + ".md"):
            return fail(f"no table beside {r}")
    lines = history(os.path.join(build, "bench-results", "history.jsonl"))
    if len(lines) != 2 or any(ROW not in line["rows"] for line in lines):
        return fail(f"history.jsonl should have one line per run, each with the row {ROW}: {lines}")
    if not lines[0].get("commit"):
        return fail(f"the history line names no commit: {lines[0]}")
    print(f"ok: two runs in {build}/bench-results, one history line each, no tracked file changed")
    return 0


def cite(root, real_build, tmp):
    build = own_build_dir(tmp, real_build)
    rc, out = run_bench(root, build)
    if rc != 0:
        return fail(f"run-bench.sh exited {rc}:\n{out}")
    run = glob.glob(os.path.join(build, "bench-results", "*.json"))[0]
    stem = os.path.basename(run)[:-len(".json")]
    # A copy of the parts of the tree bench-cite.sh works on.
    repo = os.path.join(tmp, "repo")
    shutil.copytree(os.path.join(root, "scripts"), os.path.join(repo, "scripts"))
    shutil.copytree(os.path.join(root, "bench", "results"), os.path.join(repo, "bench", "results"))
    shutil.copy(os.path.join(root, "README.md"), repo)
    readme_py = os.path.join(repo, "scripts", "bench-readme.py")
    old = subprocess.run([sys.executable, readme_py, "--source", os.path.join(repo, "README.md")],
                         capture_output=True, text=True).stdout.strip()
    kept_before = len(history(os.path.join(repo, "bench", "results", "history.jsonl")))
    # A file that is not a results file is refused before anything changes.
    bad = os.path.join(tmp, "not-a-run.json")
    with open(bad, "w") as f:
        f.write('{"rows": []}\n')
    listing = sorted(os.listdir(os.path.join(repo, "bench", "results")))
    p = subprocess.run(["bash", os.path.join(repo, "scripts", "bench-cite.sh"), bad], capture_output=True, text=True)
    if p.returncode == 0 or sorted(os.listdir(os.path.join(repo, "bench", "results"))) != listing:
        return fail(f"bench-cite.sh accepted {bad} or changed bench/results (exit {p.returncode})")
    p = subprocess.run(["bash", os.path.join(repo, "scripts", "bench-cite.sh"), run], capture_output=True, text=True)
    if p.returncode != 0:
        return fail(f"bench-cite.sh exited {p.returncode}:\n{p.stdout}{p.stderr}")
    results = os.path.join(repo, "bench", "results")
    if not os.path.exists(os.path.join(results, stem + ".json")) or not os.path.exists(
            os.path.join(results, stem + ".md")):
        return fail(f"{stem}.json and .md were not copied to bench/results: {sorted(os.listdir(results))}")
    if old and os.path.exists(os.path.join(repo, old)):
        return fail(f"the run cited before, {old}, is still in bench/results")
    lines = history(os.path.join(results, "history.jsonl"))
    if len(lines) != kept_before + 1 or lines[-1]["run"] != stem or not lines[-1].get("commit"):
        return fail(f"bench/results/history.jsonl should end with {stem}'s line naming its commit: {lines[-1:]}")
    check = subprocess.run([sys.executable, readme_py, "--check", os.path.join(repo, "README.md")],
                           capture_output=True, text=True)
    if check.returncode != 0 or f"bench/results/{stem}.json" not in check.stdout:
        return fail(f"the README does not cite {stem} after bench-cite.sh:\n{check.stdout}{check.stderr}")
    print(f"ok: {stem} replaced {old} in bench/results, its history line appended, the README regenerated")
    return 0


def main(argv):
    if len(argv) != 4 or argv[1] not in ("stays-in-build", "cite"):
        print(__doc__)
        return 2
    root, real_build = os.path.abspath(argv[2]), os.path.abspath(argv[3])
    if not os.access(os.path.join(real_build, "bench", "zipc-bench"), os.X_OK):
        print(f"skipped: {real_build}/bench/zipc-bench not built")
        return SKIP
    if subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        print(f"skipped: {root} is not a git checkout")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        return (stays_in_build if argv[1] == "stays-in-build" else cite)(root, real_build, tmp)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
