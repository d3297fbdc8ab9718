#!/usr/bin/env bash
# The argument table (issue 37 point 3, issue 36 point 2): every subcommand x
# every numeric flag x {negative, 0 where 0 is invalid, NaN, infinity, huge,
# garbage, a wrong unit} exits 2 with one line on stderr naming the
# subcommand and the flag, before opening, allocating or waiting on anything.
# Each run has a 5 s watchdog (a hang fails the case; no timing is asserted).
set -uo pipefail
zipc=$1
t="t.cliargs.$$"
tmp=$(mktemp -d)
cleanup() {
  rm -rf "$tmp"
  rm -f /dev/shm/zipc.$t /dev/shm/zipc.$t.*
}
trap cleanup EXIT
failures=0
cases=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# reject SUB FLAG VALUE ARGS...: `zipc SUB ARGS... FLAG VALUE` is a usage error.
reject() {
  local sub=$1 flag=$2 value=$3
  shift 3
  cases=$((cases + 1))
  timeout -k 1 5 "$zipc" "$sub" "$@" "$flag" "$value" < /dev/null > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  local what="zipc $sub $* $flag '$value'"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then fail "$what: hung (watchdog)"; return; fi
  [ "$rc" -eq 2 ] || { fail "$what exited $rc, expected 2: $(head -c 300 "$tmp/err")"; return; }
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || { fail "$what: not one line: $(cat "$tmp/err")"; return; }
  grep -qF -- "zipc $sub:" "$tmp/err" || fail "$what: does not name the subcommand: $(cat "$tmp/err")"
  grep -qF -- "${flag##*,}" "$tmp/err" || fail "$what: does not name $flag: $(cat "$tmp/err")"
}

bad_numbers=(-1 nan inf 99999999999999999999999 12abc 0x10 " 5")
# Per subcommand: its positional arguments, its numeric flags, and the flags
# for which 0 is not a valid value.
declare -A positional=(
  [top]="" [pub]="$t" [sub]="$t" [call]="$t x" [serve]="$t" [record]="$t $tmp/r.zrec"
  [replay]="$tmp/none.zrec $t" [create]="$t" [bench]=""
)
declare -A numeric=(
  [top]="--interval -n"
  [pub]="--capacity --max-message --max-subscribers --block-size --block-count --wait-subscribers --wait-timeout --generate --size --rate --mode"
  [sub]="--count --timeout --from"
  [call]="--timeout --repeat --rate"
  [serve]="--count --max-response"
  [record]="--from --count --duration --timeout"
  [replay]="--rate --speed --capacity --max-message --max-subscribers --wait-subscribers --wait-timeout --mode"
  [create]="--size --capacity --max-message --max-subscribers --block-size --block-count --mode"
  [bench]="--round-trips --messages --size"
)
declare -A zero_invalid=(
  [top]="--interval" [pub]="--capacity --max-message --max-subscribers --block-size --block-count"
  [sub]="" [call]="--repeat" [serve]="--max-response" [record]=""
  [replay]="--speed --capacity --max-message --max-subscribers"
  [create]="--size --capacity --max-message --max-subscribers --block-size --block-count"
  [bench]="--round-trips --messages --size"
)
for sub in top pub sub call serve record replay create bench; do
  # shellcheck disable=SC2206
  args=(${positional[$sub]})
  for flag in ${numeric[$sub]}; do
    for v in "${bad_numbers[@]}"; do reject "$sub" "$flag" "$v" "${args[@]}"; done
  done
  for flag in ${zero_invalid[$sub]}; do reject "$sub" "$flag" 0 "${args[@]}"; done
done
# Units: a size flag takes none of a duration's and the reverse; sizes that
# would wrap past 2^64; durations over a year.
reject create --capacity 5s "$t"
reject create --size 16777216TiB "$t"
reject create --size 18446744073709551616 "$t"
reject sub --timeout 5KiB "$t"
reject sub --timeout 400d "$t"
reject top --interval forever
reject replay --speed 1e-9 "$tmp/none.zrec" "$t"
reject record --duration -1 "$t" "$tmp/r.zrec"
# Usage errors of CLI11 itself are one line naming the subcommand too.
reject sub --bogus 1 "$t"
reject replay --block-size 64 "$tmp/none.zrec" "$t"  # a queue option replay does not take
cases=$((cases + 1))
timeout -k 1 5 "$zipc" sub > /dev/null 2> "$tmp/err"
[ $? -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "zipc sub without NAME: $(cat "$tmp/err")"
# Nothing was created by any of these.
ls /dev/shm | grep -qF "zipc.$t" && fail "a rejected command created a segment: $(ls /dev/shm | grep -F "zipc.$t")"

# Accepted spellings (the commands then fail for other reasons, never 2).
accept() {
  cases=$((cases + 1))
  timeout -k 1 5 "$zipc" "$@" < /dev/null > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  [ "$rc" -ne 2 ] && [ "$rc" -ne 124 ] || fail "zipc $* exited $rc: $(cat "$tmp/err")"
}
accept sub "$t.none" --no-wait --timeout forever
accept sub "$t.none" --no-wait --timeout 1.5
accept sub "$t.none" --no-wait --timeout 500ms
accept sub "$t.none" --no-wait --timeout 1m --count 3
accept record "$t.none" "$tmp/r.zrec" --duration 2s --timeout 0 --from 17
accept replay "$tmp/none.zrec" "$t" --speed 0.5 --capacity 64KiB --mode 660
accept call "$t.none" x --timeout 0 --repeat 1 --rate 0
[ -e /dev/shm/zipc.$t ] && fail "an accepted command created $t"

echo "args test: $cases cases, $failures failed"
[ "$failures" -eq 0 ] || exit 1
echo "args test: ok"
