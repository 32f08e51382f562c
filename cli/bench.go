package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/airnode/airnode/bench"
	"github.com/airnode/airnode/extensions/cluster/failover"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/netaccept"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// benchFlags are the flags of `airnode bench`.
type benchFlags struct {
	cfg            config.Config // references: defaults for the service's parameters
	registry       string
	registrySet    bool   // --registry given (not the configuration's): a direct run says it is not used
	registrySource string // where registry came from (app.registrySource)
	calls          int64
	callsSet       bool // -n given (a paper run uses 100,000 calls per case otherwise)
	concurrency    int
	concurrencySet bool    // -c given (--rate's default cap is rateCallers otherwise)
	rate           float64 // --rate: calls per second, an open loop; 0: a closed loop
	rateText       string  // --rate as given
	rateSet        bool    // --rate given (an empty one is refused)
	req, resp      int
	duration       time.Duration
	durationSet    bool // --duration given (0 and negative are refused)
	connections    int
	connectionsSet bool // --connections given (else the URL's or -p's connections key, else 1)
	warmup         int64
	timeout        string // as call's --timeout: 500ms, 1.5s or a bare number of ms
	codec          string
	params         []string
	attachments    []string // -a key=value, as call's
	json           bool
	paper          bool
	baseline       bool
	cpuprofile     string
	trace          string
	metrics        string // --metrics ADDR: serve /metrics and /stats while the run lasts
	serverPID      int
	idle           int
	mixResp        int // background Payload(mixResp) callers on the same reference
	mixC           int
	logFormat      string   // --log-format: bench's own stderr lines are JSON records under json
	method         string   // --method: call this method with args instead of demo.Echo's Echo/Payload
	args           []string // --args: ARG_JSON each, as call's (with --method)
	methodSet      bool     // --method given: an empty one is refused
	reqSet         bool     // --req given (refused with --method)
	respSet        bool     // --resp given (refused with --method)
	stdin          io.Reader
}

// benchTimeout is the call timeout of `airnode bench` when neither
// --timeout nor the URL's "timeout" key sets one: long enough for 10,000
// callers queued on a 2-core machine, so that the run measures latency
// rather than the kernel's 1 s default.
const benchTimeout = 10 * time.Second

// benchCommand returns `airnode bench`.
func benchCommand(a *app) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench [flags] SERVICE_URL",
		Short: "Load a demo.Echo provider (or any method: --method) with concurrent calls and report throughput and latency",
		Long: `bench refers to SERVICE_URL (a demo.Echo provider: airnode serve; any service with --method) like call
does, then runs -c concurrent callers in a closed loop for -n calls or
--duration, after an unmeasured warm-up at the same concurrency (--warmup
calls, for at most a tenth of --duration, or 10 s for a counted run: a
--duration run's wall time is about the duration plus a tenth, plus the
calls in flight at its end). -c above -n is lowered to -n (a line on
stderr says so). Each call is Echo with a --req byte payload; when --resp
differs from --req it is Payload(--resp) with the request padded to --req
bytes by an attachment. A --req over the providers' payload limit (URL key
payload, default 8MiB) is refused before anything is allocated.

--rate R makes it an open loop, as wrk2 -R, ghz --rps or vegeta -rate:
calls start at R per second, all callers together (a positive decimal:
0.1 is a call every 10 s), at their intended times start + i/R whatever
the calls in flight, -n of them or those intended before --duration's
end. -c is then the most calls in flight at once (default 1000): a free
caller takes the next call, a new one starts when none is free, and past
-c the call waits for one and starts late, its latency counted from its
intended start (coordinated omission corrected: a stall shows in p99 as
the calls' users feel it); a call a free caller took counts from when it
was handed out (the scheduler's timer lag, about 1 ms in an idle process,
is not the service's latency). A --duration run stops starting calls at
its end, as wrk2 does, and lasts it: calls/s and the timeline are over
the duration (-n's: n/R), not to the last call. The summary's "rate"
line gives the rate asked and reached, the calls that started late and
those never started; --json's "rate" has "asked" (--rate), "reached"
(calls started / (the last one's start + 1/asked, or the time the run
stopped starting calls when it left some unstarted)) and "callers"
(callers started); "late_starts" counts the calls started late only because no
caller was free, "late_worst_us" the worst delay, "not_started" the calls
intended before the run stopped starting calls (its deadline, SIGINT)
that had not started for want of a free caller (0 for -n run to its end),
top-level "concurrency" is -c, the in-flight cap, and "workload" is the
case: "case" (its name), "req", "resp" (bytes; 0 with --method, then
"method", "args"), "concurrency" and "rate".
There is no warm-up unless --warmup N asks for N calls at the same rate.
--rate is refused with --paper and --baseline (closed loops whose figures
it would not be comparable with) and --idle (no calls).

  airnode bench airnode://127.0.0.1:20880/demo.Echo --rate 200 --duration 30s

--method NAME calls NAME instead, on any service (a service plugin's):
--args JSON gives one argument, as call's ARG_JSON (generic JSON, @FILE,
@-), repeated for each argument in order. The calls are generic
invocations, as call's; the reply is not checked, and a failure counts
by status. --req, --resp, --paper, --baseline and --mix-resp are
demo.Echo's and refused with --method (exit 2). The method is not part
of SERVICE_URL: demo.Echo/Echo (gRPC's form) and demo.Echo#Echo are
refused at once (exit 2), as call refuses them, listing the forms.

  airnode bench airnode://127.0.0.1:20880/greeter.Greeter --method Hello --args '"Ann"' -c 8

bench first waits for the listed providers' first connections. When no
provider is usable then, one probing call says why (connection refused,
transport or TLS mismatch) and bench exits 1 at once; a direct run whose
provider answers its first calls SERVICE_NOT_FOUND (no such service or
method) stops too, exit 1 with the provider's message (what it
exports); it reaches no
provider, so the calls the providers count are bench's warm-up and
measured calls and their failover retries, no more. An empty registry
list gets 2 s for a provider to register. A first
connection gets twice connect.timeout and 1 s, however short --timeout
is (the probe is repeated while its timeout ends first).

It prints calls/s (every finished call, failed ones too; "successful" next
to it and --json's ok_per_sec count the calls that succeeded), the latency
of successful calls (mean, p50, p99, p99.9, max; HDR histogram), failed
calls by status name (CHANNEL_INACTIVE split into "CHANNEL_INACTIVE
(sent)", the connection died after the request was sent, so the provider
may have run it, and "CHANNEL_INACTIVE (not sent)"; a failure that
cluster=failsafe swallowed, returning the zero result, is its status and
"(swallowed)": "SERVER_ERROR (swallowed)"; BAD_RESPONSE is a reply that
is not the echo, of another length than the response size asked, or one
the provider or this side's codec refused; the same keys in --json's
"errors"), the client's CPU time per call (getrusage, user+system)
and the attempts each provider took (a call that failover retried counts
once per provider tried). Failed calls are listed first, with the first
error's message; when every call failed, bench exits 1 with that message. A
call that fails while no provider is usable (killed, unreachable, or all
at weight 0) makes its caller wait before the next one, 1 ms doubling to
100 ms until a call succeeds, so a dead provider does not keep the
client's CPU busy; a counted
run (-n) in which no provider has been usable for 5 s stops, prints what it
measured and exits 1. The summary's "timeout" line (--json's
call_timeout_ms, call_timeout_from and call_timeout_source) gives the
calls' timeout and where it came from: --timeout, the URL key timeout
and who set it (SERVICE_URL, -p, the configuration's reference or
consumer section, an AIRNODE_CONSUMER_ variable: "from env
AIRNODE_CONSUMER_TIMEOUT"), or bench's default, 10s, ten times a consumer's 1s: a
provider that stalls (SIGSTOP) parks the callers that picked it that long,
so use --timeout 1s to measure what a consumer at its defaults sees.
A "retries" line (--json's retries_made and retries_paused_calls) counts
failover's retries of the measured calls and, with a retry budget (URL
key retry.tokens), the calls whose retries it paused: one per call, as
/metrics' budget_refused; such a call's error says "retries paused" and,
as "skipped N", how many of its own retries it did not make.
--json prints one object instead, with a per-second
timeline of calls and errors (how a failover looks) and "start", the
wall-clock start of the measured phase (RFC 3339 in UTC with ms,
2026-12-04T05:06:02.536Z; the summary's first line ends with it), when
the timeline's second 0 began: to line it up with deploy or kill times.
A second's "calls" count calls as they finish, its "providers_per_sec"
the attempts sent to each provider (the kernel's invoker statistics:
finished + in flight), so a stopped provider shows at once. A provider that
finishes none of the calls it has in flight for longer than 4 times the
longest call finished so far (at least 2 s), or than twice the call
timeout (at least 5 s), whichever is shorter (stopped, hung, its socket
buffers full) is named in a warning on stderr, once per stall:
with every caller waiting on it, the timeline's second shows 0 calls and
no provider. A progress bar is
drawn on a terminal.

SIGINT (Ctrl-C) or SIGTERM ends the run early: the calls in flight that it
cuts short are counted neither as calls nor as errors nor in latency, but
apart, with the oldest one's age ("cut short" line; --json's "cut_short",
"cut_short_oldest_us", µs), and the timeline lists every second up to the
end (those no call finished in with 0 calls); nor are their
attempts in the providers' (the attempts add up to the calls, as in a full
run, when failover retried none), the report of the calls that finished
("timeline": [] when interrupted before the measured phase) says
"interrupted by SIGINT after 2.07 s of
the planned 10s" (--json: "interrupted": true, "signal", "planned_sec" or
"planned_calls"), the same line goes to stderr, and bench exits 130 (143
for SIGTERM), as a shell reports SIGINT. With --paper the remaining cases
are not run.

SERVICE_URL is taken as call takes it: airnode://host:port/service is a
direct run (no registry, not even --registry: a line on stderr says so), a
service key is found in the registry, and a host without a port is refused.
A URL key given two ways, in SERVICE_URL's query, by -p key=value, or by
--timeout (500ms, 1.5s or a bare number of ms, as call's), --codec or
--connections, must have the same value, else bench refuses both, naming
them (none is ranked above another). Without --connections, the URL's (or
-p's) connections key is used, else 1.

With --json, a run that fails before it measures prints
{"error": MESSAGE, "calls": 0} on stdout: exit 1 when it found no
provider, exit 2 (a usage error) for a bad flag value, an unknown flag
or a missing SERVICE_URL.

--paper runs the five local cases of the AirRPC paper's table (100,000
calls each unless -n or --duration says otherwise) and prints our figures
next to the paper's. --baseline also runs every case against a plain
pipelined TCP echo in this process (client and server) and prints ratios.

  airnode bench airnode://127.0.0.1:20880/demo.Echo -n 100000 -c 100
  airnode bench 'demo.Echo?loadbalance=roundrobin' --duration 30s -c 50 --json
  airnode bench airnode://127.0.0.1:20880/demo.Echo --paper --baseline`,
		Args: argsRange(1, 1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			handlePipe() // a log reader gone does not end the run (serve_signals.go)
			stdout := &writeCounter{w: a.stdout}
			if f.json {
				defer func() {
					if re := commandRegistryRefusal(cmd, err); re != nil { // as runApp reports it (fix-cj)
						err = usage(fmt.Errorf("bench: %w", re))
					}
					if err != nil && stdout.n == 0 {
						printJSONFailure(a.stdout, err)
					}
				}()
			}
			f.callsSet = cmd.Flags().Changed("calls")
			f.durationSet = cmd.Flags().Changed("duration")
			f.connectionsSet = cmd.Flags().Changed("connections")
			f.registrySet = cmd.Flags().Changed("registry")
			f.reqSet, f.respSet = cmd.Flags().Changed("req"), cmd.Flags().Changed("resp")
			f.methodSet = cmd.Flags().Changed("method")
			f.concurrencySet = cmd.Flags().Changed("concurrency")
			f.rateSet = cmd.Flags().Changed("rate")
			f.stdin = cmd.InOrStdin()
			if !cmd.Flags().Changed("resp") {
				f.resp = f.req
			}
			env, done, err := a.consumerSetup(cmd, &f.registry, args[0], f.params)
			if err != nil {
				return err
			}
			defer done()
			f.cfg = env.cfg
			f.registrySource = a.registrySource(f.registrySet)
			f.logFormat = a.logFormat
			return runBench(env.ctx, env.cat, f, args[0], env.logger, stdout, a.stderr, progressWriter(a.stderr))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.registry, "registry", "", "registry URL for a SERVICE_URL without host "+registryDefaultHelp+"; not used for host:port")
	fl.Int64VarP(&f.calls, "calls", "n", 100_000, "measured calls (not with --duration)")
	fl.IntVarP(&f.concurrency, "concurrency", "c", 1, "concurrent callers (1 to 1,000,000; at most -n); with --rate the most calls in flight at once, callers started as the calls need them: 1000 unless given")
	fl.Var(rateFlag{&f.rateText}, "rate", "open loop: start this many calls per second, all callers together, on schedule whatever the calls in flight (a positive decimal, 0.001 to 1000000: 0.1 is a call every 10 s); a call no caller is free for starts late and its latency counts from its intended start, the others' from when they start; a --duration run starts none after its end; no warm-up unless --warmup N (then at the same rate); not with --paper, --baseline or --idle")
	sizeVar(fl, &f.req, "req", 100, "request payload: bytes (100) or a size (64KiB): 0 to the payload limit (URL key payload, default 8MiB, less the request preamble and codec framing: 24 bytes under msgpack; bench names the exact bound when it refuses one)")
	sizeVar(fl, &f.resp, "resp", 100, "response payload: bytes (100) or a size (64KiB)")
	fl.Lookup("resp").DefValue = "--req's"
	fl.DurationVar(&f.duration, "duration", 0, "measure for this long instead of -n calls (positive; warm-up takes at most a tenth of it more)")
	fl.IntVar(&f.connections, "connections", 1, "connections per provider (URL key connections, 1 to 64)")
	fl.Int64Var(&f.warmup, "warmup", -1, "unmeasured calls first, for at most a tenth of --duration, or 10 s (0: none; -1, the default: as many as bench picks for the run)")
	fl.Lookup("warmup").DefValue = "max(min(n/10, 10000), 2c); 2000 with --duration; none with --rate" // -1 is the sentinel for it
	fl.Lookup("duration").DefValue = ""                                                                // none: -n calls
	fl.Var(durationText{&f.timeout}, "timeout", "call timeout: 500ms, 1.5s, or a bare number of ms (each call's own timeout, as call's: it beats every URL level, a provider's methods.M.timeout or M.timeout too; default: the URL's timeout key, else 10s, ten times a consumer's 1s; the report says which)")
	fl.StringVar(&f.codec, "codec", "", "codec extension (URL key codec; default msgpack)")
	fl.StringArrayVarP(&f.params, "param", "p", nil, "key=value URL parameter (repeatable; refused when SERVICE_URL, --timeout, --codec or --connections sets the key to another value)")
	fl.StringArrayVarP(&f.attachments, "attachment", "a", nil, "key=value attachment sent with every call, as call's -a (repeatable; the kernel's keys remote, timeout and token are refused)")
	fl.BoolVar(&f.json, "json", false, "print one JSON object")
	fl.StringVar(&f.method, "method", "", "call this method of SERVICE_URL instead of demo.Echo's Echo (any service: a plugin's); not with --req, --resp, --paper, --baseline or --mix-resp")
	fl.StringArrayVar(&f.args, "args", nil, "with --method: one argument as JSON, as call's ARG_JSON (@FILE, @- read it); repeat it for each argument, in order")
	fl.BoolVar(&f.paper, "paper", false, "run the AirRPC paper's five local cases and print them next to the paper's means")
	fl.BoolVar(&f.baseline, "baseline", false, "also run each case on a plain pipelined TCP echo in this process and print ratios")
	sizeVar(fl, &f.mixResp, "mix-resp", 0, "also run --mix-c background callers of Payload(BYTES) on the same connection(s), unmeasured (large responses mixed with the measured small calls)")
	fl.IntVar(&f.mixC, "mix-c", 1, "background callers for --mix-resp")
	fl.IntVar(&f.idle, "idle", 0, "instead of calls: open this many idle connections (one Echo each) and report the provider's RSS per connection (needs --server-pid)")
	fl.IntVar(&f.serverPID, "server-pid", 0, "also report the CPU time per call of this provider process (same machine; its CPU-time clock, in ns, on Linux)")
	fl.StringVar(&f.cpuprofile, "cpuprofile", "", "write the consumer's CPU profile (pprof) to this file, from the measured phase's start (the warm-up left out) to the end")
	fl.StringVar(&f.metrics, "metrics", "", "serve the consumer's /metrics and /stats on this host:port while the run lasts (as serve --metrics: airnode_consumer_* series, airnode stats ADDR)")
	fl.StringVar(&f.trace, "trace", "", "write the consumer's execution trace (go tool trace) to this file, from the measured phase's start to the end")
	return cmd
}

