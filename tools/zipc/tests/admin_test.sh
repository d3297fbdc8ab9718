#!/usr/bin/env bash
# Drives the zipc tool end to end: create, ls, stat, rm, gc of an abandoned file.
set -euo pipefail
zipc=$1
name="t.cli.$$"
bad="t.cli-bad.$$"
trap 'rm -f /dev/shm/zipc.$name /dev/shm/zipc.$bad' EXIT
"$zipc" create "$name" --size 8192 --mode 660 | grep -q "created $name"
"$zipc" ls | grep "$name" | grep -q "user"
"$zipc" stat "$name" | grep -q "kind: *user"
[ "$(stat -c %a /dev/shm/zipc.$name)" = "660" ]
# A foreign file under a zipc name is invalid and collected by gc.
head -c 4096 /dev/urandom > /dev/shm/zipc.$bad
"$zipc" ls | grep "$bad" | grep -q "bad magic"
if "$zipc" stat "$bad" >/dev/null 2>&1; then echo "stat of a foreign file succeeded"; exit 1; fi
"$zipc" gc -n --match "$bad" | grep -q "would remove $bad"
[ -e /dev/shm/zipc.$bad ]
"$zipc" gc --match "$bad" | grep -q "removing $bad"
[ ! -e /dev/shm/zipc.$bad ]
"$zipc" rm "$name"
if "$zipc" rm "$name" 2>/dev/null; then echo "second rm succeeded"; exit 1; fi
"$zipc" ls | grep -q "$name" && { echo "still listed"; exit 1; }
echo "cli test: ok"
