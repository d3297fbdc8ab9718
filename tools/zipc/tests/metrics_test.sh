#!/usr/bin/env bash
# zipc metrics: the OpenMetrics and Prometheus text it prints parse with the
# reference parser (prometheus_client), carry the channels' counts, escape
# hostile names, honour the filters and drop a removed channel.
set -euo pipefail
zipc=$1
if ! python3 -c "import prometheus_client" 2>/dev/null; then
  echo "metrics test: skipped (python3 prometheus_client missing; scripts/install-deps.sh installs it)"
  exit 77
fi
base="t.met.$$"
topic="$base.topic"
queue="$base.queue"
ns="met$$"
bad="$base.bad\"q\\
x"
cleanup() {
  rm -f "/dev/shm/zipc.$topic" "/dev/shm/zipc.$queue" "/dev/shm/zipc.$ns:$base.n" "/dev/shm/zipc.$ns:$queue"
  rm -f "/dev/shm/zipc.$bad"
}
trap cleanup EXIT

"$zipc" create "$topic" --kind topic >/dev/null
"$zipc" create "$queue" --kind queue >/dev/null
ZIPC_NAMESPACE=$ns "$zipc" create "$base.n" --kind queue >/dev/null
"$zipc" pub "$topic" --generate 5 --size 10
printf 'a\nbb\nccc\n' | "$zipc" pub "$queue"
printf 'not a segment' >"/dev/shm/zipc.$bad"

# OpenMetrics: parsed by the reference parser, with the expected values.
"$zipc" metrics --match "$base" >"/tmp/zipc-metrics.$$.om"
trap 'cleanup; rm -f /tmp/zipc-metrics.$$.*' EXIT
[ "$(tail -n 1 "/tmp/zipc-metrics.$$.om")" = "# EOF" ] || { echo "no '# EOF' at the end"; exit 1; }
python3 - "/tmp/zipc-metrics.$$.om" "$topic" "$queue" "$bad" <<'EOF'
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
path, topic, queue, bad = sys.argv[1:]
families = {f.name: f for f in text_string_to_metric_families(open(path).read())}
def value(name, **labels):
    found = [s.value for f in families.values() for s in f.samples
             if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, f"{name} {labels}: {found}"
    return found[0]
assert families["zipc_messages"].type == "counter", families["zipc_messages"].type
assert families["zipc_backlog_messages"].type == "gauge"
assert all(f.documentation for f in families.values()), "a family without HELP"
assert value("zipc_messages_total", channel=topic, kind="topic", direction="out") == 5
assert value("zipc_bytes_total", channel=topic, direction="out") == 50
assert value("zipc_messages_total", channel=queue, kind="queue", direction="out") == 3
assert value("zipc_messages_total", channel=queue, direction="in") == 0
assert value("zipc_bytes_total", channel=queue) == 6
assert value("zipc_backlog_messages", channel=queue) == 3
assert value("zipc_participants", channel=queue, state="dead") == 0
assert value("zipc_channel_readable", channel=topic) == 1
# A file that is no segment, with a quote, a backslash and a newline in its name.
assert value("zipc_channel_readable", channel=bad) == 0
assert not [s for f in families.values() for s in f.samples
            if s.labels.get("channel") == bad and s.name != "zipc_channel_readable"]
EOF

# A live subscriber: counted alive, and its lag reported with its pid.
"$zipc" sub "$topic" >/dev/null &
sub=$!
trap 'kill $sub 2>/dev/null || true; cleanup; rm -f /tmp/zipc-metrics.$$.*' EXIT
for _ in $(seq 100); do
  "$zipc" metrics --match "$topic" | grep -q "^zipc_participants{channel=\"$topic\",kind=\"topic\",state=\"alive\"} 1$" && break
  sleep 0.1
done
"$zipc" metrics --match "$topic" | grep -q "^zipc_participants{channel=\"$topic\",kind=\"topic\",state=\"alive\"} 1$" ||
  { echo "the subscriber is not counted alive"; exit 1; }
"$zipc" metrics --match "$topic" | grep -q "^zipc_lag_messages{channel=\"$topic\",kind=\"topic\",subscriber=\"[0-9]*\",pid=\"$sub\",mode=\"reliable\"} [0-9]*$" ||
  { echo "no lag sample for subscriber pid $sub"; "$zipc" metrics --match "$topic" | grep lag; exit 1; }
kill "$sub"
wait "$sub" || true

# The Prometheus text format 0.0.4: parsed by its parser, and promtool agrees.
"$zipc" metrics --match "$base" --format prometheus >"/tmp/zipc-metrics.$$.txt"
python3 - "/tmp/zipc-metrics.$$.txt" "$topic" <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families
path, topic = sys.argv[1:]
samples = [s for f in text_string_to_metric_families(open(path).read()) for s in f.samples]
assert [s.value for s in samples if s.name == "zipc_messages_total" and s.labels["channel"] == topic] == [5]
EOF
if command -v promtool >/dev/null; then promtool check metrics <"/tmp/zipc-metrics.$$.txt"; fi

# --names lists every name a scrape can hold, and those of a scrape are among them.
"$zipc" metrics --names >"/tmp/zipc-metrics.$$.names"
grep -qx zipc_messages_total "/tmp/zipc-metrics.$$.names"
grep -v '^#' "/tmp/zipc-metrics.$$.om" | sed 's/[{ ].*//' | sort -u | while read -r name; do
  grep -qx "$name" "/tmp/zipc-metrics.$$.names" || { echo "$name is not listed by --names"; exit 1; }
done

# Filters: a regex, a name space ("" = none), and a prefix.
out=$("$zipc" metrics --regex "^t\\.met\\.$$\\.(topic|nothing)$" | grep '^zipc_channel_readable')
[ "$out" = "zipc_channel_readable{channel=\"$topic\",kind=\"topic\"} 1" ] || { echo "regex: $out"; exit 1; }
out=$("$zipc" metrics --namespace "$ns" | grep '^zipc_channel_readable')
[ "$out" = "zipc_channel_readable{channel=\"$ns:$base.n\",kind=\"queue\"} 1" ] || { echo "namespace: $out"; exit 1; }
"$zipc" metrics --namespace "" --match "$base" | grep -q "channel=\"$queue\""
if "$zipc" metrics --namespace "" --match "$base" | grep -q "$ns:"; then echo "--namespace '' kept $ns:"; exit 1; fi

# With ZIPC_NAMESPACE set, a channel of no name space still shows its own
# numbers, not those of its namesake in that name space.
ZIPC_NAMESPACE=$ns "$zipc" create "$queue" --kind queue >/dev/null
ZIPC_NAMESPACE=$ns "$zipc" metrics --match "$queue" |
  grep -q "^zipc_messages_total{channel=\"$queue\",kind=\"queue\",direction=\"out\"} 3$" ||
  { echo "ZIPC_NAMESPACE changed the channel shown"; exit 1; }

# A removed channel is gone from the next scrape.
"$zipc" rm "$queue"
if "$zipc" metrics --match "$base" | grep -q "channel=\"$queue\""; then echo "removed queue still shown"; exit 1; fi

# Bad filters are usage errors: exit 2, one line.
for args in "--regex (" "--namespace a/b" "--format xml"; do
  rc=0
  # shellcheck disable=SC2086
  err=$("$zipc" metrics $args 2>&1 >/dev/null) || rc=$?
  [ "$rc" = 2 ] || { echo "metrics $args: exit $rc, want 2"; exit 1; }
  [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || { echo "metrics $args: more than one line: $err"; exit 1; }
done
echo "metrics test: ok"