// writeCounter counts the bytes written through it to w, and keeps the
// first write error (runApp fails a command whose output could not be
// written, also one that did not check: version > /dev/full).
type writeCounter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *writeCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// benchFailure is what bench --json prints on stdout when the run fails
// before printing a report (no provider, a bad flag value), so that a
// script reading the JSON gets an object: the error (as printed on stderr,
// without the "airnode: " prefix) and no calls.
type benchFailure struct {
	Error string `json:"error"`
	Calls int64  `json:"calls"` // always 0
}

// printJSONFailure prints err as a benchFailure on w.
func printJSONFailure(w io.Writer, err error) {
	enc := jsonOutput(w)
	_ = enc.Encode(benchFailure{Error: err.Error()})
}

// progressWriter returns w when it writes to a terminal (the progress bar
// is drawn there), else nil. w may wrap the terminal's *os.File (stderr
// is a redactingWriter): the check looks through every writer with an
// Unwrap() io.Writer method, and the bar is still written through w, so
// what it prints is redacted like any other line.
func progressWriter(w io.Writer) io.Writer {
	if isTerminal(w) {
		return w
	}
	return nil
}

// isTerminal reports whether w, or the writer it wraps (Unwrap() io.Writer,
// at any depth), is an *os.File open on a terminal.
func isTerminal(w io.Writer) bool {
	for w != nil {
		if f, ok := w.(*os.File); ok {
			return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
		}
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
	return false
}

// benchCase is one workload: payload sizes and concurrency.
type benchCase struct {
	Name string `json:"case"`
	// Method, with Args (each ARG_JSON as given), is --method's: the call
	// made instead of demo.Echo's Echo or Payload, Req and Resp then 0
	// and the reply not checked.
	Method      string   `json:"method,omitempty"`
	Args        []string `json:"args,omitempty"`
	Req         int      `json:"req"`
	Resp        int      `json:"resp"`
	Concurrency int      `json:"concurrency"`
	Rate        float64  `json:"rate,omitempty"`     // --rate, calls/s (Concurrency then the most callers); 0: a closed loop
	PaperMS     float64  `json:"paper_ms,omitempty"` // the AirRPC paper's mean, ms; 0: none or collapsed
	PaperNote   string   `json:"paper,omitempty"`

	args []any // Args decoded
	// direct: SERVICE_URL named the provider's address (no registry), so
	// a SERVICE_NOT_FOUND answer to the run's first calls stops it
	// (notServedError)
	direct bool
}

// name is c's Name for a run of the command line: "100/100 B c=8",
// "Sleep c=8", "100/100 B rate=200/s c=1000".
func (c benchCase) name() string {
	what := fmt.Sprintf("%d/%d B", c.Req, c.Resp)
	if c.Method != "" {
		what = c.Method
	}
	if c.Rate > 0 {
		what += " rate=" + strconv.FormatFloat(c.Rate, 'f', -1, 64) + "/s"
	}
	return fmt.Sprintf("%s c=%d", what, c.Concurrency)
}

// paperCases are the five local cases of the AirRPC paper's table with its
// mean latency per call (c=10,000 collapsed: over 1 s per call).
var paperCases = []benchCase{
	{Name: "10/10 B c=1", Req: 10, Resp: 10, Concurrency: 1, PaperMS: 0.322},
	{Name: "100/100 B c=1", Req: 100, Resp: 100, Concurrency: 1, PaperMS: 0.348},
	{Name: "1000/100 B c=1", Req: 1000, Resp: 100, Concurrency: 1, PaperMS: 0.369},
	{Name: "100/100 B c=100", Req: 100, Resp: 100, Concurrency: 100, PaperMS: 0.350},
	{Name: "100/100 B c=10000", Req: 100, Resp: 100, Concurrency: 10_000, PaperNote: "collapsed (over 1 s per call)"},
}

// benchOutcome is one case's results: the JSON object --json prints for a
// single case (the report's fields at the top level).
type benchOutcome struct {
	*bench.Report
	// OKPerSec is the successful calls per second of the measured phase
	// (ok / elapsed_sec); the report's calls_per_sec counts every finished
	// call, failed ones too.
	OKPerSec   float64           `json:"ok_per_sec"`
	Case       *benchCase        `json:"workload,omitempty"`
	Background *backgroundReport `json:"background,omitempty"` // --mix-resp calls
	Baseline   *bench.Report     `json:"baseline,omitempty"`
	// Stopped says why a counted run ended before its -n calls (no
	// provider usable for deadStop); empty when it did not.
	Stopped string `json:"stopped,omitempty"`
	// ConnectionsUp and ConnectionsAsked count the measured reference's
	// connections: up (answered their first ping) of asked (--connections
	// per provider listed at the end of the run, not shutting down). Up
	// is asked less the most connections that were never up at once
	// during the run, once their provider's first attempts had ended
	// (connect.timeout after it was listed; connWatch), not counting
	// those that came up after the run, and less
	// ConnectionsDownAtEnd. Never up means a provider did not accept them all
	// (out of file descriptors? its accepts limit, other consumers?).
	ConnectionsUp    int `json:"connections_up"`
	ConnectionsAsked int `json:"connections_asked"`
	// ConnectionsLost counts this process's connections that were up and
	// died during the run (warm-up included) without bench closing them,
	// whatever closed them: the provider, a heartbeat verdict, the liveness
	// check (airnode_consumer_connections_lost_total over the run; a
	// connection lost and re-made counts here and in Reconnects).
	// ConnectionsDownAtEnd counts the measured reference's connections
	// that were up and were down at the end of the run, their provider
	// still listed (killed, stalled or cut off); until tester76 #2
	// connections_lost was this count. ProvidersRestarted counts the
	// provider addresses where a new process started during the run (a
	// rolling restart): the start the provider's hello gave on them
	// (kernel.ProviderConnections.Started) changed; an entry that left
	// and was listed again with the same start (a stopped provider whose
	// ZooKeeper session expired) is not one (tester100 #1). ProvidersLeft
	// counts those that left the directory or announced their shutdown
	// and did not come back: neither is a connection a provider refused.
	// All 0 on a clean run.
	ConnectionsLost      uint64 `json:"connections_lost"`
	ConnectionsDownAtEnd int    `json:"connections_down_at_end"`
	ProvidersRestarted   int    `json:"providers_restarted"`
	ProvidersLeft        int    `json:"providers_left"`
	// ProvidersUnreachedLeft counts the providers listed during the run
	// that no connection ever reached and that left the registry before
	// its end (a killed provider's entry until its session expired):
	// not in ProvidersLeft, and not counted against ConnectionsUp;
	// UnreachedError is why one's last attempt failed.
	ProvidersUnreachedLeft int    `json:"providers_unreached_left"`
	UnreachedError         string `json:"unreached_error,omitempty"`
	// ConnectionsFailedHere counts, of the connections not up, those
	// whose last dial failed in this process, not at the provider (out
	// of file descriptors, ephemeral ports or socket buffers:
	// kernel.Reference.LocalConnectFailures); LocalError is what one of
	// them says.
	ConnectionsFailedHere int    `json:"connections_failed_here,omitempty"`
	LocalError            string `json:"local_connect_error,omitempty"`
	// ConnectError is why one connection that was not up at the end of
	// the run failed its last attempt, when it failed at or on the way
	// to its provider (a TLS verification failure, a refused
	// connection; kernel.ProviderConnections.Err): the summary says it
	// instead of guessing. Empty when none did.
	ConnectError string `json:"connect_error,omitempty"`
	// Reconnects counts the connections this process re-made during the
	// run (warm-up included): a lost connection that came up again counts
	// one, however many dials that took; ReconnectAttempts counts those
	// dials, failed ones included (until tester76 #2 reconnects counted
	// the dials). HeartbeatCloses counts the connections its heartbeat
	// strategy closed (idle or silent too long, pings failed), and
	// LivenessCloses those its liveness check closed (calls timed out
	// with nothing read, and a ping unanswered: a black-holed path). They
	// are the process's airnode_reconnects_total,
	// airnode_reconnect_attempts_total and
	// airnode_channels_closed_total{reason="heartbeat"} and
	// {reason="liveness"} over the run. Connections a provider closed are
	// in ConnectionsLost and, once re-made, Reconnects, also when the
	// provider's registry entry left and came back meanwhile (the kernel's
	// connLine).
	Reconnects        uint64 `json:"reconnects"`
	ReconnectAttempts uint64 `json:"reconnect_attempts"`
	HeartbeatCloses   uint64 `json:"heartbeat_closes"`
	LivenessCloses    uint64 `json:"liveness_closes"`
	// CallTimeoutMS is the measured calls' timeout in ms (0: none), and
	// CallTimeoutFrom where it came from: "--timeout", "url" (the URL key
	// timeout from SERVICE_URL, -p or plugins.yaml's reference; "url
	// methods.Echo.timeout" for a method-level key), or "default" (bench's
	// benchTimeout, 10 s: ten times the kernel's 1 s), so that a reader of
	// a stalled provider's timeline knows how long its callers were parked
	// (tester67 #1).
	CallTimeoutMS   int64  `json:"call_timeout_ms"`
	CallTimeoutFrom string `json:"call_timeout_from"`
	// CallTimeoutSource is where the timeout's value was given
	// (keySource's words, as call's warnings name them): "--timeout",
	// "SERVICE_URL", "-p", "config references[0].params", "config
	// consumer.timeout", "env AIRNODE_CONSUMER_TIMEOUT", or "default"
	// (tester85 #3: "url" did not say which of these set it).
	CallTimeoutSource string `json:"call_timeout_source"`
	// RetriesMade counts the failover retries the measured calls made
	// (attempts after a call's first), and RetriesPausedCalls the
	// measured calls whose retries the reference's retry budget
	// (retry.tokens) paused: each failed with its last attempt's status,
	// its error saying "retries paused" and, as "skipped N", how many of
	// its own retries it did not make. One per call, as the consumer's
	// airnode_consumer_retries_total{outcome="budget_refused"} counts them
	// (tester84 #7: the metric counted calls where the errors counted
	// retries, and bench's summary said neither). Both 0 without retries;
	// the process's counters over the measured phase, --mix-resp's
	// background calls included.
	RetriesMade        uint64 `json:"retries_made"`
	RetriesPausedCalls uint64 `json:"retries_paused_calls"`
	retryTokens        string // the reference's retry.tokens, for the summary
	service            string // the reference's service key, for the failure record (runError)
	// Interrupted says that SIGINT or SIGTERM (Signal) ended the run
	// early: the report covers the calls that finished before it, and the
	// calls in flight that it cut short are in no count. PlannedCalls (-n)
	// or PlannedSec (--duration) is what the run was to do. With
	// --baseline, a baseline run the signal cut short is left out.
	Interrupted  bool    `json:"interrupted,omitempty"`
	Signal       string  `json:"signal,omitempty"`
	PlannedCalls int64   `json:"planned_calls,omitempty"`
	PlannedSec   float64 `json:"planned_sec,omitempty"`

	sig        syscall.Signal // the signal of Interrupted
	inBaseline bool           // it came during the baseline run
}

// benchMethods returns the methods the calls of cases make: each case's
// --method, else Echo, and Payload for a case whose --resp differs from
// its --req.
func benchMethods(cases []benchCase) []string {
	var ms []string
	for _, c := range cases {
		m := cmp.Or(c.Method, "Echo")
		if c.Method == "" && c.Req != c.Resp {
			m = "Payload"
		}
		if !slices.Contains(ms, m) {
			ms = append(ms, m)
		}
	}
	return ms
}

// callTimeout returns the timeout of method's calls on u, in ms (0: none),
// and where it came from: from ("--timeout", "url" or "default", for the
// service-level key timeout) or, for a method-level key that overrides
// it, "url " and that key (methods.Echo.timeout).
func callTimeout(u spi.URL, method, from string) (int64, string) {
	d, err := u.MethodDuration(method, "timeout", benchTimeout)
	if err != nil {
		d = benchTimeout // the kernel refuses it at the first call
	}
	if _, src, ok := u.MethodParam(method, "timeout"); ok && src != "timeout" {
		from = "url " + src
	}
	return d.Milliseconds(), from
}

// timeoutText is the summary's timeout line's value: "10s per call
// (bench's default, ten times the kernel's 1s: ...)".
func timeoutText(o benchOutcome) string {
	d := (time.Duration(o.CallTimeoutMS) * time.Millisecond).String()
	if o.CallTimeoutMS == 0 {
		d = "none"
	}
	switch from := o.CallTimeoutFrom; {
	case from == "default":
		return fmt.Sprintf("%s per call (bench's default; a consumer's is %v: --timeout %v measures as one would, a stalled provider parking its callers that long)", d, kernel.DefaultTimeout, kernel.DefaultTimeout)
	case from == "--timeout":
		return d + " per call (--timeout)"
	default:
		key := timeoutKey(from)
		if src := o.CallTimeoutSource; src != "" {
			return fmt.Sprintf("%s per call (URL key %s, from %s)", d, key, src)
		}
		return fmt.Sprintf("%s per call (URL key %s)", d, key)
	}
}

// retryCounts returns the retries failover made so far for the
// references of service key service, process-wide (counters.Retry's
// Made), and the calls whose retries its retry budget paused
// (BudgetRefused); 0, 0 before its first retry. It does not make the
// key's counters (counters.Retry.For would, and the consumer's /metrics
// would then list a service that never retried).
func retryCounts(service string) (made, paused uint64) {
	counters.Retry.Each(func(s string, r *counters.Retries) {
		if s == service {
			made, paused = r.Made.Load(), r.BudgetRefused.Load()
		}
	})
	return made, paused
}

// retriesText is the summary's retries line's value: "4 made; 1252 calls
// had their retries paused by the retry budget (retry.tokens=10): ...".
func retriesText(o benchOutcome) string {
	s := fmt.Sprintf("%d made (attempts after a call's first)", o.RetriesMade)
	if o.RetriesPausedCalls == 0 {
		return s
	}
	budget := "the retry budget"
	if o.retryTokens != "" {
		budget += " (" + failover.KeyRetryTokens + "=" + o.retryTokens + ")"
	}
	return fmt.Sprintf("%s; %d calls had their retries paused by %s, one count per call as /metrics' budget_refused: each failed with its last attempt's status, and its error's \"skipped N\" is the N retries that call did not make", s, o.RetriesPausedCalls, budget)
}

// timeoutSource returns where the timeout of a case came from, given
// from, its callTimeout origin: "--timeout" and "default" as they are,
// and for a URL key (service- or method-level) the source keySource
// finds among SERVICE_URL target, -p and the configuration; "url" when
// it finds none.
func timeoutSource(f benchFlags, target, from string) string {
	switch from {
	case "--timeout", "default":
		return from
	}
	return cmp.Or(keySource(f.cfg, target, f.params, timeoutKey(from)), "url")
}

// timeoutKey is the URL key of callTimeout's origin from: "timeout" for
// "url", "methods.Echo.timeout" for "url methods.Echo.timeout".
func timeoutKey(from string) string {
	return cmp.Or(strings.TrimSpace(strings.TrimPrefix(from, "url")), "timeout")
}

// fill sets the fields derived from the report: OKPerSec, and an empty
// timeline rather than null when no measured call finished (a run
// interrupted during its warm-up).
func (o *benchOutcome) fill() {
	if o.Report == nil {
		return
	}
	if o.Timeline == nil {
		o.Timeline = []bench.Second{}
	}
	if o.ElapsedSec > 0 {
		o.OKPerSec = float64(o.OK) / o.ElapsedSec
	}
}

// interruption says when the signal came: "interrupted by SIGINT after
// 2.07 s of the planned 10s", "... after 2.07 s, at 18057 of the planned
// 100000 calls", "... during the warm-up, before any measured call".
func (o benchOutcome) interruption() string {
	by := "interrupted by " + o.Signal
	r := o.Report
	switch {
	case o.inBaseline:
		return by + " during the baseline run, which is left out"
	case r.Calls == 0:
		return by + " during the warm-up, before any measured call"
	case o.PlannedCalls > 0:
		return fmt.Sprintf("%s after %.2f s, at %d of the planned %d calls", by, r.ElapsedSec, r.Calls, o.PlannedCalls)
	default:
		return fmt.Sprintf("%s after %.2f s of the planned %v", by, r.ElapsedSec, time.Duration(o.PlannedSec*float64(time.Second)))
	}
}

// runBench refers to target and runs the single case of f, or the paper's
// cases, printing the outcome to stdout and a progress bar to progress
// (nil: none) and warnings (a --server-pid whose CPU time cannot be read or
// did not grow) to stderr.
//
// It returns an error (bench exits 1), after printing the outcome, when
// every measured call of a case failed; the error carries the first
// failure's message.
func runBench(ctx context.Context, cat *extension.Catalogs, f benchFlags, target string, logger *slog.Logger, stdout, stderr, progress io.Writer) (err error) {
	if err := checkBenchBounds(f); err != nil {
		return usage(err)
	}
	if err := parseRate(&f); err != nil {
		return usage(err)
	}
	if f.durationSet && f.callsSet {
		return usage(fmt.Errorf("bench: -n %d and --duration %v both given: give one (-n measures that many calls, --duration measures for that long)", f.calls, f.duration))
	}
	if err := checkMethodFlags(f); err != nil {
		return usage(err)
	}
	kv, err := attachmentPairs(f.attachments)
	if err != nil {
		return usage(fmt.Errorf("bench: %w", err))
	}
	if f.method != "" {
		// a generic invocation, as call's: -a generic=false overrides
		kv = append([]string{spi.AttachmentGeneric, spi.GenericTrue}, kv...)
	}
	if len(kv) > 0 {
		ctx = spi.WithAttachments(ctx, kv...) // every call of the run carries them
	}
	if f.duration > 0 {
		f.calls = 0
	}
	run := bench.Config{Calls: f.calls, Duration: f.duration, Concurrency: f.concurrency, Warmup: f.warmup, Rate: f.rate}
	if run.Duration == 0 && run.Calls <= 0 { // one message for 0 and negative
		return usage(fmt.Errorf("bench: -n %d: want a positive number of calls (or give --duration)", run.Calls))
	}
	if err := run.Validate(); err != nil {
		return usage(err) // what checkBenchBounds left to bench.Config: the flags' values
	}
	cases := []benchCase{{Req: f.req, Resp: f.resp, Concurrency: f.concurrency, Rate: f.rate}}
	if f.method != "" {
		cases = []benchCase{{Method: f.method, Args: f.args, Concurrency: f.concurrency, Rate: f.rate}}
	}
	cases[0].Name = cases[0].name()
	if f.paper {
		cases = paperCases
	}

	var flags []flagParam
	if f.timeout != "" {
		if err := checkDuration("--timeout", f.timeout); err != nil {
			return usage(fmt.Errorf("bench: %w", err))
		}
		flags = append(flags, flagParam{"--timeout", f.timeout, "timeout", f.timeout})
	}
	if f.codec != "" {
		flags = append(flags, flagParam{"--codec", f.codec, "codec", f.codec})
	}
	if f.connectionsSet {
		n := strconv.Itoa(f.connections)
		flags = append(flags, flagParam{"--connections", n, "connections", n})
	}
	if err := methodInServiceURL("bench", target); err != nil {
		return usage(fmt.Errorf("bench: %w", err)) // call's check: demo.Echo/Echo, demo.Echo#Echo
	}
	u, err := consumerURL(f.cfg, target, f.params, flags)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	// a key's value the kernel refuses, given on the command line: a
	// usage error naming where (commandLineKeyError)
	given := commandLineKeys(f.params, flags, "SERVICE_URL", argQuery(target))
	method := f.method
	if method == "" && !f.paper {
		method = "Echo" // each call is Echo without --method
	}
	// --timeout is each call's own timeout, as call's (ownTimeout): it
	// beats the provider's method-level key, unless the command line sets
	// one of its own for a method the run calls
	own := true
	for _, m := range benchMethods(cases) {
		_, ok := ownTimeout(f.timeout, u, m)
		own = own && ok
	}
	if own {
		kv = append(kv, spi.AttachmentTimeout, f.timeout)
		ctx = spi.WithAttachments(ctx, spi.AttachmentTimeout, f.timeout)
	}
	defer func() {
		// a call's failure (no provider available: the probe's error) is
		// recorded with its status, service, method and provider, as
		// call's is
		if _, ok := errors.AsType[*spi.Error](err); ok {
			err = withCallAttrs(err, err, u.ServiceKey(), method)
		}
	}()
	for _, w := range configWarnings(f.cfg, u, method, flags) {
		warnLine(stderr, f.logFormat, "bench", w)
	}
	reg, err := referRegistry(cat, f.registry, f.registrySet, u, target, "bench", stderr, f.logFormat)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if !reg.IsZero() {
		if err := awaitFileRegistryDir(ctx, "bench", f.registry, f.registrySource, registryGrace); err != nil {
			return err
		}
	}
	if f.method != "" {
		limit, err := u.Size("payload", protocol.DefaultPayload)
		if ke := commandLineKeyError("bench", u.ServiceKey(), given, err); ke != nil {
			return ke
		}
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if cases[0].args, err = benchArgs(f.args, f.stdin, limit); err != nil {
			if _, read := errors.AsType[readArgError](err); read {
				return err
			}
			return usage(err) // an --args value that is not JSON, @- twice
		}
	}
	timeoutFrom := "url" // where the calls' timeout comes from (callTimeout)
	if f.timeout != "" {
		timeoutFrom = "--timeout"
	}
	if _, ok := u.Param("timeout"); !ok {
		u = u.With("timeout", benchTimeout.String())
		timeoutFrom = "default"
	}
	if !f.connectionsSet { // -p connections= or the URL's key, else --connections' default
		n, err := u.MethodIntIn("", "connections", int64(f.connections), 1, kernel.MaxConnections, "") // Refer's bounds and words
		if ke := commandLineKeyError("bench", u.ServiceKey(), given, err); ke != nil {
			return ke
		}
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		f.connections = int(n)
	} else if f.connections < 1 || f.connections > kernel.MaxConnections {
		return usage(fmt.Errorf("bench: --connections %d: want 1 to %d", f.connections, kernel.MaxConnections))
	}
	u = u.With("connections", strconv.Itoa(f.connections))
	if f.idle > 0 {
		// benchIdle dials without a node, so no Refer checks the keys:
		// its check (transport, codec, heartbeat, connection keys), with
		// a refused key of the command line a usage error as elsewhere
		if err := kernel.CheckConsumerKeys(cat, u); err != nil {
			if ke := commandLineKeyError("bench", u.ServiceKey(), given, err); ke != nil {
				return ke
			}
			return fmt.Errorf("bench: %w", err)
		}
		if err := checkReqOf(f.method, cat, benchCase{Req: f.req, Resp: f.req, Concurrency: 1}, nil, []spi.URL{u}); err != nil {
			return err
		}
		err := benchIdle(ctx, cat, u, f, logger, stdout)
		if sig, ok := signalOf(ctx); ok && err != nil {
			return interruptedBench(sig, "before it measured the idle connections", stderr, f.logFormat)
		}
		return err
	}
	if err := cat.Filter.Register(padBuilder{}, extension.Bundled); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	cuts := &cutAttempts{}
	if err := cat.Filter.Register(attemptsBuilder{cuts}, extension.Bundled); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := cat.Filter.Register(swallowedBuilder{}, extension.Bundled); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if f.metrics != "" {
		// the consumer's own series (airnode_consumer_*), for as long as
		// the run lasts: the CLI's one long-lived consumer (tester67 #4)
		ms, err := serveMetrics(cat, "bench", f.metrics)
		if err != nil {
			return err
		}
		defer ms.Close()
		commandLogger(logger, "bench").Info("airnode bench: metrics", "addr", ms.Addr().String())
	}
	node := kernel.NewNode(cat, kernel.WithLogger(logger), kernel.WithKeySource(envKeySource(f.cfg, given)))
	defer node.Close()
	// refs[true] pads requests (cases whose request and response sizes
	// differ); the plain one has no padding filter in its chain. Both share
	// the node's connections.
	refs := map[bool]*kernel.Reference{}
	referred := map[*kernel.Reference]time.Time{} // when each was referred (watchConnections)
	refer := func(pad bool) (*kernel.Reference, error) {
		if r, ok := refs[pad]; ok {
			return r, nil
		}
		start := time.Now()
		ru := u.With(attemptsKey, "on")
		if mayBeSwallowed(cat, u) {
			ru = ru.With(swallowedKey, "on")
		}
		if pad {
			ru = ru.With(padKey, "on")
		}
		began := time.Now()
		rctx, cancel := context.WithTimeout(ctx, max(10*time.Second, connectWait(ru)+time.Second))
		defer cancel()
		r, err := node.Refer(rctx, ru, reg)
		if ke := commandLineKeyError("bench", u.ServiceKey(), given, err); ke != nil {
			return nil, ke
		}
		if err == nil {
			err = waitProviders(rctx, r)
		}
		if err != nil && reg.IsZero() {
			// a direct address whose provider closed the connection at
			// its first ping: with no transport named, one more try over
			// the other bundled transport, as call's and health's
			ou, retried, rerr := overOtherTransport(rctx, time.Since(began), "bench", ru, err, func(ou spi.URL) (bool, error) {
				if r != nil {
					_ = r.Close()
				}
				or, err := node.Refer(rctx, ou, reg)
				if err != nil {
					return false, err
				}
				r = or
				err = waitProviders(rctx, or)
				return err == nil, err
			}, stderr, f.logFormat)
			if retried {
				other, _ := ou.Param("transport")
				u = u.With("transport", other) // the other case's reference too
			}
			err = mismatchError(rerr, ru, transportSource(given, f.cfg, target))
		}
		if err == nil {
			// the other providers' first connections too, so that the
			// warm-up calls and the first measured ones are spread by
			// effective weight, not all sent to the first to connect
			// (bounded by connect.timeout, as a consistenthash
			// reference's first call is; `airnode call` waits 1 s at most)
			r.WaitSettled(rctx)
		}
		if err != nil {
			return nil, withRegistryShown(fmt.Errorf("bench: %w", err), reg)
		}
		refs[pad], referred[r] = r, start
		return r, nil
	}

	// The profile and the trace start with the first case's measured
	// phase (its warm-up's goroutine starts and stack growth left out)
	// and end when bench does.
	var profiles []func() error
	if f.cpuprofile != "" {
		pf, err := os.Create(f.cpuprofile)
		if err != nil {
			return fmt.Errorf("bench: --cpuprofile: %w", err)
		}
		defer pf.Close()
		profiles = append(profiles, func() error { return pprof.StartCPUProfile(pf) })
		defer pprof.StopCPUProfile()
	}
	if f.trace != "" {
		tf, err := os.Create(f.trace)
		if err != nil {
			return fmt.Errorf("bench: --trace: %w", err)
		}
		defer tf.Close()
		profiles = append(profiles, func() error { return trace.Start(tf) })
		defer trace.Stop()
	}
	startProfiles := func() {
		for _, start := range profiles {
			if err := start(); err != nil {
				warnLine(stderr, f.logFormat, "bench", "--cpuprofile/--trace not written", "error", err)
			}
		}
		profiles = nil
	}
	warned := map[string]bool{}
	var warnMu sync.Mutex                    // the stall warnings come from bench.Run's ticks
	warn := func(msg string, attrs ...any) { // once per message (the paper's cases share the PID)
		warnMu.Lock()
		defer warnMu.Unlock()
		if !warned[msg] {
			warned[msg] = true
			warnLine(stderr, f.logFormat, "bench", msg, attrs...)
		}
	}
	var outcomes []benchOutcome
	for i := range cases {
		c := &cases[i]
		cfg := run
		cfg.Concurrency = c.Concurrency
		if f.paper && f.duration == 0 && !f.callsSet {
			cfg.Calls = 100_000
		}
		if cfg.Calls > 0 && int64(cfg.Concurrency) > cfg.Calls && cfg.Rate == 0 { // an open loop starts callers as needed
			// more callers than calls: the extra ones would make none
			in := ""
			if f.paper {
				in = "case " + c.Name + ": "
			}
			warnLine(stderr, f.logFormat, "bench", fmt.Sprintf("%s-c %d is more than -n %d: running %d callers", in, cfg.Concurrency, cfg.Calls, cfg.Calls))
			cfg.Concurrency = int(cfg.Calls)
			if !f.paper {
				c.Concurrency = cfg.Concurrency
				c.Name = c.name()
			}
		}
		if f.paper && f.warmup < 0 {
			cfg.Warmup = bench.DefaultWarmup(cfg.Calls, cfg.Concurrency)
		}
		label := "airnode " + c.Name
		o := benchOutcome{Case: c}
		o.CallTimeoutMS, o.CallTimeoutFrom = callTimeout(u, benchMethod(*c), timeoutFrom)
		o.CallTimeoutSource = timeoutSource(f, target, o.CallTimeoutFrom)
		ref, err := refer(c.Req != c.Resp)
		if err != nil {
			if sig, ok := signalOf(ctx); ok {
				return interruptedBench(sig, "before the run started", stderr, f.logFormat)
			}
			return err
		}
		conns := watchConnections(ref, referred[ref]) // what the run had, not what came up after it
		if err := checkReqOf(c.Method, cat, *c, kv, providerURLs(ref)); err != nil {
			conns.close()
			return err
		}
		if err := checkMethodListed(ctx, ref, *c); err != nil {
			conns.close()
			return withRegistryShown(err, reg)
		}
		stopMix := mix(ctx, ref, f.mixResp, f.mixC)
		hb := &counters.Heartbeat
		remade, redials, lost := hb.Reconnects.Load(), hb.ReconnectAttempts.Load(), hb.ConnectionsLost.Load()
		hbCloses, liveCloses := hb.IdleClosed.Load(), hb.LivenessClosed.Load()
		service := ref.URL().ServiceKey()
		var made0, paused0 uint64
		measured := false // the warm-up ended: the measured phase's counts are known
		cfg.Start = func() { startProfiles(); made0, paused0 = retryCounts(service); measured = true }
		c.direct = reg.IsZero()
		o.Report, err = benchAirnode(ctx, ref, cuts, cfg, *c, label, progress, f.serverPID, warn)
		if measured {
			made, paused := retryCounts(service)
			o.RetriesMade, o.RetriesPausedCalls = made-made0, paused-paused0
		}
		o.retryTokens, _ = ref.URL().Param(failover.KeyRetryTokens)
		o.service = service
		o.Reconnects = hb.Reconnects.Load() - remade
		o.ReconnectAttempts = hb.ReconnectAttempts.Load() - redials
		o.ConnectionsLost = hb.ConnectionsLost.Load() - lost
		o.HeartbeatCloses = hb.IdleClosed.Load() - hbCloses
		o.LivenessCloses = hb.LivenessClosed.Load() - liveCloses
		cc := conns.connections(ctx)
		o.ConnectionsUp, o.ConnectionsAsked, o.ConnectionsDownAtEnd = cc.up, cc.asked, cc.lost
		o.ProvidersRestarted, o.ProvidersLeft = cc.restarted, cc.left
		o.ProvidersUnreachedLeft, o.UnreachedError = cc.unreached, cc.unreachedErr
		if n, lerr := ref.LocalConnectFailures(); n > 0 {
			o.ConnectionsFailedHere, o.LocalError = n, lerr.Error()
		}
		o.ConnectError = connectError(ref, o.LocalError)
		if n, mixErrs := stopMix(); o.Report != nil && f.mixResp > 0 {
			o.Background = &backgroundReport{Resp: f.mixResp, Concurrency: f.mixC, Calls: n, Errors: mixErrs}
		}
		var stopped *stoppedError
		if errors.As(err, &stopped) {
			o.Stopped, err = stopped.Error(), nil
		}
		if err != nil {
			return err
		}
		o.fill()
		if sig, ok := signalOf(ctx); ok {
			o.Interrupted, o.Signal, o.sig = true, signalName(sig), sig
			o.PlannedCalls, o.PlannedSec = cfg.Calls, cfg.Duration.Seconds()
		}
		if f.baseline && stopped == nil && !o.Interrupted {
			if o.Baseline, err = benchBaseline(ctx, cfg, *c, f.connections, "baseline "+c.Name, progress); err != nil {
				return err
			}
			if o.Baseline.Timeline == nil {
				o.Baseline.Timeline = []bench.Second{}
			}
			if sig, ok := signalOf(ctx); ok {
				o.Baseline = nil
				o.Interrupted, o.Signal, o.sig, o.inBaseline = true, signalName(sig), sig, true
			}
		}
		outcomes = append(outcomes, o)
		if stopped != nil || o.Interrupted {
			break // the next cases would find no provider either, or are not wanted
		}
	}
	last := outcomes[len(outcomes)-1]
	if last.Interrupted {
		// after the report: what was measured, then that it was cut short
		// (the signal decides the exit status, over an earlier case's failure)
		defer func() {
			msg := "bench: " + last.interruption()
			if f.paper {
				msg = fmt.Sprintf("bench: %s: %s (the remaining cases were not run)", last.Case.Name, last.interruption())
			}
			errorLine(stderr, f.logFormat, "bench", "airnode: "+msg, msg)
			err = &interruptedError{sig: last.sig, msg: msg}
		}()
	}
	if f.json {
		var v any = outcomes[0]
		defer func() {
			if err == nil {
				err = runError(outcomes)
			}
		}()
		if f.paper {
			v = struct {
				Cases []benchOutcome `json:"cases"`
			}{outcomes}
		}
		enc := jsonOutput(stdout)
		return enc.Encode(v)
	}
	if f.paper {
		printPaper(stdout, outcomes, f)
	} else {
		printOutcome(stdout, target, outcomes[0], f)
	}
	return runError(outcomes)
}

// checkReq refuses, before bench allocates a byte of it, a request
// payload of c.Req bytes that this machine cannot hold (reqMemoryBound:
// --req 100000000000 ran the process out of memory, with no --json
// object) or that no provider in us (their URLs merged with the
// consumer's keys, as the kernel sends under) could take: a request body
// over the largest of their payload limits (URL key "payload", default 8
// MiB, capped at protocol.MaxPayload, what the frame's 4-byte length
// carries). The body is the payload plus the request preamble (service
// key, method, timeout, attachments: att, the provider's token, and the
// padding of a case whose --req and --resp differ) and the codec's
// framing: checkReq encodes the case's request once with the codec the
// calls use (reqSizer, the exchange's encoder) to check it, and a refusal
// names the exact largest --req that fits (8388585 to 8388608 bytes
// once passed the old check and failed every call).
func checkReq(cat *extension.Catalogs, c benchCase, att []string, us []spi.URL) error {
	bound, from := reqMemoryBound()
	limit, at := int64(-1), spi.URL{}
	for _, u := range us {
		n, err := u.Size("payload", protocol.DefaultPayload)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if n <= 0 {
			n = protocol.DefaultPayload
		}
		if n > limit {
			limit, at = min(n, protocol.MaxPayload), u
		}
	}
	// Over a limit the machine can hold: say the exact largest --req.
	if limit >= 0 && int64(c.Req) > limit && (bound <= 0 || limit <= bound) {
		return overPayload(cat, c, att, at, limit)
	}
	if bound > 0 && int64(c.Req) > bound {
		return fmt.Errorf("bench: --req %d: more than this machine can hold for a run: want at most %d bytes (%s: bench holds the payload, an encoded copy per call in flight and its echo, and a provider on this machine as much again)",
			c.Req, bound, from)
	}
	if limit < 0 {
		return nil // no provider listed: the run says so
	}
	sz, err := newReqSizer(cat, c, att, at)
	if err != nil {
		return err
	}
	if c.Resp != c.Req {
		if err := checkResp(sz, c, at, limit); err != nil {
			return err
		}
	}
	if n, err := sz.body(c.Req); err != nil || n <= limit {
		return err
	}
	return overPayload(cat, c, att, at, limit)
}

// checkResp refuses a --resp whose answer the provider at (payload limit
// limit) cannot send: the demo's Payload answers at most limit less
// demo.ResponseFraming bytes (demo.LimitPayload; more fails every call
// with BAD_REQUEST, nu43 finding 7), and the response body — the response
// preamble and the bytes as the calls' codec writes them — must fit limit
// too: json writes bytes as base64, a third more, so --resp 7000000 under
// an 8 MiB limit passed the first bound and failed every call with
// BAD_RESPONSE (tester101 #3). The refusal names the largest --resp both
// allow.
func checkResp(sz *reqSizer, c benchCase, at spi.URL, limit int64) error {
	demoMost := limit - demo.ResponseFraming
	fits := int64(c.Resp) <= demoMost
	if fits {
		n, err := sz.respBody(c.Resp)
		if err != nil {
			return err
		}
		fits = n <= limit
	}
	if fits {
		return nil
	}
	most, err := mostFitting(limit, sz.respBody)
	if err != nil {
		return err
	}
	most = min(most, int(max(demoMost, 0)))
	return fmt.Errorf("bench: --resp %d: over the payload limit %s of %s (URL key payload, default 8MiB): want 0 to %d bytes with codec %s (the response body holds the response preamble and the bytes as codec %s writes them: msgpack adds up to %d bytes, json's base64 a third more), or %s",
		c.Resp, protocol.FormatSize(limit), at.Address(), max(most, 0), sz.codec.Name(), sz.codec.Name(), demo.ResponseFraming, raiseLimit(limit))
}

// overPayload is checkReq's refusal of a --req whose request body is over
// limit, the payload limit of the provider at: it names the exact largest
// --req that fits and the bytes the body holds besides the payload.
func overPayload(cat *extension.Catalogs, c benchCase, att []string, at spi.URL, limit int64) error {
	sz, err := newReqSizer(cat, c, att, at)
	if err != nil {
		return err
	}
	most, err := sz.most(limit)
	if err != nil {
		return err
	}
	raise := raiseLimit(limit)
	if most < 0 {
		return fmt.Errorf("bench: --req %d: the payload limit %s of %s (URL key payload, default 8MiB) cannot hold even an empty request with codec %s: %s",
			c.Req, protocol.FormatSize(limit), at.Address(), sz.codec.Name(), raise)
	}
	return fmt.Errorf("bench: --req %d: over the payload limit %s of %s (URL key payload, default 8MiB): want 0 to %d bytes (the request body holds %d bytes more: the request preamble and codec %s's framing), or %s",
		c.Req, protocol.FormatSize(limit), at.Address(), most, limit-int64(most), sz.codec.Name(), raise)
}

// raiseLimit is how a bench over the payload limit limit can get more.
func raiseLimit(limit int64) string {
	if limit == protocol.MaxPayload {
		return fmt.Sprintf("no limit is larger: the frame's 4-byte length caps it at %d bytes", protocol.MaxPayload)
	}
	return "raise the limit on both sides (bench -p payload=SIZE, and the provider's serve -p payload=SIZE)"
}

// reqMemoryBound returns the largest --req bench accepts on this machine,
// and what it was taken from: a quarter of MemAvailable in /proc/meminfo
// (the memory the kernel can give without swapping, not MemTotal: the
// machine is shared), or a quarter of the address-space limit (ulimit
// -v) when that is lower. A quarter because one call holds the payload,
// its encoded request and the echoed response (three times --req), and a
// provider on the same machine decodes and answers as much; more callers
// hold more (-c is not counted: a run that many callers cannot hold
// fails its calls, it does not crash before its report). 0: unknown (no
// /proc/meminfo), no bound.
func reqMemoryBound() (int64, string) {
	var bound int64
	var from string
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err == nil && kb > 0 {
					bound, from = kb<<10/4, fmt.Sprintf("a quarter of MemAvailable %s in /proc/meminfo", protocol.FormatSize(kb<<10))
				}
				break
			}
		}
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur < math.MaxInt64 {
		if as := int64(rl.Cur); bound == 0 || as/4 < bound {
			bound, from = as/4, fmt.Sprintf("a quarter of the address-space limit %s (ulimit -v)", protocol.FormatSize(as))
		}
	}
	return bound, from
}

