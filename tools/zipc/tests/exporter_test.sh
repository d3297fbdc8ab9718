#!/usr/bin/env bash
# zipc exporter end to end: a real Prometheus server (Debian `prometheus`)
# scrapes it on loopback, and a PromQL query through its HTTP API returns the
# rate `zipc pub --rate` publishes at. Also: content negotiation, 404,
# concurrent scrapes, a removed channel leaving /metrics, a clean stop on
# SIGTERM, and the Grafana dashboard using only names the exporter serves.
set -euo pipefail
zipc=$1
here=$(cd "$(dirname "$0")" && pwd)
dashboard="$here/../../../docs/ops/grafana-zipc.json"
if ! command -v prometheus >/dev/null; then
  echo "exporter test: skipped (prometheus missing; scripts/install-deps.sh installs it)"
  exit 77
fi
if ! "$zipc" exporter --help >/dev/null 2>&1; then
  echo "exporter test: zipc has no exporter command"
  exit 1
fi
base="t.exp.$$"
topic="$base.topic"
queue="$base.queue"
work=$(mktemp -d /tmp/zipc-exporter-test.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -f "/dev/shm/zipc.$topic" "/dev/shm/zipc.$queue"
  rm -rf "$work"
}
trap cleanup EXIT
# Waits until the command succeeds, at most $1 tenths of a second.
wait_for() {
  local tenths=$1
  shift
  for _ in $(seq "$tenths"); do
    if "$@"; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for: $*"
  return 1
}

"$zipc" create "$topic" --kind topic >/dev/null
"$zipc" create "$queue" --kind queue >/dev/null
printf '1\n2\n3\n4\n' | "$zipc" pub "$queue"

# The exporter on a free loopback port (port 0: it prints the one it got).
"$zipc" exporter --listen 127.0.0.1:0 --match "$base" >"$work/exporter.out" 2>"$work/exporter.err" &
exporter=$!
pids+=("$exporter")
wait_for 100 grep -q "serving http" "$work/exporter.out"
port=$(sed -n 's|.*127\.0\.0\.1:\([0-9]*\)/metrics|\1|p' "$work/exporter.out")
url="http://127.0.0.1:$port/metrics"

