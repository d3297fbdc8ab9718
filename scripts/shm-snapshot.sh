#!/usr/bin/env bash
# `before`: remembers the zipc segments in /dev/shm; `after`: fails if the test
# run left new ones (every test must remove what it creates).
set -euo pipefail
state=${TMPDIR:-/tmp}/zipc-shm-before.$(id -u)
list() { ls /dev/shm 2>/dev/null | grep -E '^(zipc\.|\.zipc)' | sort || true; }
case "${1:-}" in
  before) list > "$state" ;;
  after)
    left=$(comm -13 "$state" <(list) || true)
    if [ -n "$left" ]; then
      echo "shm-check: tests left segments in /dev/shm:"; echo "$left" | sed 's/^/  /'; exit 1
    fi
    echo "shm-check: no segment left behind in /dev/shm" ;;
  *) echo "usage: $0 before|after"; exit 2 ;;
esac