// reqSizer measures the request body a bench call of a case sends to one
// provider: the exchange's preamble (protocol.AppendRequestPreamble) and
// the arguments encoded by the codec the calls use, counted, not kept.
type reqSizer struct {
	codec   spi.Codec
	service string
	ms      uint64            // the call's timeout in ms, as the preamble carries it (the whole timeout: the most digits)
	att     map[string]string // the attachments every call carries
	pad     bool              // Payload(resp), padded to --req by the padAttachment
	resp    int64
	bytes   []byte // zeros, the largest payload measured yet
}

func newReqSizer(cat *extension.Catalogs, c benchCase, att []string, u spi.URL) (*reqSizer, error) {
	codec, _, err := cat.Codec.Select(u, "")
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	timeout, err := u.Duration("timeout", kernel.DefaultTimeout)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	s := &reqSizer{codec: codec, service: u.ServiceKey(), ms: uint64((max(timeout, 0) + time.Millisecond - 1) / time.Millisecond),
		att: map[string]string{}, pad: c.Req != c.Resp, resp: int64(c.Resp)}
	for i := 0; i+1 < len(att); i += 2 {
		s.att[att[i]] = att[i+1]
	}
	if t, _ := u.Param(spi.AttachmentToken); t != "" && t != "false" {
		s.att[spi.AttachmentToken] = t
	}
	return s, nil
}

