#!/usr/bin/env bash
# usage: every-function-is-tested.sh zipc.h TEST_DIR
# Fails when a function zipc.h declares is called by no C test or example.
set -euo pipefail
header=$1 dir=$2
functions=$(grep -oE '^ZIPC_API [^(]*\b(zipc_[a-z0-9_]+)\(' "$header" | grep -oE 'zipc_[a-z0-9_]+\($' | tr -d '(' | sort -u)
missing=0
for f in $functions; do
  if ! grep -qE "\b$f\(" "$dir"/*.c; then
    echo "not tested: $f"
    missing=1
  fi
done
echo "$(echo "$functions" | wc -l) functions declared in zipc.h"
exit $missing
