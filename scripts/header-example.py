#!/usr/bin/env python3
"""Extracts the usage example from a public header's opening comment.

The example is the first run of comment lines indented '//   ' (three spaces)
before the first non-comment line (a Doxygen '///' counts as '//'). Lines of
it that start with '#include' or '//   ---' mark a prelude: everything before
a '---' line goes at file scope, the rest into a function body. The result is a .cpp that includes the header.
"""
import pathlib
import re
import sys

header, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
lines = header.read_text().splitlines()
code, in_block = [], False
for line in lines:
    if line.startswith("///"):
        line = line[1:]
    if not line.startswith("//"):
        break
    if line.startswith("//   ") or (in_block and line.strip() == "//"):
        code.append(line[5:] if line.startswith("//   ") else "")
        in_block = True
    elif in_block:
        break
while code and not code[-1].strip():
    code.pop()
prelude, body = [], code
if any(l.strip() == "---" for l in code):
    i = [l.strip() for l in code].index("---")
    prelude, body = code[:i], code[i + 1:]
includes = [l for l in body if l.startswith("#include")]
body = [l for l in body if not l.startswith("#include")]
fn = "header_example_" + re.sub(r"\W", "_", header.stem)
text = [f'#include "zipc/{header.name}"', "#include <zipc/zipc.hpp>", "#include <chrono>", "#include <cstdio>",
        "#include <cstring>", "#include <string>", "#include <vector>", "#include <span>", *includes,
        "using namespace std::chrono_literals;", *prelude,
        f"[[maybe_unused]] void {fn}() {{", *("  " + l for l in body), "}", ""]
out.write_text("\n".join(text))