// body returns the request body length, in bytes, of a call with an
// n-byte payload. It sizes a zeroed buffer, not the calls' pattern: the
// length of msgpack's bin, json's base64 and the preamble's
// length-prefixed strings does not depend on the bytes, and a buffer
// that the encoder never reads or reads only (msgpack passes it to the
// counting writer whole) stays untouched fresh pages, not resident
// memory. The padding is counted, not built.
func (s *reqSizer) body(n int) (int64, error) {
	att, method := s.att, "Echo"
	var args []any
	var pad int64
	if s.pad {
		att = maps.Clone(s.att)
		att[padAttachment] = ""
		args, method = []any{s.resp}, "Payload"
		pad = int64(n + uvarintLen(uint64(n)) - 1) // AppendString of n bytes, less that of ""
	} else {
		if n > len(s.bytes) {
			s.bytes = make([]byte, n)
		}
		args = []any{s.bytes[:n]}
	}
	if len(att) == 0 {
		att = nil
	}
	w := countWriter{n: pad + int64(len(protocol.AppendRequestPreamble(nil, s.service, method, s.ms, att, len(args))))}
	enc := s.codec.NewEncoder(&w)
	defer spi.Release(enc)
	for _, a := range args {
		if err := enc.Encode(a); err != nil {
			return 0, fmt.Errorf("bench: codec %s cannot encode a %d-byte request: %w", s.codec.Name(), n, err)
		}
	}
	return w.n, nil
}

// most returns the largest payload whose request body fits in limit
// bytes, or -1 when not even an empty one does. The body grows with the
// payload (by one byte a byte under msgpack, in steps of four bytes per
// three under json's base64): an interpolation search, halving the
// bracket when a guess did not, measures a few sizes, not every one.
func (s *reqSizer) most(limit int64) (int, error) { return mostFitting(limit, s.body) }

// respBody returns an upper bound, in bytes, of the response body of
// Payload(n) under s.codec: the response preamble (an attachment count;
// demo.ResponseFraming less msgpack's 6-byte bin32 header allows for it)
// and n zero bytes encoded by the codec, counted, not kept.
func (s *reqSizer) respBody(n int) (int64, error) {
	if n > len(s.bytes) {
		s.bytes = make([]byte, n)
	}
	w := countWriter{n: demo.ResponseFraming - 6}
	enc := s.codec.NewEncoder(&w)
	defer spi.Release(enc)
	if err := enc.Encode(s.bytes[:n]); err != nil {
		return 0, fmt.Errorf("bench: codec %s cannot encode a %d-byte response: %w", s.codec.Name(), n, err)
	}
	return w.n, nil
}

// mostFitting returns the largest n in [0, limit] whose body(n) fits in
// limit bytes, or -1 when not even body(0) does; body grows with n. It is
// reqSizer.most's search, for requests and responses alike.
func mostFitting(limit int64, body func(int) (int64, error)) (int, error) {
	lo, hi := 0, int(limit)
	blo, err := body(lo)
	if err != nil || blo > limit {
		return -1, err
	}
	bhi, err := body(hi)
	if err != nil || bhi <= limit {
		return hi, err
	}
	halve := false
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if !halve {
			m = lo + int(float64(hi-lo)*float64(limit-blo)/float64(bhi-blo))
			m = min(max(m, lo+1), hi-1)
		}
		bm, err := body(m)
		if err != nil {
			return -1, err
		}
		was := hi - lo
		if bm <= limit {
			lo, blo = m, bm
		} else {
			hi, bhi = m, bm
		}
		halve = !halve && hi-lo > was/2
	}
	return lo, nil
}

// uvarintLen is the length of x as encoding/binary's uvarint (the
// preamble's string lengths).
func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// countWriter counts the bytes written to it and keeps none.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// providerURLs returns the URLs of the providers ref lists now (merged
// with the reference's keys).
func providerURLs(ref *kernel.Reference) []spi.URL {
	var us []spi.URL
	for _, inv := range ref.Providers() {
		us = append(us, inv.URL())
	}
	return us
}

// runError returns an error naming the first case that stopped early (no
// provider usable; its printed report has the first error) or whose every
// measured call failed, with that case's first error message (bench exits
// 1), or nil.
func runError(outcomes []benchOutcome) error {
	for _, o := range outcomes {
		r := o.Report
		if o.Stopped != "" {
			// the report has the first error
			return withCallAttrs(fmt.Errorf("bench: %s: %s", o.Case.Name, o.Stopped), nil, o.service, benchMethod(*o.Case))
		}
		if r.Calls > 0 && r.OK == 0 {
			hint := ""
			if o.Case.Method == "" && r.Errors[spi.StatusServiceNotFound.String()] == r.Calls && len(r.Providers) > 0 {
				// providers answered that they lack demo.Echo's method: another
				// service (tester71 #12)
				hint = fmt.Sprintf("; without --method bench calls demo.Echo's %s: give --method NAME (and --args JSON) to bench another service's method", benchMethod(*o.Case))
			}
			return withCallAttrs(fmt.Errorf("bench: %s: all %d calls failed; first error: %s%s", o.Case.Name, r.Calls, r.FirstError, hint),
				r.FirstErr(), o.service, benchMethod(*o.Case))
		}
	}
	return nil
}

// backgroundReport counts the unmeasured --mix-resp calls of a run.
type backgroundReport struct {
	Resp        int   `json:"resp"`
	Concurrency int   `json:"concurrency"`
	Calls       int64 `json:"calls"`
	Errors      int64 `json:"errors"`
}

