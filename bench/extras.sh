#!/usr/bin/env bash
# The issue-9 measurements besides the matrix (bench/matrix.sh), each
# against a fresh `airnode serve` in its own process:
#
#   mixed  small-call latency while 4 MiB responses share the connection,
#          smux vs tcp, REPS repeats (-c MIXC small callers, 2 big callers),
#          and the same small calls without the big ones
#   idle   provider RSS per idle consumer connection (IDLE connections), smux and tcp
#   paper  airnode bench --paper --baseline (the AirRPC paper's cases, with the raw echo)
#
#   bench/extras.sh                 # all three
#   WHAT="mixed" REPS=1 bench/extras.sh
set -uo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-3}
IDLE=${IDLE:-10000}
MIXN=${MIXN:-20000}
MIXC=${MIXC:-10}
read -r -a WHAT <<<"${WHAT:-mixed idle paper}"
WORK=$(mktemp -d /tmp/airnode-extras.XXXXXX)
OUT=${OUT:-bench/results/extras-$(date -u +%Y%m%dT%H%M%SZ).txt}
mkdir -p "$(dirname "$OUT")"
go build -o "$WORK/airnode" ./cmd/airnode || exit 1

PID=
ADDR=
# start_serve TRANSPORT: sets PID and ADDR.
start_serve() {
	local log="$WORK/serve.log"
	"$WORK/airnode" serve --listen 127.0.0.1:0 --registry "file://$WORK/reg" --transport "$1" 2>"$log" &
	PID=$!
	ADDR=
	for _ in $(seq 100); do
		ADDR=$(grep -o 'serving" addr=[0-9.:]*' "$log" | head -1 | cut -d= -f2)
		[ -n "$ADDR" ] && return 0
		sleep 0.1
	done
	echo "serve did not start" >&2
	return 1
}
stop_serve() { kill "$PID"; wait "$PID" 2>/dev/null; }

say() { echo "$*" | tee -a "$OUT"; }

say "# airnode extras $(date -u +%FT%TZ) nproc=$(nproc) load $(cut -d' ' -f1-3 /proc/loadavg)"
for what in "${WHAT[@]}"; do
	case $what in
	mixed)
		say "## mixed: $MIXN small 100 B calls at c=$MIXC; background 2 callers of Payload(4 MiB) on the same connection"
		say "# transport mix rep calls/s p50_us p99_us p999_us errors big_calls"
		for rep in $(seq 1 "$REPS"); do
			for t in smux tcp; do
				for mix in 0 4194304; do
					start_serve "$t" || exit 1
					args=("airnode://$ADDR/demo.Echo" -p "transport=$t" -n "$MIXN" -c "$MIXC" --json)
					[ "$mix" -gt 0 ] && args+=(--mix-resp "$mix" --mix-c 2)
					"$WORK/airnode" bench "${args[@]}" | jq -r --arg t "$t" --arg mix "$mix" --arg rep "$rep" \
						'[$t, $mix, $rep, (.calls_per_sec|round), (.p50_us|round), (.p99_us|round), (.p999_us|round), ([.errors[]]|add // 0), (.background.calls // 0)] | map(tostring) | join(" ")' | tee -a "$OUT"
					stop_serve
				done
			done
		done
		;;
	idle)
		say "## idle: $IDLE idle consumer connections to one provider"
		for t in smux tcp; do
			start_serve "$t" || exit 1
			"$WORK/airnode" bench "airnode://$ADDR/demo.Echo" -p "transport=$t" --idle "$IDLE" --server-pid "$PID" | tee -a "$OUT"
			stop_serve
		done
		;;
	paper)
		say "## paper: airnode bench --paper --baseline (smux, one connection)"
		start_serve smux || exit 1
		"$WORK/airnode" bench "airnode://$ADDR/demo.Echo" --paper --baseline | tee -a "$OUT"
		stop_serve
		;;
	esac
done
say "# load at end $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$WORK"
