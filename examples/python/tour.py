"""Runs the README's Python tour as written: tour/sub.py first, then tour/pub.py.

    python examples/python/tour.py

The two scripts use the name "tour"; here they run in a private name space
(ZIPC_NAMESPACE), so the run touches no one else's channel.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "tour"


def main() -> None:
    env = dict(os.environ, ZIPC_NAMESPACE=f"example-tour-{os.getpid()}")
    sub = subprocess.Popen([sys.executable, str(HERE / "sub.py")], env=env, stdout=subprocess.PIPE, text=True)
    try:
        pub = subprocess.run([sys.executable, str(HERE / "pub.py")], env=env, timeout=60)
        out, _ = sub.communicate(timeout=60)
    finally:
        if sub.poll() is None:
            sub.kill()
            sub.wait()
        subprocess.run([sys.executable, "-c", "import zipc; zipc.Topic.remove('tour')"], env=env)
    assert pub.returncode == 0, pub.returncode
    assert sub.returncode == 0, sub.returncode
    assert out == "one\ntwo\nthree\n", out
    print("ok: the subscriber printed the three messages")


if __name__ == "__main__":
    main()