// mix starts c callers of Payload(resp) on ref when resp > 0; the returned
// function stops them and returns how many calls finished and failed.
func mix(ctx context.Context, ref *kernel.Reference, resp, c int) func() (calls, errs int64) {
	if resp <= 0 || c <= 0 {
		return func() (int64, int64) { return 0, 0 }
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var calls, errs int64
	for range c {
		wg.Go(func() {
			var reply []byte
			var back backoff
			for ctx.Err() == nil {
				reply = reply[:0]
				err := ref.Call(ctx, "Payload", []any{int64(resp)}, &reply)
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				calls++
				if err != nil || len(reply) != resp {
					errs++
				}
				mu.Unlock()
				switch {
				case err == nil:
					back.reset()
				case len(ref.Providers()) == 0:
					back.wait(ctx)
				}
			}
		})
	}
	return func() (int64, int64) {
		cancel()
		wg.Wait()
		return calls, errs
	}
}

// registryGrace is how long bench waits for a registry to list a first
// provider of the service (one may be registering as bench starts).
const registryGrace = 2 * time.Second

// waitProviders returns once ref has a usable provider. When it has none,
// a probing Echo call says why: the kernel waits for the listed providers'
// first connections (bounded by connect.timeout) and the call fails with
// what stopped them — a refused connection, a transport or TLS mismatch —
// which is returned at once, as `airnode call` would report it. Only an
// empty provider list (SERVICE_NOT_FOUND from the consumer's own cluster)
// is probed again, for up to registryGrace, before it is returned, unless
// the registry lists providers the reference leaves out (another group,
// version or transport: Reference.Ignored), named by the error at once.
//
// Before each probe it waits for the listed providers' first connections
// (Reference.WaitReady, within connectWait): when one comes up, no probe
// is made, so every call a provider counts is one of bench's warm-up or
// measured calls (or a failover retry of one). A probe is made only when
// no provider is usable and none is connecting, and then fails without
// reaching one.
//
// The kernel bounds a call's wait for a first connection by the call's
// timeout too, so a probe under a tight --timeout (2 ms) can end before a
// provider that is up has connected (CLIENT_TIMEOUT, nothing sent): such a
// probe is made again until a provider is usable, for up to twice
// connect.timeout and a second (connectWait), and only then returned,
// saying that no provider connected in that time.
func waitProviders(ctx context.Context, ref *kernel.Reference) error {
	start := time.Now()
	grace := start.Add(registryGrace)
	wait := connectWait(ref.URL())
	for len(ref.Providers()) == 0 {
		// The listed providers' first connections first: a probe made
		// while one is still connecting waits for it and then reaches it,
		// one call more in that provider's counts than bench reports
		// (tester53 finding 8). Ready: no probe at all.
		wctx, cancel := context.WithDeadline(ctx, start.Add(wait))
		ready := ref.WaitReady(wctx)
		cancel()
		if ready || len(ref.Providers()) > 0 {
			return nil
		}
		_, err := ref.Invoke(ctx, "Echo", "")
		if err == nil || len(ref.Providers()) > 0 {
			return nil // usable now; a provider's own error is the run's to report
		}
		st := spi.StatusOf(err)
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("no provider of %s available: %w", ref.URL().ServiceKey(), err)
		case st == spi.StatusClientTimeout && time.Since(start) < wait:
			continue // the call's timeout ended before the first connection: wait on
		case st == spi.StatusClientTimeout:
			return fmt.Errorf("no provider of %s connected within %v (twice connect.timeout and 1s; --timeout bounds calls, not this wait): %w",
				ref.URL().ServiceKey(), wait, err)
		case st != spi.StatusServiceNotFound || time.Now().After(grace) || len(ref.Ignored()) > 0:
			// listed providers all of another group, version or
			// transport: waiting changes nothing (the error names them)
			return fmt.Errorf("no provider of %s available: %w", ref.URL().ServiceKey(), err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no provider of %s available: %w", ref.URL().ServiceKey(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// connectWait is how long waitProviders lets a first connection take:
// twice u's connect.timeout (default kernel.DefaultConnectTimeout, 3 s)
// and a second, as the kernel's own wait for a first connection is bounded
// (a dial and a ping, each within connect.timeout, and slack for a loaded
// machine).
func connectWait(u spi.URL) time.Duration {
	d, err := u.Duration("connect.timeout", kernel.DefaultConnectTimeout)
	if err != nil || d <= 0 {
		d = kernel.DefaultConnectTimeout
	}
	return 2*d + time.Second
}

// Backoff of a caller whose call failed while the reference had no usable
// provider (killed, unreachable): such a call fails in microseconds without
// reaching anyone, so re-calling at once would only burn the client's CPU.
// The caller waits backoffMin before its next call, doubling up to
// backoffMax, until a call succeeds (the exponential backoff of Dubbo's and
// gRPC's reconnects, per caller). Failures a provider answered are paced by
// the network like successes and are part of the measured load: no backoff.
const (
	backoffMin = time.Millisecond
	backoffMax = 100 * time.Millisecond
)

// deadStop ends a counted run (-n) early once no provider has been usable
// for this long: with the backoff, its remaining calls would otherwise take
// up to backoffMax each. A --duration run keeps going (its timeline shows
// the outage, and a restarted provider coming back). A variable for tests.
var deadStop = 5 * time.Second

// backoff is one caller's failure backoff (see backoffMin); the zero value
// is reset. Not safe for concurrent use: one per caller.
type backoff struct{ d time.Duration }

// wait doubles the delay (backoffMin first, at most backoffMax) and sleeps
// it, or until ctx ends.
func (b *backoff) wait(ctx context.Context) {
	b.d = min(max(2*b.d, backoffMin), backoffMax)
	t := time.NewTimer(b.d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// reset starts the next failure's wait at backoffMin again.
func (b *backoff) reset() { b.d = 0 }

// stoppedError ends a run early: no provider was usable for deadStop (a
// counted run), or reason (no provider lists the method called: every
// call would fail the same way).
type stoppedError struct {
	service string
	done    int64         // measured calls finished
	planned int64         // -n; 0 for a --duration run
	after   time.Duration // deadStop
	reason  string        // why, when not deadStop
}

func (e *stoppedError) Error() string {
	of := ""
	if e.planned > 0 {
		of = fmt.Sprintf(" of %d", e.planned)
	}
	if e.reason != "" {
		return fmt.Sprintf("stopped after %d%s calls: %s", e.done, of, e.reason)
	}
	return fmt.Sprintf("stopped after %d%s calls: no provider of %s usable for %v", e.done, of, e.service, e.after)
}

// unlistedMethod reports whether every provider ref lists publishes its
// methods (URL key methods, as a kernel provider's does) and none names
// method: the kernel then fails a call of it SERVICE_NOT_FOUND "no
// provider of S lists method M" after asking one provider once
// (directory.Unlisted). False with no provider, or one publishing no
// list (a direct reference's).
func unlistedMethod(ref *kernel.Reference, method string) bool {
	ps := ref.AllProviders()
	if len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		ms, ok := p.URL().Param(spi.KeyMethods)
		if !ok || ms == "" || slices.Contains(strings.Split(ms, ","), method) {
			return false
		}
	}
	return true
}

// checkMethodListed refuses, before the run, a case whose method no
// provider ref lists publishes (unlistedMethod), with the kernel's
// SERVICE_NOT_FOUND of one call of it (the kernel asks one provider
// once: one serving a method it does not list runs the call, and the run
// goes on); without --method, it adds that --method benches another
// method (tester71 #3, #12).
func checkMethodListed(ctx context.Context, ref *kernel.Reference, c benchCase) error {
	method := benchMethod(c)
	if !unlistedMethod(ref, method) {
		return nil
	}
	args := c.args
	if c.Method == "" {
		args = []any{pattern(c.Req)}
		if method == "Payload" {
			args = []any{int64(c.Resp)}
		}
	}
	_, err := ref.Invoke(ctx, method, args...)
	if spi.StatusOf(err) != spi.StatusServiceNotFound {
		return nil
	}
	return &notServedError{err: err, c: c}
}

// notServedError refuses a run whose service or method the providers do
// not have (SERVICE_NOT_FOUND): err is the answer, naming what they do
// export when they say; without --method it adds that --method benches
// another method. checkMethodListed returns it before a run, and a direct
// run (benchCase.direct) stops with it when a provider answers it to the
// run's calls before any succeeded (tester103 #3: 100,000 calls failed).
type notServedError struct {
	err error
	c   benchCase
}

func (e *notServedError) Error() string {
	if e.c.Method == "" {
		return fmt.Sprintf("bench: %v; without --method bench calls demo.Echo's %s: give --method NAME (and --args JSON) to bench another service's method", e.err, benchMethod(e.c))
	}
	return "bench: " + e.err.Error()
}

func (e *notServedError) Unwrap() error { return e.err }

// benchMethod is the method a case calls: --method's, else Echo, or
// Payload when its request and response sizes differ.
func benchMethod(c benchCase) string {
	if c.Method != "" {
		return c.Method
	}
	if c.Req != c.Resp {
		return "Payload"
	}
	return "Echo"
}

// checkBenchBounds returns the error for a numeric flag of f out of its
// bounds, naming the flag, its value and what it takes; runBench reports
// it as a usage error (exit 2). -n is checked once --duration has been
// taken into account, and the URL key connections once the URL is known.
func checkBenchBounds(f benchFlags) error {
	switch {
	case f.req < 0: // --resp defaults to --req: a negative --req is named alone
		return fmt.Errorf("bench: --req %d: want 0 or more bytes", f.req)
	case f.resp < 0:
		return fmt.Errorf("bench: --resp %d: want 0 or more bytes", f.resp)
	case f.warmup < -1: // -1, the flag's default, asks for the default warm-up
		return fmt.Errorf("bench: --warmup %d: want 0 or more unmeasured calls (0: none; omit it for the default)", f.warmup)
	case f.durationSet && f.duration <= 0:
		return fmt.Errorf("bench: --duration %v: want a positive duration such as 30s (or omit it to run -n calls)", f.duration)
	case f.concurrency < 1 || f.concurrency > 1_000_000:
		return fmt.Errorf("bench: -c %d: want 1 to 1,000,000 concurrent callers", f.concurrency)
	case f.idle < 0:
		return fmt.Errorf("bench: --idle %d: want a number of idle connections to open (omit it to measure calls)", f.idle)
	case f.serverPID < 0:
		return fmt.Errorf("bench: --server-pid %d: want the provider's process id (1 or more)", f.serverPID)
	case f.mixResp < 0:
		return fmt.Errorf("bench: --mix-resp %d: want 0 or more bytes (0: no background callers)", f.mixResp)
	case f.mixC < 1:
		return fmt.Errorf("bench: --mix-c %d: want 1 or more background callers", f.mixC)
	}
	return nil
}

// rateCallers is -c's default with --rate: the most calls in flight at
// once (callers start as the calls need them), so that a stall of 5 s at
// 200 calls/s still starts every call on time.
const rateCallers = 1000

// rateFlag is --rate's flag value: the text as given, which parseRate
// reads (so that its refusal names the flag and what is allowed, where
// pflag's float parser says "strconv.ParseFloat: parsing"), shown as
// "calls/s" in --help.
type rateFlag struct{ s *string }

func (r rateFlag) String() string {
	if r.s == nil {
		return ""
	}
	return *r.s
}

func (r rateFlag) Set(s string) error { *r.s = s; return nil }

func (rateFlag) Type() string { return "calls/s" }

// parseRate reads --rate into f.rate and refuses what cannot be one: not
// a number, 0, negative, NaN, out of bench.MinRate to bench.MaxRate, or
// given with a flag that makes no open loop: --paper (the paper's cases
// are closed loops, its figures the mean of back-to-back calls),
// --baseline (its pipelined echo is a closed loop: a ratio of the two
// compares two designs of load, not two RPC stacks) or --idle (it makes
// no calls). Without -c, the callers are at most rateCallers.
func parseRate(f *benchFlags) error {
	if !f.rateSet {
		return nil
	}
	want := fmt.Sprintf("want calls per second, all callers together: a positive number from %v to %d (0.1: a call every 10 s)", bench.MinRate, bench.MaxRate)
	r, err := strconv.ParseFloat(strings.TrimSpace(f.rateText), 64)
	if err != nil || r == 0 || (bench.Config{Calls: 1, Concurrency: 1, Rate: r}).Validate() != nil {
		return fmt.Errorf("bench: --rate %s: %s", cmp.Or(f.rateText, `""`), want)
	}
	for _, c := range []struct {
		set       bool
		flag, why string
	}{
		{f.paper, "--paper", "the paper's cases are closed loops (its figures are the mean of back-to-back calls)"},
		{f.baseline, "--baseline", "its plain TCP echo runs a closed loop: a ratio to it would compare two kinds of load, not two RPC stacks"},
		{f.idle > 0, "--idle", "--idle makes no calls, it opens idle connections"},
	} {
		if c.set {
			return fmt.Errorf("bench: --rate %s and %s both given: %s; --rate runs one open-loop case of its own", f.rateText, c.flag, c.why)
		}
	}
	f.rate = r
	if !f.concurrencySet {
		f.concurrency = rateCallers
	}
	return nil
}

// checkMethodFlags refuses --method with the flags that mean demo.Echo's
// Echo and Payload (--req, --resp, --paper, --baseline, --mix-resp), and
// --args without --method, and an empty or blank --method (tester71
// #12: --method "" benched Echo).
func checkMethodFlags(f benchFlags) error {
	if f.methodSet && strings.TrimSpace(f.method) == "" {
		return fmt.Errorf("bench: --method %q: want a method name of SERVICE_URL's service (without --method, bench calls demo.Echo's Echo)", f.method)
	}
	if f.method == "" {
		if len(f.args) > 0 {
			return fmt.Errorf("bench: --args %s without --method: the arguments are --method's (demo.Echo's Echo takes --req bytes)", f.args[0])
		}
		return nil
	}
	for _, c := range []struct {
		set  bool
		flag string
	}{{f.reqSet, "--req"}, {f.respSet, "--resp"}, {f.paper, "--paper"}, {f.baseline, "--baseline"}, {f.mixResp > 0, "--mix-resp"}} {
		if c.set {
			return fmt.Errorf("bench: --method %s and %s both given: %s is about demo.Echo's Echo and Payload; with --method give the call's arguments with --args JSON", f.method, c.flag, c.flag)
		}
	}
	return nil
}

// benchArgs decodes --args as call decodes its ARG_JSON: @PATH read from a
// file, @- from stdin (once), each at most limit bytes.
func benchArgs(raw []string, stdin io.Reader, limit int64) ([]any, error) {
	if i := slices.Index(raw, "@-"); i >= 0 && slices.Contains(raw[i+1:], "@-") {
		return nil, errors.New("bench: --args @- given twice: standard input can be read once")
	}
	out := make([]any, 0, len(raw))
	for _, a := range raw {
		text := a
		if path, ok := strings.CutPrefix(a, "@"); ok {
			data, err := readArgFile(path, stdin, limit)
			if err != nil { // reading failed (no such file, over the payload limit): exit 1, as call's
				return nil, readArgError{fmt.Errorf("bench: --args %s: %w", a, err)}
			}
			text = string(data)
		}
		v, err := decodeArg(text)
		if err != nil {
			return nil, fmt.Errorf("bench: --args: %w", err)
		}
		out = append(out, v)
	}
	return out, nil
}

// checkReqOf is checkReq for a case of demo.Echo's; a --method case
// (method set) has no --req to check: a request over the payload limit
// fails its calls, by status.
func checkReqOf(method string, cat *extension.Catalogs, c benchCase, att []string, us []spi.URL) error {
	if method != "" {
		return nil
	}
	return checkReq(cat, c, att, us)
}

// benchAirnode runs one case over ref. With serverPID (not 0) it reports
// that process's CPU time per call, or warns when it cannot be read or did
// not grow during the measured phase.
//
// A call that fails while ref has no usable provider, or none it can pick
// (noneSelectable), backs its caller off (backoff). A counted run in which
// no provider has been usable for
// deadStop stops: the report of the calls made is returned with an
// *stoppedError.
func benchAirnode(ctx context.Context, ref *kernel.Reference, cuts *cutAttempts, cfg bench.Config, c benchCase, label string, progress io.Writer, serverPID int, warn func(string, ...any)) (*bench.Report, error) {
	parent := ctx
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var down atomic.Int64 // when no provider was first seen usable, Unix ns; 0: one is
	var anyOK atomic.Bool // a call of the run (its warm-up's too) succeeded
	req := pattern(c.Req)
	method, arg := benchMethod(c), any(req)
	var pad string
	if c.Req != c.Resp {
		// Payload(resp), its request padded to about req bytes by an
		// attachment (demo.Echo has no method taking req and returning resp
		// bytes).
		method, arg = "Payload", int64(c.Resp)
		pad = string(req)
	}
	type worker struct {
		base  context.Context // the caller's context from bench.Run
		ctx   context.Context // base with the worker's values
		args  []any
		reply []byte
		back  backoff
		cut   callCut
		swal  callSwallowed
	}
	workers := make([]worker, cfg.Concurrency)
	for i := range workers {
		workers[i].args = []any{arg}
		if c.Method != "" {
			workers[i].args = c.args
		}
	}
	pc := newProviderCounter(ref, cuts)
	pc.warn, pc.method, pc.service = warn, method, ref.URL().ServiceKey()
	if v, ok := spi.OutgoingAttachments(ctx)[spi.AttachmentTimeout]; ok {
		pc.own, _ = spi.ParseDuration(v) // --timeout: each call's own (ownTimeout)
	}
	cfg.Classify = benchStatus
	var srv0 time.Duration
	var srv0Err error
	start := cfg.Start // the caller's, first
	cfg.Start = func() {
		if start != nil {
			start()
		}
		pc.begin()
		if serverPID != 0 {
			srv0, srv0Err = processCPU(serverPID)
		}
	}
	bar := newProgressBar(progress, label)
	cfg.Tick = func(p bench.Progress) {
		pc.tick(p.Elapsed, p.Final)
		bar.draw(p)
	}
	r, err := bench.Run(ctx, cfg, func(ctx context.Context, w int) error {
		wk := &workers[w]
		if wk.base != ctx {
			// Derived from the caller's own context (one per caller and
			// phase, bench.Run), not the run's, so that the calls do not
			// all select on one shared Done channel, as no real
			// service's calls do.
			wk.base = ctx
			wk.ctx = context.WithValue(ctx, callCutKey{}, &wk.cut)
			wk.ctx = context.WithValue(wk.ctx, callSwallowedKey{}, &wk.swal)
			if pad != "" {
				wk.ctx = context.WithValue(wk.ctx, padContextKey{}, pad)
			}
		}
		wk.reply = wk.reply[:0]
		if wk.cut.Load() {
			wk.cut.Store(false)
		}
		wk.swal.err = nil
		var err error
		began := time.Now()
		if c.Method != "" {
			_, err = ref.Invoke(wk.ctx, method, wk.args...) // the reply is not checked
		} else {
			err = ref.Call(wk.ctx, method, wk.args, &wk.reply)
		}
		pc.noteCall(time.Since(began))
		if err == nil && wk.swal.err != nil {
			// failsafe: the zero result, not a reply that is not the echo
			return &swallowedError{wk.swal.err}
		}
		if err == nil {
			if !anyOK.Load() {
				anyOK.Store(true)
			}
			wk.back.reset()
			if down.Load() != 0 {
				down.Store(0)
			}
			if c.Method == "" && len(wk.reply) != c.Resp {
				return spi.Errorf(spi.StatusBadResponse, "bench: %s returned %d bytes, want %d", method, len(wk.reply), c.Resp)
			}
			return nil
		}
		if _, ok := signalOf(parent); ok || wk.cut.Load() || ctx.Err() != nil {
			// cut short by SIGINT/SIGTERM, or by the run's own stop (no
			// provider usable for deadStop, the service not served):
			// neither a call nor an error, and its attempt that the end
			// cut is in no provider's count (attemptsFilter)
			return bench.ErrUncounted
		}
		err = nameProvider(err)
		if c.direct && !anyOK.Load() && spi.StatusOf(err) == spi.StatusServiceNotFound && !noneSelectable(err) {
			// the provider answered that it lacks the service or the
			// method: every call would fail the same way
			stop(&notServedError{err: err, c: c})
			return err
		}
		if spi.StatusOf(err) == spi.StatusServiceNotFound && unlistedMethod(ref, method) {
			// no provider lists the method (the kernel asked one, which
			// lacks it too): every call would fail the same way at
			// once, and the providers are usable (tester71 #3)
			stop(&stoppedError{service: ref.URL().ServiceKey(), planned: cfg.Calls, reason: err.Error()})
			return err
		}
		if len(ref.Providers()) > 0 && !noneSelectable(err) {
			return err // a provider answered, or one is usable again
		}
		now := time.Now().UnixNano()
		if !down.CompareAndSwap(0, now) && cfg.Calls > 0 && time.Duration(now-down.Load()) >= deadStop {
			stop(&stoppedError{service: ref.URL().ServiceKey(), planned: cfg.Calls, after: deadStop})
		}
		if cfg.Rate == 0 {
			// a closed loop's caller would call again at once; an open
			// loop's calls keep their schedule, a dead provider or not
			wk.back.wait(ctx)
		}
		return err
	})
	if r != nil {
		r.Providers = pc.counts()
		pc.fillTimeline(r.Timeline)
		if serverPID != 0 && r.Calls > 0 {
			srv1, err := processCPU(serverPID)
			switch {
			case srv0Err != nil || err != nil:
				warn(fmt.Sprintf("--server-pid %d: %v; server CPU not reported", serverPID, cmp.Or(srv0Err, err)))
			case srv1 == srv0:
				warn(fmt.Sprintf("--server-pid %d used no CPU time during the measured phase: is it the provider? Server CPU not reported", serverPID))
			default:
				r.ServerCPUUS = float64(srv1-srv0) / float64(time.Microsecond) / float64(r.Calls)
			}
		}
	}
	var stopped *stoppedError
	var notServed *notServedError
	switch {
	case errors.As(context.Cause(ctx), &notServed):
		return nil, notServed
	case r != nil && errors.As(context.Cause(ctx), &stopped):
		stopped.done = r.Calls
		return r, stopped
	case err != nil && parent.Err() == nil:
		return nil, err
	}
	return r, nil
}

// noneSelectable reports whether err is the SERVICE_NOT_FOUND of a call
// that no provider could take although some are listed (every one at
// weight 0, or disabled): decided in this process, in microseconds, like
// a call with no provider listed, so its caller backs off too (tester62:
// 230,000 failures a second at -c 2 against weight-0 providers).
func noneSelectable(err error) bool {
	var se *spi.Error
	return errors.As(err, &se) && se.Status == spi.StatusServiceNotFound && se.Provider == ""
}

// providerNamed is a failed call's error whose text ends naming the
// provider that failed it, " (provider 127.0.0.1:20880)": bench's first
// error and its sample of each status say which provider refused or timed
// out (tester53 finding 5: a token refusal names the consumer's address
// only). Unwrap gives the error, whose status counts.
type providerNamed struct {
	err  error
	addr string
}

func (e *providerNamed) Error() string { return e.err.Error() + " (provider " + e.addr + ")" }
func (e *providerNamed) Unwrap() error { return e.err }

// nameProvider returns err as a providerNamed when it names a provider
// (spi.Error.Provider) its text does not mention, else err.
func nameProvider(err error) error {
	var se *spi.Error
	if !errors.As(err, &se) || se.Provider == "" || strings.Contains(err.Error(), se.Provider) {
		return err
	}
	return &providerNamed{err: err, addr: se.Provider}
}

// benchBaseline runs one case on the pipelined TCP echo, client and server
// in this process, over conns connections.
func benchBaseline(ctx context.Context, cfg bench.Config, c benchCase, conns int, label string, progress io.Writer) (*bench.Report, error) {
	srv, err := bench.StartEchoServer("127.0.0.1:0", c.Resp)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	clients := make([]*bench.EchoClient, conns)
	for i := range clients {
		if clients[i], err = bench.DialEcho(srv.Addr()); err != nil {
			return nil, err
		}
		defer clients[i].Close()
	}
	req := pattern(c.Req)
	bar := newProgressBar(progress, label)
	cfg.Tick = bar.draw
	cfg.Classify = func(error) string { return spi.StatusChannelInactive.String() }
	r, err := bench.Run(ctx, cfg, func(_ context.Context, w int) error { return clients[w%conns].Call(req) })
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	return r, nil
}

// idleReport is what --idle prints with --json.
type idleReport struct {
	Connections int     `json:"idle_connections"`
	Transport   string  `json:"transport"`
	RSSBefore   int64   `json:"rss_before_kib"` // provider RSS before the first dial
	RSSAfter    int64   `json:"rss_after_kib"`  // provider RSS with every connection open and idle
	PerConn     float64 `json:"kib_per_connection"`
}

// idleSettle is how long --idle waits before reading the provider's RSS:
// longer than the provider's worker idle time (2 s), so the goroutines that
// served the first calls have exited.
const idleSettle = 3 * time.Second

// benchIdle opens f.idle consumer channels straight on the exchange (no
// node: one channel per connection, where a node would share one), makes
// one Echo call on each so the provider has built all its per-connection
// state, lets them idle for idleSettle, and reports the provider's RSS delta
// per connection (the issue-9 memory goal: 10,000 idle consumers).
func benchIdle(ctx context.Context, cat *extension.Catalogs, u spi.URL, f benchFlags, logger *slog.Logger, stdout io.Writer) error {
	if f.serverPID <= 0 {
		return usage(errors.New("bench: --idle needs --server-pid (the provider's RSS is read from /proc)"))
	}
	if u.Host() == "" || u.Port() == 0 {
		return usage(errors.New("bench: --idle needs a provider address (airnode://host:port/service)"))
	}
	if directory.Multi(u) {
		return usage(fmt.Errorf("bench: --idle calls one service key on each connection it opens; group=%q version=%q name several: give one group and one version",
			u.ParamOr(spi.KeyGroup, ""), u.ParamOr(spi.KeyVersion, "")))
	}
	tb, sel, err := cat.Transport.Select(u, "")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	tr, err := tb.Build(u)
	if err != nil {
		return fmt.Errorf("bench: transport %s: %w", sel.Name, err)
	}
	codec, _, err := cat.Codec.Select(u, "")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	before, err := processRSS(f.serverPID)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	channels := make([]*exchange.Channel, 0, f.idle)
	defer func() {
		for _, ch := range channels {
			ch.Close("bench done")
		}
		for _, ch := range channels {
			ch.Wait()
		}
	}()
	opts := exchange.Options{Side: spi.Consumer, Codec: cat.CodecByID, Logger: logger}
	payload := pattern(f.req)
	for i := range f.idle {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		sess, err := tr.Dial(dctx, u.Address())
		cancel()
		if err != nil {
			return fmt.Errorf("bench: idle connection %d: %w", i+1, err)
		}
		ch := exchange.NewChannel(sess, opts)
		channels = append(channels, ch)
		var reply []byte
		inv := &spi.Invocation{Service: u.ServiceKey(), Method: "Echo", Args: []any{payload}, Reply: &reply}
		if res := ch.Invoke(ctx, codec, inv, 10*time.Second); res.Err != nil {
			return fmt.Errorf("bench: idle connection %d: %w", i+1, res.Err)
		}
	}
	select {
	case <-time.After(idleSettle):
	case <-ctx.Done():
		return ctx.Err()
	}
	after, err := processRSS(f.serverPID)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	r := idleReport{Connections: f.idle, Transport: sel.Name, RSSBefore: before, RSSAfter: after,
		PerConn: float64(after-before) / float64(f.idle)}
	if f.json {
		enc := jsonOutput(stdout)
		return enc.Encode(r)
	}
	fmt.Fprintf(stdout, "%d idle %s connections: provider RSS %d KiB -> %d KiB, %.1f KiB per connection\n",
		r.Connections, r.Transport, r.RSSBefore, r.RSSAfter, r.PerConn)
	return nil
}

// processRSS returns the resident set size of process pid in KiB (VmRSS
// of /proc/PID/status).
func processRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// processCPU returns the CPU time process pid has used so far: from its
// CPU-time clock in nanoseconds (processCPUClock, Linux), else the
// user+system time of /proc/PID/stat (fields 14 and 15, in clock ticks of
// 10 ms: USER_HZ is 100 on Linux).
func processCPU(pid int) (time.Duration, error) {
	if d, err := processCPUClock(pid); err == nil {
		return d, nil
	}
	return procStatCPU(pid)
}

// procStatCPU is processCPU from /proc/PID/stat's ticks.
func procStatCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// the command name (field 2) may contain spaces: fields count from the last ')'
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	fs := strings.Fields(string(b[i+1:]))
	if len(fs) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fs)+2)
	}
	utime, err1 := strconv.ParseInt(fs[11], 10, 64)
	stime, err2 := strconv.ParseInt(fs[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// pattern returns n bytes of a repeating alphabet.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

// providerCounter counts the calls each provider took during the measured
// phase from the invokers' own statistics (spi.Stats, kept by the kernel
// for every call), so the call path pays nothing for it: it remembers every
// invoker the reference held (Reference.AllProviders: a provider still
// connecting, reconnecting or ejected at the start has its starting count
// too, not 0), and a provider that leaves the directory mid-run (killed)
// keeps the calls it took.
//
// Attempts that SIGINT or SIGTERM cut short (cuts) are left out, as the
// calls they belonged to are: after an interrupt, as after a full run, the
// attempts add up to the calls when no call was retried.
type providerCounter struct {
	ref  *kernel.Reference
	cuts *cutAttempts

	mu      sync.Mutex
	base    map[spi.Invoker]int64 // Total at the start of the measured phase
	addr    map[spi.Invoker]string
	cutBase map[string]int64 // cuts at the start of the measured phase

	// the per-second rates of the timeline (tick): the counts at the
	// first sample of second lastSec, when it was taken (since the
	// measured phase began), and each second's rates; recent is the
	// latest sample (one per tick), and before the latest one taken at or
	// just before second lastSec began (the run's last, partial second
	// counts from it)
	lastCnt map[string]int64
	lastAt  time.Duration
	lastSec int
	rates   map[int]map[string]float64
	recent  countSample
	before  countSample
	partial int // the run's last second, which the final tick covered in part (-1: none)

	// warn, when set, gets a line when a provider finished none of the
	// calls it had in flight for longer than stallBound (stalls: each
	// address once until it finishes calls again); method is the method
	// the run calls (its timeout in force is each invoker's URL's), and
	// longest the longest call any caller finished so far, ns (noteCall);
	// its attrs are the record's (provider=ADDR, service=...)
	warn      func(string, ...any)
	stalls    map[string]bool
	method    string
	own       time.Duration // --timeout, each call's own timeout in place of the URL's (0: none)
	service   string        // the reference's service key
	longest   atomic.Int64
	prevCnt   map[string]int64         // counts at the previous tick
	lastDone  map[string]time.Duration // when each address last finished a call or had none in flight
	doneTotal map[string]int64         // the counts of all addresses together then
}

// countSample is providerCounter.counts taken at, since the measured phase
// began.
type countSample struct {
	at  time.Duration
	cnt map[string]int64
}

// sliverTick is how far past a second's start a sample still counts as
// taken at it (bench.Run's tick at --duration's end comes a timer's
// latency late).
const sliverTick = 5 * time.Millisecond

func newProviderCounter(ref *kernel.Reference, cuts *cutAttempts) *providerCounter {
	return &providerCounter{ref: ref, cuts: cuts, base: map[spi.Invoker]int64{}, addr: map[spi.Invoker]string{}, partial: -1}
}

// begin notes every listed invoker's total at the start of the measured
// phase.
func (p *providerCounter) begin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, inv := range p.ref.AllProviders() {
		p.base[inv] = sent(inv)
		p.addr[inv] = inv.URL().Address()
	}
	p.cutBase = p.cuts.counts()
}

// sample notes invokers that joined since.
func (p *providerCounter) sample() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, inv := range p.ref.AllProviders() {
		if _, ok := p.addr[inv]; !ok {
			p.addr[inv] = inv.URL().Address()
		}
	}
}

// tick is bench.Config.Tick's part: it notes invokers that joined
// (sample) and, on the first tick of each second of the measured phase
// (elapsed since it began), the calls each provider took since the
// previous such tick, as calls per second of the time between them, for
// the seconds that time covered: a timeline second's providers_per_sec.
// Ticks come every 200 ms (bench.Run's default), so a second's rate is
// measured over about a second that starts up to 200 ms late; a second no
// tick fell in (a stalled process) gets the rate of the span that covered
// it. The final tick ends the run inside its last second, which it covers
// only in part (a duration run's: the calls in flight at the deadline,
// where bench.Run ticks once more): that second gets the attempts each
// provider took in the part covered, counted from the latest sample taken
// at or before the second began and scaled down by the part of the span
// since then that lies in it (never up: no rate extrapolated from a sliver
// of a second, which gave 102,432 calls/s beside 8 calls).
func (p *providerCounter) tick(elapsed time.Duration, final bool) {
	now := p.counts()
	p.mu.Lock()
	defer p.mu.Unlock()
	sec := int(elapsed / time.Second)
	prev := p.recent
	p.recent = countSample{elapsed, now}
	if !final {
		defer p.stalled(elapsed)() // its warnings, on return
	}
	if !final && sec <= p.lastSec {
		return
	}
	if p.rates == nil {
		p.rates = map[int]map[string]float64{}
	}
	if sec > p.lastSec {
		// the span lastAt..elapsed covered seconds lastSec .. sec-1
		if span := (elapsed - p.lastAt).Seconds(); span > 0 {
			rate := scaledSince(now, p.lastCnt, 1/span)
			for s := p.lastSec; s < sec; s++ {
				p.rates[s] = rate
			}
		}
		p.before = prev
		if !final && elapsed-time.Duration(sec)*time.Second <= sliverTick {
			p.before = p.recent // taken at the second's start
		}
		p.lastCnt, p.lastAt, p.lastSec = now, elapsed, sec
	}
	if !final {
		return
	}
	covered := elapsed - time.Duration(sec)*time.Second
	span := elapsed - p.before.at
	if covered <= 0 || span <= 0 {
		return
	}
	p.rates[sec] = scaledSince(now, p.before.cnt, min(1, covered.Seconds()/span.Seconds()))
	p.partial = sec
}

// stalled notes, at each tick (elapsed since the measured phase began),
// the providers that have calls in flight and finished none of them for
// longer than stallBound: a provider that stopped answering (SIGSTOP,
// swap, a long GC pause, a full socket buffer) holds its callers' calls,
// and with all callers waiting on it the run's seconds show 0 calls and
// no provider (tester53 finding 3: nothing in bench's output named it).
// A provider whose calls are merely long (demo.Echo's Sleep of 5 s under
// a 10 s timeout) is not stalled (tester74). It returns the function
// that writes their warnings, one per provider and stall: "provider
// 127.0.0.1:20880 finished none of the 8 call(s) it had in flight for
// 2.1 s (second 3 of the run; the other providers finished 0; calls so
// far: up to 3ms, timeout 10s): stalled? (SIGSTOP, swap, GC pause,
// network)". p.mu is held.
func (p *providerCounter) stalled(elapsed time.Duration) func() {
	if p.warn == nil {
		return func() {}
	}
	if p.lastDone == nil {
		p.lastDone, p.doneTotal = map[string]time.Duration{}, map[string]int64{}
	}
	active := map[string]int64{}
	finished := map[string]int64{} // whether an address finished calls: not by sent
	timeout := map[string]time.Duration{}
	for inv, a := range p.addr {
		active[a] += inv.Stats().Active()
		finished[a] += inv.Stats().Total()
		d, err := inv.URL().MethodDuration(p.method, "timeout", benchTimeout)
		if err != nil {
			d = benchTimeout
		}
		if p.own > 0 {
			d = p.own
		}
		timeout[a] = max(timeout[a], d)
	}
	now := finished
	var total int64
	for _, n := range now {
		total += n
	}
	longest := time.Duration(p.longest.Load())
	type stall struct{ msg, addr string }
	var msgs []stall
	for a, n := range active {
		last, seen := p.lastDone[a]
		if !seen || n == 0 || now[a] > p.prevCnt[a] {
			p.lastDone[a], p.doneTotal[a] = elapsed, total
			delete(p.stalls, a)
			continue
		}
		idle := elapsed - last
		if p.stalls[a] || idle <= stallBound(longest, timeout[a]) {
			continue
		}
		if p.stalls == nil {
			p.stalls = map[string]bool{}
		}
		p.stalls[a] = true
		to := "none"
		if timeout[a] > 0 {
			to = timeout[a].String()
		}
		took := "none finished"
		if longest > 0 {
			took = "up to " + longest.Round(time.Millisecond).String()
		}
		msgs = append(msgs, stall{addr: a, msg: fmt.Sprintf("provider %s finished none of the %d call(s) it had in flight for %.1f s (second %d of the run; the other providers finished %d; calls so far: %s, timeout %s): stalled? (SIGSTOP, swap, GC pause, network)",
			a, n, idle.Seconds(), int(elapsed/time.Second), total-p.doneTotal[a], took, to)})
	}
	p.prevCnt = now
	slices.SortFunc(msgs, func(a, b stall) int { return strings.Compare(a.msg, b.msg) })
	return func() {
		for _, m := range msgs {
			p.warn(m.msg, "provider", m.addr, "service", p.service, "method", p.method)
		}
	}
}

// Bounds of stallBound.
const (
	// stallFloor is the shortest silence called a stall: a GC pause or a
	// loaded host's scheduling hiccup is shorter.
	stallFloor = 2 * time.Second
	// stallSlower is how many times the longest call finished so far a
	// provider's silence must last to be a stall.
	stallSlower = 4
	// stallTimeoutFloor is the least of the timeout's bound.
	stallTimeoutFloor = 5 * time.Second
)

// stallBound returns how long a provider with calls in flight may finish
// none before bench calls it stalled, by what the run knows: the longest
// call any caller finished so far (0: none yet) and the call timeout in
// force on the provider (0: none). Calls finishing take up to longest, so
// a silence of stallSlower × longest (at least stallFloor) is overdue;
// and whatever the calls took, a silence of twice the timeout (at least
// stallTimeoutFloor) is, since every call in flight should have ended in
// a timeout by then. Before any call finished only the timeout says; with
// neither, nothing is overdue (the maximum duration).
func stallBound(longest, timeout time.Duration) time.Duration {
	byTimeout := time.Duration(math.MaxInt64)
	if timeout > 0 {
		byTimeout = max(stallTimeoutFloor, 2*timeout)
	}
	if longest <= 0 {
		return byTimeout
	}
	return min(byTimeout, max(stallFloor, stallSlower*longest))
}

// noteCall records d, how long a call took, when it is the longest yet.
func (p *providerCounter) noteCall(d time.Duration) {
	for {
		cur := p.longest.Load()
		if int64(d) <= cur || p.longest.CompareAndSwap(cur, int64(d)) {
			return
		}
	}
}

// scaledSince returns, for each address of now whose count grew since
// base, the growth times f (1/span for a rate), to 0.1.
func scaledSince(now, base map[string]int64, f float64) map[string]float64 {
	m := map[string]float64{}
	for a, n := range now {
		if d := n - base[a]; d > 0 {
			m[a] = math.Round(float64(d)*f*10) / 10
		}
	}
	return m
}

// fillTimeline sets each timeline second's ProvidersPerSec from tick's
// rates. The last, partial second's attempts are an estimate from samples
// up to 200 ms apart, which a rate changing at the deadline (the callers
// stop starting calls) can throw off: when they add up to more than the
// entry's calls, they are scaled down to add up to them, each provider
// keeping its share.
func (p *providerCounter) fillTimeline(tl []bench.Second) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range tl {
		r := p.rates[tl[i].Second]
		if len(r) == 0 {
			continue
		}
		if tl[i].Second == p.partial {
			var sum float64
			for _, v := range r {
				sum += v
			}
			if calls := float64(tl[i].Calls); sum > calls {
				scaled := make(map[string]float64, len(r))
				for a, v := range r {
					if v = math.Round(v*calls/sum*10) / 10; v > 0 {
						scaled[a] = v
					}
				}
				r = scaled
			}
		}
		tl[i].ProvidersPerSec = r
	}
}

// sent returns the attempts inv has been sent: those finished and those in
// flight (the kernel's invoker statistics count an attempt in flight from
// its start), so that an attempt counts when it is sent, not when it
// ends: a provider that stops answering does not look drained at once,
// nor busy while it is ejected, as it did by finished attempts (tester103
// #2, the call timeout's shift).
func sent(inv spi.Invoker) int64 {
	st := inv.Stats()
	return st.Total() + st.Active()
}

// counts returns the attempts per provider address sent since begin
// (sent), less those a signal cut short.
func (p *providerCounter) counts() map[string]int64 {
	p.sample()
	p.mu.Lock()
	defer p.mu.Unlock()
	m := map[string]int64{}
	for inv, a := range p.addr {
		if n := sent(inv) - p.base[inv]; n > 0 {
			m[a] += n
		}
	}
	for a, n := range p.cuts.counts() {
		if n -= p.cutBase[a]; n > 0 {
			m[a] -= n
			if m[a] <= 0 {
				delete(m, a)
			}
		}
	}
	return m
}

// attemptsKey switches attemptsFilter on (only in the bench's own
// catalogs: every reference bench makes sets it).
const attemptsKey = "bench.attempts"

// callCut is set by attemptsFilter when a call's attempt on a provider
// failed because SIGINT or SIGTERM cut it short; one per caller, reset
// before each call.
type callCut struct{ atomic.Bool }

type callCutKey struct{}

// cutAttempts counts, per provider address, the attempts that SIGINT or
// SIGTERM cut short (attemptsFilter), which providerCounter takes off the
// providers' totals.
type cutAttempts struct {
	mu sync.Mutex
	n  map[string]*atomic.Int64
}

// counter returns the count of addr, made on first use.
func (c *cutAttempts) counter(addr string) *atomic.Int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]*atomic.Int64{}
	}
	if c.n[addr] == nil {
		c.n[addr] = new(atomic.Int64)
	}
	return c.n[addr]
}

