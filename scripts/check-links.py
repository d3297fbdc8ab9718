#!/usr/bin/env python3
"""Every relative link in the repository's Markdown files resolves.

    python3 scripts/check-links.py [ROOT]

Checks each [text](target) and <img src> whose target is not a URL: the
file or folder must exist; a #fragment on a .md target must name one of its
headings (GitHub's anchors: lower case, punctuation dropped, spaces to '-').
Code blocks and inline code are skipped. Exit 1 with one line per broken link.
"""
import pathlib
import re
import subprocess
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def anchors(md):
    out = set()
    counts = {}
    for line in strip_code(md.read_text(), inline=False).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        a = m.group(1).strip().lower()
        a = re.sub(r"[^\w\- ]", "", a).replace(" ", "-")
        n = counts.get(a, 0)
        counts[a] = n + 1
        out.add(a if n == 0 else f"{a}-{n}")
    return out


def strip_code(text, inline=True):
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text) if inline else text


def main(argv):
    root = pathlib.Path(argv[1] if len(argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    try:
        files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every .md outside build/
        files = [str(p.relative_to(root)) for p in root.rglob("*.md") if "build" not in p.relative_to(root).parts]
    problems = []
    cache = {}
    for name in files:
        md = root / name
        if not md.is_file():
            continue
        for target in LINK.findall(strip_code(md.read_text())):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
                continue
            path, _, frag = target.partition("#")
            dest = (md.parent / path).resolve() if path else md
            if not dest.exists():
                problems.append(f"{name}: {target}: no such file")
                continue
            if frag and dest.suffix == ".md":
                if dest not in cache:
                    cache[dest] = anchors(dest)
                if frag not in cache[dest]:
                    problems.append(f"{name}: {target}: no heading '#{frag}' in {dest.relative_to(root)}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(f"check-links: every relative link in {len(files)} Markdown files resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
