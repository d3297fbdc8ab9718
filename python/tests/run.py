"""Runs the Python test suite for ctest (`make test`); exit 77 = skipped
when the zipc package is not installed (pip install ./python)."""

import os
import sys

try:
    import zipc  # noqa: F401
    import pytest
except ImportError as e:
    print(f"skipped: {e} (install the package: pip install ./python)")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", here]))