// counts returns the cut attempts per address so far.
func (c *cutAttempts) counts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int64, len(c.n))
	for a, n := range c.n {
		m[a] = n.Load()
	}
	return m
}

// attemptsBuilder is a per-provider consumer filter, registered only in
// `airnode bench`'s catalogs, innermost, that notes the attempts a signal
// cut short (failed while SIGINT or SIGTERM had ended the call's context):
// their calls are in no count, so their attempts are taken off the
// providers' (Stats counts every attempt). A successful attempt costs it
// one function call.
type attemptsBuilder struct{ cuts *cutAttempts }

func (attemptsBuilder) Name() string { return "bench.attempts" }

func (attemptsBuilder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer}, Key: attemptsKey, Order: math.MaxInt32, PerProvider: true}
}

func (b attemptsBuilder) Build(pu spi.URL) (spi.Filter, error) {
	return attemptsFilter{cut: b.cuts.counter(pu.Address())}, nil
}

type attemptsFilter struct{ cut *atomic.Int64 }

func (f attemptsFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	res := next.Invoke(ctx, inv)
	if res.Err != nil {
		if _, ok := signalOf(ctx); ok {
			f.cut.Add(1)
			if c, ok := ctx.Value(callCutKey{}).(*callCut); ok {
				c.Store(true)
			}
		}
	}
	return res
}

