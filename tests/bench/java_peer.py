"""Building and smoke-running one Java benchmark peer, for its test.

smoke_rows(root, build, name) builds the peer as scripts/run-bench.sh does
(scripts/build-java-peer.sh NAME: Maven fetch and javac, cached under
BUILD/NAME-peer), with its launcher in a directory of its own so zipc-bench
does not pick it up, and runs `zipc-bench-NAME --smoke`. It returns the rows,
or an exit code: 77 (skipped) when the build says Java, javac, Maven or the
Maven repository is missing, 1 after printing why it failed. `after_run` is
called right after the run, before the result file is read.
"""
import json
import os
import subprocess
import tempfile

SKIP = 77


def fail(msg):
    print("FAIL: " + msg)
    return 1


def smoke_rows(root, build, name, after_run=None):
    bin_dir = os.path.join(build, f"{name}-peer", "test-bin")
    b = subprocess.run(["bash", os.path.join(root, "scripts", "build-java-peer.sh"), name, build, bin_dir],
                       capture_output=True, text=True, timeout=600)
    print(b.stdout + b.stderr, end="")
    if b.returncode == SKIP:
        return SKIP
    if b.returncode != 0:
        return fail(f"scripts/build-java-peer.sh {name} exited with {b.returncode}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rows.json")
        r = subprocess.run([os.path.join(bin_dir, f"zipc-bench-{name}"), "--smoke", "--out", out],
                           capture_output=True, text=True, timeout=120)
        print(r.stdout + r.stderr, end="")
        if r.returncode != 0:
            return fail(f"zipc-bench-{name} --smoke exited with {r.returncode}")
        if after_run is not None:
            after_run()
        with open(out) as f:
            rows = json.load(f)
    if not isinstance(rows, list):
        return fail("the result file is not a JSON array of rows")
    return rows
