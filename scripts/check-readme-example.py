#!/usr/bin/env python3
"""Fails when the README's complete example differs from examples/hello.cpp."""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent
readme = (root / "README.md").read_text()
example = (root / "examples" / "hello.cpp").read_text()
if "```cpp\n" + example + "```" not in readme:
    sys.exit("README.md: the example under 'Use zipc in your project' differs from examples/hello.cpp")
print("README example matches examples/hello.cpp")