// progressBar draws "label [=====     ] 52%  52000/100000  43210 calls/s
// 0 errors" on a terminal, redrawn in place; nil writer: nothing.
type progressBar struct {
	w     io.Writer
	label string
}

func newProgressBar(w io.Writer, label string) *progressBar { return &progressBar{w: w, label: label} }

func (b *progressBar) draw(p bench.Progress) {
	if b.w == nil {
		return
	}
	if p.Final {
		fmt.Fprint(b.w, "\r\033[K")
		return
	}
	frac := 0.0
	count := ""
	switch {
	case p.Total > 0:
		frac = float64(p.Done) / float64(p.Total)
		count = fmt.Sprintf("%d/%d", p.Done, p.Total)
	case p.Planned > 0:
		frac = p.Elapsed.Seconds() / p.Planned.Seconds()
		count = fmt.Sprintf("%v/%v", p.Elapsed.Round(time.Second), p.Planned)
	}
	frac = min(max(frac, 0), 1)
	const width = 30
	full := int(frac * width)
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = float64(p.Done) / s
	}
	fmt.Fprintf(b.w, "\r\033[K%s [%s%s] %3.0f%%  %s  %.0f calls/s  %d errors",
		b.label, strings.Repeat("=", full), strings.Repeat(" ", width-full), frac*100, count, rate, p.Errors)
}

// connectionsText says how many connections the run had: "4
// connection(s) per provider" (--connections: tester53 finding 10 read
// "1 connection(s)" beside 3 providers as a total) when every one asked
// for was up at its end, else, in all, "only 22
// of 40 connection(s) up (the others got no answer to their first ping, or
// were closed at once: is the provider out of file descriptors, or at its
// connection limit, URL key accepts? see its log)".
//
// When some dials failed in this process (ConnectionsFailedHere: out of
// file descriptors, ...) it says so instead of suspecting the provider:
// "only 245 of 300 connection(s) up (55 failed
// here, not at the provider: this process is out of file descriptors:
// see ulimit -n, which is 256 for this process: smux: dial tcp ...:
// socket: too many open files)". Connections that were up and went down
// (ConnectionsDownAtEnd) are not blamed on the provider's descriptors either,
// and providers that restarted or left during the run are named after
// the count: "1 connection(s) per provider; 1 provider restarted
// during the run (...)"; so are providers listed that were never up and
// left (a killed provider's entry until its session expired), not
// counted in the connections: "...; 1 provider(s) listed were never
// reachable (...: connection refused) and left the registry during the
// run (not counted above)". When a connection's last attempt failed for a
// known cause (ConnectError: a TLS verification failure, a refused
// connection) that is said instead of the guess: "only 1 of 2
// connection(s) up (the others failed to connect: ...: x509: certificate
// signed by unknown authority)".
func connectionsText(o benchOutcome, perProvider int) string {
	text := fmt.Sprintf("%d connection(s) per provider", perProvider)
	if short := o.ConnectionsAsked - o.ConnectionsUp; o.ConnectionsAsked > 0 && short > 0 {
		var why []string
		if o.ConnectionsFailedHere > 0 {
			local := o.LocalError
			if limit, known := netaccept.OpenFileLimit(); known && strings.Contains(local, "see ulimit -n") {
				local = strings.Replace(local, "see ulimit -n", fmt.Sprintf("see ulimit -n, which is %d for this process", limit), 1)
			}
			why = append(why, fmt.Sprintf("%d failed here, not at the provider: %s", o.ConnectionsFailedHere, local))
		}
		if o.ConnectionsDownAtEnd == 1 {
			why = append(why, "1 was up and went down during the run, its provider still listed: killed, stalled or cut off?")
		} else if o.ConnectionsDownAtEnd > 1 {
			why = append(why, fmt.Sprintf("%d were up and went down during the run, their provider still listed: killed, stalled or cut off?", o.ConnectionsDownAtEnd))
		}
		refused := "got no answer to their first ping, or were closed at once: is the provider out of file descriptors, or at its connection limit, URL key accepts? see its log"
		if o.ConnectError != "" {
			refused = "failed to connect: " + o.ConnectError
		}
		if rest := short - o.ConnectionsFailedHere - o.ConnectionsDownAtEnd; rest > 0 && len(why) > 0 {
			why = append(why, fmt.Sprintf("%d other(s) %s", rest, refused))
		} else if rest > 0 {
			why = append(why, "the others "+refused)
		}
		text = fmt.Sprintf("only %d of %d connection(s) up (%s)", o.ConnectionsUp, o.ConnectionsAsked, strings.Join(why, "; "))
	}
	if n := o.ProvidersRestarted; n > 0 {
		text += fmt.Sprintf("; %d provider(s) restarted during the run (a new process on the address: its start timestamp changed)", n)
	}
	if n := o.ProvidersLeft; n > 0 {
		text += fmt.Sprintf("; %d provider(s) left during the run and did not come back", n)
	}
	if n := o.ProvidersUnreachedLeft; n > 0 {
		why := ""
		if o.UnreachedError != "" {
			why = " (" + o.UnreachedError + ")"
		}
		text += fmt.Sprintf("; %d provider(s) listed were never reachable%s and left the registry during the run (not counted above)", n, why)
	}
	return text
}

