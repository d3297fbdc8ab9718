#!/usr/bin/env python3
"""Every code block in README.md is a copy of a file that a test compiles or runs.

    python3 scripts/check-readme-blocks.py [README.md]
    python3 scripts/check-readme-blocks.py --self-test   # also: a drifted copy fails

Each fenced block must follow a marker line naming its source:

    <!-- code: examples/tour.cpp -->            the block is the whole file
    <!-- code: examples/shell/tour.sh#tour -->  the lines between the file's
                                                'readme:tour:begin' and
                                                'readme:tour:end' lines

The named files are the ones ctest builds and runs (examples/CMakeLists.txt:
example.tour, example.shell.tour, example.readme_install; python/tests runs
examples/python/tour.py). A block without a marker, a marker naming a missing
file or region, or a block that differs from its source fails the check.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- code: ([^#\s]+)(?:#([\w-]+))? -->$")


def region(text, name, path):
    lines = text.splitlines(keepends=True)
    begin = [i for i, l in enumerate(lines) if f"readme:{name}:begin" in l]
    end = [i for i, l in enumerate(lines) if f"readme:{name}:end" in l]
    if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
        return None, f"{path} has no single 'readme:{name}:begin' ... 'readme:{name}:end' region"
    return "".join(lines[begin[0] + 1:end[0]]), None


def blocks(readme_text):
    """(line number, marker match or None, block body) for each fenced block."""
    lines = readme_text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            start = i
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            k = start - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            marker = MARKER.match(lines[k].strip()) if k >= 0 else None
            yield start + 1, marker, "".join(lines[start + 1:j])
            i = j + 1
        else:
            i += 1


def check(readme):
    text = readme.read_text()
    problems = []
    count = 0
    for line, marker, body in blocks(text):
        count += 1
        if marker is None:
            problems.append(f"{readme.name}:{line}: code block without a '<!-- code: FILE[#REGION] -->' line above it")
            continue
        path, name = marker.group(1), marker.group(2)
        source = ROOT / path
        if not source.is_file():
            problems.append(f"{readme.name}:{line}: {path} does not exist")
            continue
        want = source.read_text()
        if name:
            want, why = region(want, name, path)
            if why:
                problems.append(f"{readme.name}:{line}: {why}")
                continue
        if body != want:
            where = f"{path}#{name}" if name else path
            problems.append(f"{readme.name}:{line}: the block differs from {where} (copy the file's text into it)")
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S).splitlines()
    for i in range(1, len(prose)):
        if prose[i].startswith(("    ", "\t")) and prose[i].strip() and not prose[i - 1].strip():
            problems.append(f"{readme.name}: an indented code block ('{prose[i].strip()}'): use a fenced block with its marker")
    if count == 0:
        problems.append(f"{readme.name}: no code blocks found (is this the README?)")
    return count, problems


def self_test(readme):
    """The check passes on README.md and fails on copies that drifted."""
    import tempfile
    text = readme.read_text()
    first = text.index("```")
    body = text.index("\n", first) + 1
    cases = {
        "a changed line": text[:body] + "x" + text[body:],
        "a block without its marker": text[:first] + "\n```sh\necho hi\n```\n\n" + text[first:],
    }
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for what, changed in cases.items():
            copy = pathlib.Path(tmp) / "README.md"
            copy.write_text(changed)
            if not check(copy)[1]:
                failures.append(f"self-test: the check accepted a README with {what}")
    return failures


def main(argv):
    if argv[1:2] == ["--self-test"]:
        failures = self_test(ROOT / "README.md")
        if failures:
            print("\n".join(failures), file=sys.stderr)
            return 1
        argv = argv[:1] + argv[2:]
    readme = pathlib.Path(argv[1]) if len(argv) > 1 else ROOT / "README.md"
    count, problems = check(readme)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(f"{readme.name}: all {count} code blocks match the tested files they name")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
