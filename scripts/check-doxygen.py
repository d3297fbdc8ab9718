#!/usr/bin/env python3
"""Fails when a public symbol of include/zipc is undocumented.

Runs Doxygen with docs/Doxyfile (warnings are errors there: an undocumented
class, function, member, typedef or macro, or a malformed comment) into a
temporary directory, with XML output instead of HTML, then reads the XML for
what Doxygen does not warn about: enumerators without a description.
Prints every problem as file:line: text and a count; exit status 1 when
there is any, 0 otherwise. The `docs.doxygen` test runs it.

  scripts/check-doxygen.py [--root DIR]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def described(member: ET.Element) -> bool:
    for tag in ("briefdescription", "detaileddescription"):
        node = member.find(tag)
        if node is not None and "".join(node.itertext()).strip():
            return True
    return False


def undocumented_enumerators(xml_dir: pathlib.Path, root: pathlib.Path) -> list[str]:
    problems = set()
    for f in sorted(xml_dir.glob("*.xml")):
        if f.name == "index.xml":
            continue
        for enum in ET.parse(f).getroot().iter("memberdef"):
            if enum.get("kind") != "enum" or enum.get("prot") == "private":
                continue
            enum_name = enum.findtext("qualifiedname") or enum.findtext("name") or "?"
            for value in enum.iter("enumvalue"):
                if described(value):
                    continue
                loc = enum.find("location")
                where = "?"
                if loc is not None:
                    path = pathlib.Path(loc.get("file", "?"))
                    if path.is_absolute() and path.is_relative_to(root):
                        path = path.relative_to(root)
                    where = f"{path}:{loc.get('line', '?')}"
                problems.add(f"{where}: enumerator {value.findtext('name')} of {enum_name} is not documented")
    return sorted(problems)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent, type=pathlib.Path)
    args = ap.parse_args()
    root = args.root.resolve()
    doxygen = shutil.which("doxygen")
    if doxygen is None:
        print("check-doxygen: doxygen is not installed (scripts/install-deps.sh installs it)")
        return 1
    config = (root / "docs" / "Doxyfile").read_text()
    config += "\nGENERATE_HTML = NO\nGENERATE_XML = YES\nXML_OUTPUT = xml\nXML_PROGRAMLISTING = NO\n"
    with tempfile.TemporaryDirectory(prefix="zipc-doxygen-") as tmp:
        env = dict(os.environ, ZIPC_DOCS_OUT=tmp)
        run = subprocess.run([doxygen, "-"], input=config, text=True, cwd=root, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        warnings = [line for line in run.stdout.splitlines() if line.strip()]
        enumerators = undocumented_enumerators(pathlib.Path(tmp) / "xml", root)
    for line in warnings + enumerators:
        print(line)
    undocumented = sum("is not documented" in line for line in warnings) + len(enumerators)
    failed = run.returncode != 0 or warnings or enumerators
    print(f"check-doxygen: {undocumented} undocumented symbol(s), "
          f"{len(warnings) + len(enumerators)} problem(s) in all (doxygen exit status {run.returncode})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
