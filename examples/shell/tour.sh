#!/usr/bin/env bash
# Runs the README's shell tour as written and checks what the subscriber printed.
#   bash examples/shell/tour.sh [PATH_TO_ZIPC]     (default: zipc on PATH)
# The tour uses the name "tour"; here it runs in a private name space
# (ZIPC_NAMESPACE), so the run touches no one else's channel.
set -euo pipefail
if [ $# -gt 0 ]; then
  zipc_dir=$(cd "$(dirname "$1")" && pwd)
  PATH="$zipc_dir:$PATH"
fi
export ZIPC_NAMESPACE="example-tour-$$"
out=$(mktemp)
trap 'rm -f "$out" "/dev/shm/zipc.$ZIPC_NAMESPACE:tour"' EXIT

tour() {
# readme:tour:begin
zipc sub tour --count 3 &     # the subscriber: waits for the topic, then prints 3 messages
printf 'one\ntwo\nthree\n' | zipc pub tour --create --wait-subscribers 1
wait                          # for the subscriber
zipc rm tour
# readme:tour:end
}

tour > "$out"
expected=$'one\ntwo\nthree'
if [ "$(cat "$out")" != "$expected" ]; then
  echo "FAIL: the tour printed:"
  cat "$out"
  exit 1
fi
echo "ok: the subscriber printed the three messages"
