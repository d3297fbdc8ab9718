#!/usr/bin/env bash
# Drives the zipc tool end to end: create, ls, stat, rm, gc of an abandoned file.
set -euo pipefail
zipc=$1
name="t.cli.$$"
bad="t.cli-bad.$$"
trap 'rm -f /dev/shm/zipc.$name /dev/shm/zipc.$bad' EXIT
"$zipc" create "$name" --size 8192 --mode 660 | grep "created $name" >/dev/null
"$zipc" ls | grep "$name" | grep "user" >/dev/null
"$zipc" stat "$name" | grep "kind: *user" >/dev/null
[ "$(stat -c %a /dev/shm/zipc.$name)" = "660" ]
# A foreign file under a zipc name is invalid and collected by gc.
head -c 4096 /dev/urandom > /dev/shm/zipc.$bad
"$zipc" ls | grep "$bad" | grep "bad magic" >/dev/null
if "$zipc" stat "$bad" >/dev/null 2>&1; then echo "stat of a foreign file succeeded"; exit 1; fi
"$zipc" gc -n --match "$bad" | grep "would remove $bad" >/dev/null
[ -e /dev/shm/zipc.$bad ]
"$zipc" gc --match "$bad" | grep "removing $bad" >/dev/null
[ ! -e /dev/shm/zipc.$bad ]
"$zipc" rm "$name"
if "$zipc" rm "$name" 2>/dev/null; then echo "second rm succeeded"; exit 1; fi
"$zipc" ls | grep "$name" >/dev/null && { echo "still listed"; exit 1; }
echo "cli test: ok"
