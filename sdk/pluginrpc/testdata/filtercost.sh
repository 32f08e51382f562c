#!/bin/bash
# filtercost.sh: what a filter plugin costs per call (sdk/README.md,
# "Cost of a plugin call"). Two `airnode serve` providers on loopback, one
# with no plugin, one with testdata/moody declared as a filter plugin (it
# passes every call); `airnode bench` runs against each in turn, then a
# third time against the first with moody declared in bench's own
# configuration (a consumer filter plugin), -c 1 then -c 20, for ROUNDS
# rounds, so all three see the same load. Per call: bench's own CPU, the
# provider's (--server-pid: its CPU-time clock) and the plugin process's
# (/proc/PID/stat: around the run for the provider's plugin; for bench's,
# its last reading before bench exits, so it includes the plugin's start,
# a few ms; 10 ms ticks over seconds of CPU). Every process runs under
# nice -n 15.
#
# usage: sdk/pluginrpc/testdata/filtercost.sh   (from the repository root)
# env: PORT0 (37540), PORT1 (37541), ROUNDS (3), DURATION (3s)
set -euo pipefail
PORT0=${PORT0:-37540} PORT1=${PORT1:-37541} ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-3s}
dir=$(mktemp -d)
trap 'kill $(cat "$dir"/p*.pid 2>/dev/null) 2>/dev/null; rm -rf "$dir"' EXIT
nice -n 15 go build -o "$dir/airnode" ./cmd/airnode
nice -n 15 go build -o "$dir/moody" ./sdk/pluginrpc/testdata/moody
printf 'registry: "file://%s/reg"\nlisten: "127.0.0.1:%s"\n' "$dir" "$PORT0" > "$dir/p0.yaml"
printf 'registry: "file://%s/reg"\nlisten: "127.0.0.1:%s"\nplugins:\n  - {name: acme.moody, point: filter, command: %s/moody}\n' "$dir" "$PORT1" "$dir" > "$dir/p1.yaml"
echo 'plugins: []' > "$dir/empty.yaml"
printf 'plugins:\n  - {name: acme.moody, point: filter, command: %s/moody}\n' "$dir" > "$dir/c1.yaml"
for i in 0 1; do
  nice -n 15 "$dir/airnode" --config "$dir/p$i.yaml" serve > "$dir/p$i.log" 2>&1 & echo $! > "$dir/p$i.pid"
done
sleep 3
plug=$(ps --ppid "$(cat "$dir/p1.pid")" -o pid= | tr -d ' ' | head -1)
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
echo "start $(date +%T)  load $(cut -d' ' -f1-3 /proc/loadavg)  $(nproc) cores"
for r in $(seq "$ROUNDS"); do
  for c in 1 20; do
    for i in 0 1 2; do
      port=$PORT0 server=p0 conf=empty
      [ "$i" = 1 ] && port=$PORT1 server=p1
      [ "$i" = 2 ] && conf=c1
      t0=$(ticks "$plug")
      nice -n 15 "$dir/airnode" --config "$dir/$conf.yaml" bench "airnode://127.0.0.1:$port/demo.Echo" -c "$c" --duration "$DURATION" --server-pid "$(cat "$dir/$server.pid")" --json > "$dir/out.json" & bench=$!
      t1=0
      while kill -0 "$bench" 2>/dev/null; do
        if [ "$i" = 2 ]; then
          # bench's own plugin: the last reading before it ends.
          cp=$(ps --ppid "$bench" -o pid= | tr -d " " | head -1 || true)
          [ -n "$cp" ] && t=$(ticks "$cp" 2>/dev/null) && t1=$t
        fi
        sleep 0.2
      done
      wait "$bench"
      if [ "$i" = 2 ]; then t0=0; else t1=$(ticks "$plug"); fi
      python3 - "$r" "$c" "$i" "$(cat "$dir/out.json")" "$t0" "$t1" "$hz" "$(cut -d' ' -f1 /proc/loadavg)" <<'P'
import json, sys
r, c, i, out, t0, t1, hz, load = sys.argv[1:]
d = json.loads(out)
plug = (int(t1) - int(t0)) / int(hz) * 1e6 / d['calls'] if i != '0' else 0
name = ['no plugin', 'provider plugin', 'consumer plugin'][int(i)]
print(f"round {r} c={c:>2} {name:15s} calls/s {d['calls_per_sec']:7.0f}  mean {d['mean_us']/1000:.3f} ms  p50 {d['p50_us']/1000:.3f} ms  p99 {d['p99_us']/1000:.2f} ms  "
      f"errors {sum(d['errors'].values())}  CPU/call: bench {d['cpu_us_per_call']:.1f} µs, provider {d.get('server_cpu_us_per_call', -1):.1f} µs, plugin {plug:.1f} µs  load {load}")
P
    done
  done
done
echo "end $(date +%T)  load $(cut -d' ' -f1-3 /proc/loadavg)"