# A bad --listen is a usage error (exit 2, one line); a taken port exits 1
# (timeout: a bind that wrongly succeeds would serve forever).
for listen in 127.0.0.1 :9464 127.0.0.1: 127.0.0.1:65536 127.0.0.1:-1 127.0.0.1:x "a b:1" "[::1:9464" ::1:9464; do
  rc=0
  err=$(timeout 10 "$zipc" exporter --listen "$listen" 2>&1 >/dev/null) || rc=$?
  [ "$rc" = 2 ] || { echo "--listen '$listen': exit $rc, want 2"; exit 1; }
  [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || { echo "--listen '$listen': more than one line: $err"; exit 1; }
done
rc=0
timeout 10 "$zipc" exporter --listen "127.0.0.1:$port" 2>"$work/taken.err" >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q "in use" "$work/taken.err" || { echo "taken port: exit $rc"; cat "$work/taken.err"; exit 1; }

# Content negotiation and 404.
ctype=$(curl -sf -o /dev/null -w '%{content_type}' "$url")
[ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ] || { echo "plain Content-Type: $ctype"; exit 1; }
ctype=$(curl -sf -o "$work/om" -w '%{content_type}' -H 'Accept: application/openmetrics-text;version=1.0.0' "$url")
[ "$ctype" = "application/openmetrics-text; version=1.0.0; charset=utf-8" ] || { echo "OM Content-Type: $ctype"; exit 1; }
[ "$(tail -n 1 "$work/om")" = "# EOF" ]
grep -q "^zipc_backlog_messages{channel=\"$queue\",kind=\"queue\"} 4$" "$work/om"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/other")
[ "$code" = 404 ] || { echo "/other: $code, want 404"; exit 1; }
# Concurrent scrapes all get the whole text.
scrapes=()
for i in 1 2 3 4 5 6 7 8; do
  curl -sf -H 'Accept: application/openmetrics-text' -o "$work/c$i" "$url" &
  scrapes+=($!)
done
for p in "${scrapes[@]}"; do wait "$p" || { echo "a concurrent scrape failed"; exit 1; }; done
for i in 1 2 3 4 5 6 7 8; do [ "$(tail -n 1 "$work/c$i")" = "# EOF" ] || { echo "scrape $i cut short"; exit 1; }; done

# A publisher at a known rate, for longer than the test needs.
rate=200
"$zipc" pub "$topic" --generate $((rate * 120)) --size 16 --rate $rate &
pids+=($!)

# Prometheus, scraping the exporter every second into a scratch store.
prom_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: zipc
    static_configs:
      - targets: ["127.0.0.1:$port"]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=($!)
api="http://127.0.0.1:$prom_port/api/v1"
target_up() {
  curl -sf "$api/targets" 2>/dev/null | python3 2>/dev/null -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"]
sys.exit(0 if t and t[0]["health"] == "up" else 1)'
}
wait_for 300 target_up || { cat "$work/prometheus.log"; curl -s "$api/targets"; exit 1; }
# query EXPR: prints the first result's value, or nothing.
query() {
  curl -sf --data-urlencode "query=$1" "$api/query" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")'
}
# The rate window must lie inside the series (rate() of a series younger
# than its window extrapolates only part of the window): 11 samples in 12 s,
# then an 8 s rate.
enough_samples() {
  local n
  n=$(query "count_over_time(zipc_messages_total{channel=\"$topic\",direction=\"out\"}[12s])")
  [ -n "$n" ] && [ "$n" -ge 11 ]
}
wait_for 400 enough_samples
measured=$(query "rate(zipc_messages_total{channel=\"$topic\",direction=\"out\"}[8s])")
echo "exporter test: Prometheus measured $measured messages/s (published at $rate/s)"
python3 -c "import sys; m = float('$measured'); sys.exit(0 if $rate * 0.5 <= m <= $rate * 1.5 else 1)" ||
  { echo "rate $measured is not near $rate"; exit 1; }
backlog=$(query "zipc_backlog_messages{channel=\"$queue\"}")
[ "$backlog" = 4 ] || { echo "backlog through Prometheus: '$backlog', want 4"; exit 1; }

# A removed channel is gone from the next scrape.
"$zipc" rm "$queue"
if curl -sf "$url" | grep -q "channel=\"$queue\""; then echo "removed queue still served"; exit 1; fi
curl -sf "$url" | grep -q "channel=\"$topic\""

# The Grafana dashboard: valid JSON, every zipc_* name in its queries is
# served, and every query runs in Prometheus.
"$zipc" metrics --names >"$work/names"
python3 - "$dashboard" "$work/names" "$api" <<'EOF'
import json, re, sys, urllib.parse, urllib.request
dashboard, names, api = sys.argv[1:]
served = set(open(names).read().split())
exprs = []
def walk(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("expr", "query", "definition") and isinstance(v, str):
                exprs.append(v)
            walk(v)
    elif isinstance(node, list):
        for v in node:
            walk(v)
walk(json.load(open(dashboard)))
assert exprs, "no queries in the dashboard"
used = {n for e in exprs for n in re.findall(r"\bzipc_[a-z_]+", e)}
assert used, "the dashboard queries no zipc metric"
unknown = used - served
assert not unknown, f"the dashboard uses names the exporter does not serve: {sorted(unknown)}"
# Every query parses and runs in Prometheus (Grafana's variables filled in).
for e in exprs:
    q = e.replace("$__rate_interval", "10s").replace("$channel", ".*")
    if not q.startswith("label_values("):
        url = api + "/query?" + urllib.parse.urlencode({"query": q})
        with urllib.request.urlopen(url) as r:
            assert json.load(r)["status"] == "success", q
EOF

# SIGTERM: a clean stop, exit 0.
kill -TERM "$exporter"
rc=0
wait "$exporter" || rc=$?
[ "$rc" = 0 ] || { echo "exporter exit $rc after SIGTERM"; cat "$work/exporter.err"; exit 1; }
echo "exporter test: ok"
