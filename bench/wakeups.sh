#!/usr/bin/env bash
# Issue 9 at c=1: what the Go runtime does per call, airnode (tcp, `airnode
# serve` and `airnode bench`) next to the raw TCP echo of
# /work/shared/bench/peers (`peersbench -system raw`, server and client in
# separate processes), counted rather than timed: a timing on this VM swings
# 2x with other load, a count per call barely moves.
#
#   bench/wakeups.sh                        # counts, 3 alternated rounds, n=50000 c=1
#   STACKS=1 REPS=1 bench/wakeups.sh        # also who calls futex/nanosleep, per call
#   AIRNODE=/tmp/old/airnode bench/wakeups.sh   # another build of airnode
#
# Counts: perf stat of the client command (startup and warm-up included:
# divided by n + the warm-up, max(min(n/10, 10000), 2c), the same for both)
# and of the server process (-p) while the client runs. Stacks: perf record
# -g of the same events, each sample's seven innermost frames collapsed to
# one line, per call. Needs perf and jq; ports PORT and PORT+1.
set -uo pipefail
cd "$(dirname "$0")/.."

PEERS=${PEERS:-/work/shared/bench/peers}
N=${N:-50000}
C=${C:-1}
REPS=${REPS:-3}
PORT=${PORT:-32100}
STACKS=${STACKS:-0}
WORK=$(mktemp -d /tmp/airnode-wakeups.XXXXXX)
EVENTS='syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_write,syscalls:sys_enter_read,context-switches'
STACK_EVENTS='syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep'

if [ -z "${AIRNODE:-}" ]; then
	go build -o "$WORK/airnode" ./cmd/airnode || exit 1
	AIRNODE=$WORK/airnode
fi
(cd "$PEERS" && go build -o "$WORK/peersbench" .) || exit 1
warm=$((N / 10 < 10000 ? N / 10 : 10000))
[ $warm -lt $((2 * C)) ] && warm=$((2 * C))
calls=$((N + warm))

# start_server SYSTEM ADDR: sets SPID.
start_server() {
	if [ "$1" = raw ]; then
		"$WORK/peersbench" -system raw -server-only -addr "$2" >"$WORK/serve.log" 2>&1 &
	else
		"$AIRNODE" serve --listen "$2" --registry "file://$WORK/reg" --transport tcp >"$WORK/serve.log" 2>&1 &
	fi
	SPID=$!
	sleep 1
}

# client SYSTEM ADDR PREFIX...: runs the client under PREFIX (a perf command).
client() {
	local sys=$1 addr=$2
	shift 2
	if [ "$sys" = raw ]; then
		"$@" "$WORK/peersbench" -system raw -addr "$addr" -n "$N" -c "$C" >"$WORK/client.out" 2>&1
		awk '!/^#/ {print "mean_us " $9}' "$WORK/client.out"
	else
		"$@" "$AIRNODE" bench "airnode://$addr/demo.Echo" -p transport=tcp -n "$N" -c "$C" --json >"$WORK/client.out" 2>&1
		jq -r '"mean_us \(.mean_us * 10 | round / 10) errors \([.errors[]] | add // 0)"' "$WORK/client.out"
	fi
}

# per_call FILE: perf stat -x, output as "event count/call" pairs.
per_call() {
	awk -F, -v n=$calls '/^[0-9]/ { e = $3; sub(/^syscalls:sys_enter_/, "", e); printf "%s %.3f  ", e, $1 / n }' "$1"
}

# collapse FILE: perf script output -> per-call counts of each 7-frame stack.
collapse() {
	perf script -i "$1" -F event,ip,sym 2>/dev/null | awk -v n=$calls '
		/^ *[a-z_]+:[a-z_]+: *$/ { flush(); ev = $1; k = 0; next }
		NF == 0 { flush(); next }
		{ if (k < 7) { f = $2; sub(/\.abi0$/, "", f); s = (k ? s " <- " : "") f; k++ } }
		function flush() { if (ev != "") cnt[ev " " s]++; ev = ""; s = ""; k = 0 }
		END { flush(); for (x in cnt) if (cnt[x] / n >= 0.005) printf "%7.3f %s\n", cnt[x] / n, x }' | sort -rn
}

echo "# wakeups $(date -u +%FT%TZ) nproc=$(nproc) $(go version | cut -d' ' -f3-) n=$N c=$C calls counted=$calls (n + warm-up) load: $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq 1 "$REPS"); do
	for sys in raw airnode; do
		port=$((PORT + (rep + 1) % 2))
		start_server $sys 127.0.0.1:$port
		perf stat -x, -e "$EVENTS" -p $SPID -o "$WORK/server.perf" &
		ppid=$!
		result=$(client $sys 127.0.0.1:$port perf stat -x, -e "$EVENTS" -o "$WORK/client.perf")
		kill -INT $ppid
		wait $ppid 2>/dev/null
		kill $SPID
		wait $SPID 2>/dev/null
		printf "%-8s rep %d %s\n  client: %s\n  server: %s\n" $sys "$rep" "$result" "$(per_call "$WORK/client.perf")" "$(per_call "$WORK/server.perf")"
		if [ "$STACKS" = 1 ]; then
			start_server $sys 127.0.0.1:$port
			perf record -q -g -e "$STACK_EVENTS" -p $SPID -o "$WORK/server.data" 2>/dev/null &
			ppid=$!
			sleep 0.3
			client $sys 127.0.0.1:$port perf record -q -g -e "$STACK_EVENTS" -o "$WORK/client.data" >/dev/null
			kill -INT $ppid
			wait $ppid 2>/dev/null
			kill $SPID
			wait $SPID 2>/dev/null
			echo "  client stacks (per call, innermost first):"
			collapse "$WORK/client.data" | sed 's/^/    /'
			echo "  server stacks:"
			collapse "$WORK/server.data" | sed 's/^/    /'
		fi
	done
done
rm -rf "$WORK"
