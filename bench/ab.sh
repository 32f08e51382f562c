#!/bin/bash
# Alternated pairs: airnode bench builds (or settings) run in turn against
# one provider, so that the machine's drift hits each alike.
#
#   bench/ab.sh C DURATION ROUNDS PID "label:ENV=v /path/to/airnode" ...
#
# C callers, DURATION per run (5s), ROUNDS rounds; PID is the provider's
# (bench/profprovider -transport tcp -listen 127.0.0.1:20990), whose CPU
# per call each line reports; each spec is a label, then an environment
# assignment (X=1 when none) and the airnode binary. URL overrides the
# service URL (default airnode://127.0.0.1:20990/demo.Echo?transport=tcp).
# One line per run: calls/s, consumer and provider CPU µs a call, errors,
# and the 1-minute load average.
set -u
C=$1 D=$2 R=$3 PROV=$4
shift 4
URL=${URL:-airnode://127.0.0.1:20990/demo.Echo?transport=tcp}
for _ in $(seq "$R"); do
	for spec in "$@"; do
		label=${spec%%:*} cmd=${spec#*:}
		out=$(env $cmd bench "$URL" -c "$C" --duration "$D" --json --server-pid "$PROV" 2>/dev/null)
		printf '%s %s load %s\n' "$label" "$(printf '%s' "$out" | python3 -c 'import json,sys
j=json.load(sys.stdin)
print("%.0f calls/s  consumer %.2f  provider %.2f us/call  errors %s" % (j["calls_per_sec"], j["cpu_us_per_call"], j.get("server_cpu_us_per_call", 0), j["errors"]))')" "$(cut -d' ' -f1 /proc/loadavg)"
	done
done
