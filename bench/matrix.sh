#!/usr/bin/env bash
# The issue-9 matrix: airnode (smux and tcp transports) next to the Go peers
# of /work/shared/bench/peers, client and server in separate processes,
# 100-byte echo, one connection, at each concurrency; REPS repeats,
# interleaved (rep-major, system order rotating each rep), medians by the
# peers' own aggregator so every row is computed the same way.
#
#   bench/matrix.sh                            # n=100000, c=1 100 10000, 3 reps
#   N=20000 REPS=1 bench/matrix.sh             # quick look
#   CONCS="100" SYSTEMS="airnode-smux raw" bench/matrix.sh
#
# airnode rows: `airnode serve --transport T` (default dispatcher,
# adaptive; a -all or -direct suffix serves with `-p dispatcher=all|direct`)
# started fresh for each run (as
# peersbench starts its child server), `airnode bench --json --server-pid`
# as the client; the JSON becomes a peersbench result line (same 17
# columns, CPU of the measured phase only on both sides).
set -uo pipefail
cd "$(dirname "$0")/.."

PEERS=${PEERS:-/work/shared/bench/peers}
WORK=$(mktemp -d /tmp/airnode-matrix.XXXXXX)
N=${N:-100000}
REPS=${REPS:-3}
REQ=${REQ:-100}
RESP=${RESP:-100}
read -r -a CONC <<<"${CONCS:-1 100 10000}"
read -r -a SYS <<<"${SYSTEMS:-airnode-smux airnode-tcp airnode-smux-all airnode-tcp-all raw netrpc rpcx grpc smux}"
OUT=${OUT:-bench/results/matrix-$(date -u +%Y%m%dT%H%M%SZ).txt}
mkdir -p "$(dirname "$OUT")"

go build -o "$WORK/airnode" ./cmd/airnode || exit 1
(cd "$PEERS" && go build -o "$WORK/peersbench" .) || exit 1

# airnode_run TRANSPORT[-DISPATCHER] C: one airnode row on stdout; a
# suffix serves with that dispatcher (all: the worker pool; direct: the
# connection's reader), none with the default (adaptive).
airnode_run() {
	local name=$1 transport=${1%%-*} c=$2 log="$WORK/serve.log" pid addr json extra=()
	[ "$name" != "$transport" ] && extra=(-p "dispatcher=${name#*-}")
	"$WORK/airnode" serve --listen 127.0.0.1:0 --registry "file://$WORK/reg" --transport "$transport" "${extra[@]}" 2>"$log" &
	pid=$!
	for _ in $(seq 100); do
		addr=$(grep -o 'serving" addr=[0-9.:]*' "$log" | head -1 | cut -d= -f2)
		[ -n "$addr" ] && break
		sleep 0.1
	done
	if [ -z "$addr" ]; then
		echo "# airnode-$name: serve did not start" >&2
		kill "$pid"
		wait "$pid"
		return 1
	fi
	json=$(timeout 300 "$WORK/airnode" bench "airnode://$addr/demo.Echo" -p "transport=$transport" \
		-n "$N" -c "$c" --req "$REQ" --resp "$RESP" --server-pid "$pid" --json)
	local rc=$?
	kill "$pid"
	wait "$pid" 2>/dev/null
	[ $rc -eq 0 ] || return $rc
	jq -r --arg sys "airnode-$name" --argjson n "$N" --argjson req "$REQ" --argjson resp "$RESP" '
		def r: . * 10 | round / 10;
		[$sys, "split", $n, .concurrency, $req, $resp, 1, (.calls_per_sec | round),
		 (.mean_us | r), (.p50_us | r), (.p99_us | r), (.p999_us | r), (.max_us | r),
		 ([.errors[]] | add // 0), (.cpu_us_per_call | r), ((.server_cpu_us_per_call // 0) | r),
		 ((.cpu_us_per_call + (.server_cpu_us_per_call // 0)) | r)] | map(tostring) | join(" ")' <<<"$json"
}

{
	echo "# airnode matrix $(date -u +%FT%TZ) nproc=$(nproc) $(go version | cut -d' ' -f3-) N=$N REPS=$REPS req=$REQ resp=$RESP"
	echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	"$WORK/peersbench" -print-header
} >"$OUT"

k=${#SYS[@]}
for rep in $(seq 1 "$REPS"); do
	for c in "${CONC[@]}"; do
		for i in $(seq 0 $((k - 1))); do
			sys=${SYS[$(((i + rep - 1) % k))]}
			start=$(date +%s)
			case $sys in
			airnode-*) airnode_run "${sys#airnode-}" "$c" >>"$OUT" 2>>"$OUT.stderr" ;;
			*) timeout 200 "$WORK/peersbench" -system "$sys" -n "$N" -c "$c" -req "$REQ" -resp "$RESP" \
				-timeout 180s -header=false >>"$OUT" 2>>"$OUT.stderr" ;;
			esac
			rc=$?
			echo "rep=$rep sys=$sys c=$c rc=$rc secs=$(($(date +%s) - start)) load=$(cut -d' ' -f1 /proc/loadavg)" >&2
			[ $rc -eq 0 ] || echo "# $sys n=$N c=$c rep=$rep exit=$rc" >>"$OUT"
		done
	done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT"
"$WORK/peersbench" -aggregate "$OUT" >"${OUT%.txt}.md"
cat "${OUT%.txt}.md"
rm -rf "$WORK"
