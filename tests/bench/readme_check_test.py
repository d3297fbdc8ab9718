#!/usr/bin/env python3
"""The README's benchmark table is what scripts/bench-readme.py makes from the
committed results file it names, and the check notices when it is not.

    python3 tests/bench/readme_check_test.py REPO_ROOT
"""
import os
import shutil
import subprocess
import sys
import tempfile


def run(script, readme):
    return subprocess.run([sys.executable, script, "--check", readme], capture_output=True, text=True)


def main(root):
    script = os.path.join(root, "scripts", "bench-readme.py")
    readme = os.path.join(root, "README.md")
    ok = run(script, readme)
    if ok.returncode != 0:
        print("FAIL: README.md does not match its results file:\n" + ok.stdout + ok.stderr)
        return 1
    # A copy with one figure of the table changed must fail the check.
    src = subprocess.run([sys.executable, script, "--source", readme], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, os.path.dirname(src)), exist_ok=True)
        shutil.copy(os.path.join(root, src), os.path.join(tmp, src))
        with open(readme) as f:
            text = f.read()
        begin = text.index("<!-- bench:begin -->")
        row = text.index("| **", begin)  # the first zipc row of the table
        cut = text.index(" | ", text.index(" | ", row + 4) + 3) + 3  # its first figure
        tampered = text[:cut] + "999 ns" + text[text.index(" |", cut):]
        copy = os.path.join(tmp, "README.md")
        with open(copy, "w") as f:
            f.write(tampered)
        bad = run(script, copy)
        if bad.returncode == 0:
            print("FAIL: --check accepted a README whose table was changed by hand")
            return 1
    print("ok: README.md matches " + src + "; a changed table is caught")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.getcwd()))