// connectError returns why a connection of ref that is not up failed its
// last attempt (kernel.ProviderConnections.Err), the first one listed,
// unless that is the local failure already reported (local); "" when
// there is none or it is the first ping's generic "closed the connection"
// (the summary's own guess says more then). A refusal at the provider's
// connection limit is cut to what the provider said: "the provider
// refused the connection: it already serves 2 connections, its limit
// (accepts=2)".
func connectError(ref *kernel.Reference, local string) string {
	for _, p := range ref.ProviderConnections() {
		if p.Err == nil || p.Leaving {
			continue
		}
		msg := p.Err.Error()
		if local != "" && strings.Contains(msg, local) || strings.Contains(local, msg) ||
			strings.Contains(msg, "the provider closed the connection during the first ping") {
			continue
		}
		if i := strings.Index(msg, exchange.RefusedReason); i >= 0 {
			// the provider said it is at its connection limit: that
			// alone, not the kernel's account of the attempt around it
			msg, _, _ = strings.Cut(msg[i:], " (during the first ping")
		}
		return msg
	}
	return ""
}

// perSecond formats a rate for the summary: whole numbers from 10 up
// ("43210"), one decimal from 1 ("2.5"), two below ("0.11": 4 calls in
// 37 s on a slow link is not "0"); 0 is "0".
func perSecond(x float64) string {
	switch {
	case x == 0 || x >= 10:
		return fmt.Sprintf("%.0f", x)
	case x >= 1:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

// maxSampleLines bounds the "also" lines of printErrorSamples.
const maxSampleLines = 4

// printErrorSamples prints, when calls failed with more than one status,
// one message of each status other than the first error's, most
// frequent first (at most maxSampleLines, then how many more; --json
// has them all in error_samples):
//
//	also        SERVICE_NOT_FOUND: no provider available for demo.Echo ...
func printErrorSamples(w io.Writer, r *bench.Report) {
	if len(r.Errors) < 2 {
		return
	}
	var lines []string
	for _, status := range r.ErrorNames() {
		msg, ok := r.ErrorSamples[status]
		if !ok || msg == r.FirstError {
			continue
		}
		if name, _, _ := strings.Cut(status, " "); !strings.HasPrefix(msg, name) {
			msg = status + ": " + msg
		}
		lines = append(lines, msg)
	}
	for i, msg := range lines {
		if i == maxSampleLines {
			fmt.Fprintf(w, "  also        %d more statuses (--json: error_samples)\n", len(lines)-i)
			break
		}
		fmt.Fprintf(w, "  also        %s\n", msg)
	}
}

// printOutcome prints a single case's summary. Failed calls come first
// when there are any: their share, by status, and the first error's
// message (unless every call failed: that message is the command's error),
// then one message of each other status (printErrorSamples).
// Latency is of the successful calls only; calls/s counts every finished
// call. Providers list attempts: a call that failover retried counts once
// per provider it tried. The first line ends with the measured phase's
// wall-clock start ("started 2026-12-04T05:06:02.536Z": --json's start).
// failedShare is failed of calls (0 < failed <= calls) as a percentage
// with one decimal, never "0.0%" nor, unless all failed, "100.0%": 8 of
// 451482 is "<0.1%", 451474 of them ">99.9%" (tester92 #2).
func failedShare(failed, calls int64) string {
	if failed >= calls {
		return "100.0%"
	}
	switch pct := strconv.FormatFloat(100*float64(failed)/float64(calls), 'f', 1, 64); pct {
	case "0.0":
		return "<0.1%"
	case "100.0":
		return ">99.9%"
	default:
		return pct + "%"
	}
}

func printOutcome(w io.Writer, target string, o benchOutcome, f benchFlags) {
	r := o.Report
	what := fmt.Sprintf("%d B -> %d B", o.Case.Req, o.Case.Resp)
	if o.Case.Method != "" {
		what = fmt.Sprintf("%s(%s)", o.Case.Method, strings.Join(o.Case.Args, ", "))
	}
	started := ""
	if r.Start != "" {
		started = ", started " + r.Start // the measured phase's wall-clock start (--json: start)
	}
	callers := fmt.Sprintf("%d callers", r.Concurrency)
	if ol := r.OpenLoop; ol != nil {
		callers = fmt.Sprintf("open loop at %s calls/s, %d of at most %d callers started", perSecond(ol.Rate.Asked), ol.Rate.Callers, r.Concurrency)
	}
	fmt.Fprintf(w, "airnode bench %s: %d calls in %.2f s, %s, %s, %s%s\n",
		redactSecrets(target), r.Calls, r.ElapsedSec, callers, connectionsText(o, f.connections), what, started)
	if o.Stopped != "" {
		fmt.Fprintf(w, "  stopped     %s\n", strings.TrimPrefix(o.Stopped, "stopped "))
	}
	if o.CallTimeoutFrom != "" {
		fmt.Fprintf(w, "  timeout     %s\n", timeoutText(o))
	}
	if o.Interrupted {
		fmt.Fprintf(w, "  stopped     %s; calls it cut short are not counted\n", o.interruption())
	}
	if r.CutShort > 0 {
		fmt.Fprintf(w, "  cut short   %d call(s) in flight at the end, the oldest %s old: not in calls, errors or latency\n",
			r.CutShort, ms(r.CutShortOldestUS))
	}
	failed := r.Calls - r.OK
	if failed > 0 {
		fmt.Fprintf(w, "  errors      %d of %d calls FAILED (%s): %s\n", failed, r.Calls, failedShare(failed, r.Calls), errorSummary(r))
		if (r.OK > 0 || o.Stopped != "") && r.FirstError != "" {
			fmt.Fprintf(w, "  first error %s\n", r.FirstError)
		}
		printErrorSamples(w, r)
	}
	switch {
	case failed == 0:
		fmt.Fprintf(w, "  calls/s     %s\n", perSecond(r.CallsPerSec))
	case r.OK == 0:
		fmt.Fprintf(w, "  calls/s     %s failed calls/s, none succeeded\n", perSecond(r.CallsPerSec))
	default:
		fmt.Fprintf(w, "  calls/s     %s (%s successful)\n", perSecond(r.CallsPerSec), perSecond(float64(r.OK)/r.ElapsedSec))
	}
	if ol := r.OpenLoop; ol != nil {
		fmt.Fprintf(w, "  rate        %s\n", rateText(ol))
	}
	switch {
	case r.OK == 0:
		fmt.Fprintf(w, "  latency     n/a: no call succeeded\n")
	case failed > 0:
		fmt.Fprintf(w, "  latency     of the %d successful calls: mean %s  p50 %s  p99 %s  p99.9 %s  max %s\n",
			r.OK, ms(r.MeanUS), ms(r.P50US), ms(r.P99US), ms(r.P999US), ms(r.MaxUS))
	default:
		fmt.Fprintf(w, "  latency     mean %s  p50 %s  p99 %s  p99.9 %s  max %s\n",
			ms(r.MeanUS), ms(r.P50US), ms(r.P99US), ms(r.P999US), ms(r.MaxUS))
	}
	if failed == 0 {
		fmt.Fprintf(w, "  errors      none\n")
	}
	if o.ConnectionsLost > 0 || o.ReconnectAttempts > 0 || o.HeartbeatCloses > 0 || o.LivenessCloses > 0 {
		fmt.Fprintf(w, "  connections %d lost, %d re-made (%d dial(s)), %d closed by the heartbeat, %d by the liveness check\n",
			o.ConnectionsLost, o.Reconnects, o.ReconnectAttempts, o.HeartbeatCloses, o.LivenessCloses)
	}
	if o.RetriesMade > 0 || o.RetriesPausedCalls > 0 {
		fmt.Fprintf(w, "  retries     %s\n", retriesText(o))
	}
	fmt.Fprintf(w, "  client CPU  %.1f µs/call\n", r.CPUUS)
	if r.ServerCPUUS > 0 {
		fmt.Fprintf(w, "  server CPU  %.1f µs/call (total %.1f)\n", r.ServerCPUUS, r.CPUUS+r.ServerCPUUS)
	}
	addrs := slices.Sorted(maps.Keys(r.Providers))
	for i, a := range addrs {
		label, note := "attempts", "  (per provider; a failover retry counts again)"
		if i > 0 {
			label, note = "", ""
		}
		fmt.Fprintf(w, "  %-10s  %s %d%s\n", label, a, r.Providers[a], note)
	}
	if m := o.Background; m != nil {
		fmt.Fprintf(w, "  background  %d calls of Payload(%d) from %d callers, %d failed\n", m.Calls, m.Resp, m.Concurrency, m.Errors)
	}
	if b := o.Baseline; b != nil {
		fmt.Fprintf(w, "baseline (pipelined TCP echo, client and server in this process): %.0f calls/s, mean %s, p99 %s, CPU %.1f µs/call (both sides)\n",
			b.CallsPerSec, ms(b.MeanUS), ms(b.P99US), b.CPUUS)
		fmt.Fprintf(w, "  airnode / baseline: calls/s %s, mean %s, p99 %s, CPU/call %s\n",
			ratio(r.CallsPerSec, b.CallsPerSec), ratio(r.MeanUS, b.MeanUS), ratio(r.P99US, b.P99US), ratio(r.CPUUS, b.CPUUS))
	}
}

// printPaper prints the paper's cases as a table, with a footnote that
// explains only the columns printed: the raw and ratio columns and their
// note appear with --baseline alone. Row ends carry no padding.
func printPaper(w io.Writer, outcomes []benchOutcome, f benchFlags) {
	var line strings.Builder
	flush := func() {
		fmt.Fprintln(w, strings.TrimRight(line.String(), " "))
		line.Reset()
	}
	fmt.Fprintf(w, "AirRPC paper's local cases; airnode over %d connection(s); latencies in ms\n", f.connections)
	fmt.Fprintf(&line, "%-18s %-10s %-9s %-9s %-9s %-10s %-12s", "case", "paper", "mean", "p99", "max", "calls/s", "errors")
	if f.baseline {
		fmt.Fprintf(&line, " %-9s %-10s %-11s %-11s", "raw mean", "raw cps", "mean ratio", "cps ratio")
	}
	flush()
	for _, o := range outcomes {
		r, c := o.Report, o.Case
		paper := "collapsed"
		if c.PaperMS > 0 {
			paper = fmt.Sprintf("%.3f", c.PaperMS)
		}
		mean, p99, maxMS := "n/a", "n/a", "n/a" // no call succeeded: no latency
		if r.OK > 0 {
			mean, p99, maxMS = fmt.Sprintf("%.3f", r.MeanUS/1e3), fmt.Sprintf("%.3f", r.P99US/1e3), fmt.Sprintf("%.3f", r.MaxUS/1e3)
		}
		fmt.Fprintf(&line, "%-18s %-10s %-9s %-9s %-9s %-10.0f %-12s", c.Name, paper, mean, p99, maxMS, r.CallsPerSec, errorSummary(r))
		if b := o.Baseline; b != nil {
			fmt.Fprintf(&line, " %-9.3f %-10.0f %-11s %-11s", b.MeanUS/1e3, b.CallsPerSec,
				ratio(r.MeanUS, b.MeanUS), ratio(r.CallsPerSec, b.CallsPerSec))
		}
		if o.Stopped != "" {
			fmt.Fprintf(&line, " (%s)", o.Stopped)
		}
		if o.Interrupted {
			fmt.Fprintf(&line, " (%s)", o.interruption())
		}
		flush()
	}
	fmt.Fprintln(w, "paper: the AirRPC paper's mean per call as published (collapsed: over 1 s); mean, p99, max: this run's successful calls")
	if len(outcomes) > 0 && outcomes[0].CallTimeoutFrom != "" {
		fmt.Fprintf(w, "timeout: %s\n", timeoutText(outcomes[0]))
	}
	if f.baseline {
		fmt.Fprintln(w, "raw: a plain pipelined TCP echo in this process on the same case; ratios are airnode / raw of the same run")
	}
}

// rateText is the summary's rate line's value: "asked 200/s, reached
// 199.9/s; 12 calls started late, no caller free (worst 1.204 s late);
// 3 call(s) intended but not started; a late call's latency counts
// from its intended start, the others' from their start".
func rateText(ol *bench.OpenLoop) string {
	s := fmt.Sprintf("asked %s/s, reached %s/s; ", perSecond(ol.Rate.Asked), perSecond(ol.Rate.Reached))
	switch ol.LateStarts {
	case 0:
		s += "no call started late"
	case 1:
		s += fmt.Sprintf("1 call started late, no caller free (%s late)", ms(ol.LateWorstUS))
	default:
		s += fmt.Sprintf("%d calls started late, no caller free (worst %s late)", ol.LateStarts, ms(ol.LateWorstUS))
	}
	if ol.NotStarted > 0 {
		s += fmt.Sprintf("; %d call(s) intended but not started, no caller free", ol.NotStarted)
	}
	return s + "; a late call's latency counts from its intended start, the others' from their start"
}

func ms(us float64) string { return fmt.Sprintf("%.3f ms", us/1e3) }

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// Names bench gives the two kinds of CHANNEL_INACTIVE failure (benchStatus).
const (
	channelInactiveSent    = "CHANNEL_INACTIVE (sent)"
	channelInactiveNotSent = "CHANNEL_INACTIVE (not sent)"
)

// benchStatus names the status of a failed call for the summary and the
// --json "errors" and timeline keys: the status name ("SERVER_TIMEOUT"),
// except that CHANNEL_INACTIVE is told apart by whether the request had
// been sent when the connection died (spi.ErrRequestSent: the provider
// may have run it; failover retries it only for idempotent methods) —
// channelInactiveSent — or not (safe to retry) — channelInactiveNotSent.
//
// A failure the cluster swallowed (cluster=failsafe: the call returned the
// zero result and no error) is "<STATUS> (swallowed)", the status of the
// attempt that failed: "SERVER_ERROR (swallowed)". BAD_RESPONSE is a
// reply that came back but is not the echo (its length is not the case's
// response size), or one the provider or the consumer's codec refused.
func benchStatus(err error) string {
	if name, ok := swallowedStatus(err); ok {
		return name
	}
	st := spi.StatusOf(err)
	if st != spi.StatusChannelInactive {
		return st.String()
	}
	if errors.Is(err, spi.ErrRequestSent) {
		return channelInactiveSent
	}
	return channelInactiveNotSent
}

// errorSummary is "none" or "NAME count, ..." most frequent first.
func errorSummary(r *bench.Report) string {
	if len(r.Errors) == 0 {
		return "none"
	}
	var parts []string
	for _, n := range r.ErrorNames() {
		parts = append(parts, fmt.Sprintf("%s %d", n, r.Errors[n]))
	}
	return strings.Join(parts, ", ")
}

// padKey is the consumer URL key that switches the bench's padding filter
// on (only in the bench's own catalogs); padAttachment carries the padding.
const (
	padKey        = "bench.pad"
	padAttachment = "bench.pad"
)

type padContextKey struct{}

// padBuilder is a consumer filter, registered only in `airnode bench`'s
// catalogs, that pads a request to the case's size with an attachment
// taken from the call's context (when the request payload and response
// sizes differ).
type padBuilder struct{}

func (padBuilder) Name() string { return "bench.pad" }

func (padBuilder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer}, Key: padKey}
}

func (padBuilder) Build(spi.URL) (spi.Filter, error) { return padFilter{}, nil }

type padFilter struct{}

func (padFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	if pad, ok := ctx.Value(padContextKey{}).(string); ok {
		inv.SetAttachment(padAttachment, pad)
	}
	return next.Invoke(ctx, inv)
}

var (
	_ spi.FilterBuilder = padBuilder{}
	_ spi.Filter        = padFilter{}
	_ spi.FilterBuilder = attemptsBuilder{}
	_ spi.Filter        = attemptsFilter{}
)

// interruptedBench reports a signal that came before bench measured
// anything (when: "before the run started", while it referred to the
// service or waited for a provider) on stderr and returns the error bench
// exits with (130 for SIGINT); the line is a JSON record of level ERROR
// under --log-format json (logFormat "json").
func interruptedBench(sig syscall.Signal, when string, stderr io.Writer, logFormat string) error {
	msg := fmt.Sprintf("bench: interrupted by %s %s", signalName(sig), when)
	errorLine(stderr, logFormat, "bench", "airnode: "+msg, msg)
	return &interruptedError{sig: sig, msg: msg}
}

// readArgError is benchArgs's error for an @FILE or @- argument it could
// not read (no such file, over the payload limit): a failure of what the
// command tried (exit 1), where an argument that is not JSON is a usage
// error (exit 2).
type readArgError struct{ error }

func (e readArgError) Unwrap() error { return e.error }
