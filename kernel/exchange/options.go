package exchange

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Request is one decoded request header on the provider; the arguments are
// still in Args. A Request and its Args are valid only until Serve returns.
type Request struct {
	Service     string            // service key "group/interface:version"
	Method      string            // method name ("Echo")
	Attachments map[string]string // nil when none
	Timeout     time.Duration     // the consumer's remaining deadline when it sent the request (ms resolution); 0: none
	NumArgs     int               // number of arguments that follow in Args
	Args        spi.Decoder       // positioned at the first argument; decode NumArgs values into the parameter types
	Codec       spi.Codec         // the consumer's codec; the response is encoded with it
	Remote      string            // consumer "host:port"
	Application string            // the consumer's application, from its connection's hello (Channel.PeerApplication); "" when it sent none
	Local       string            // this provider's end of the connection, "host:port" (spi.Invocation.Local)
	ID          uint64            // the request id on its connection, as the consumer numbered it (spi.Invocation.RequestID)
	Began       time.Duration     // spi.Mono when the exchange began handling it (after any wait for a worker): spi.Invocation.Began
	Due         time.Duration     // spi.Mono when the consumer's deadline passes (read + Timeout; 0: none): spi.Invocation.Due

	rd bytes.Reader // the arguments' bytes, which Args reads (Body)
}

// Body returns a new reader of the request's encoded arguments from the
// first, independent of Args, for a handler that must decode them again
// with another decoder of Codec (the kernel does, once an argument failed
// for a struct field its type lacks: see kernel's exportedService.serve).
// It is nil for a Request the exchange did not read (one built by hand)
// and for one with no argument bytes. Valid only until Serve returns, as
// the Request. Costs one allocation: for the rare path only.
func (r *Request) Body() io.Reader {
	if r.rd.Size() == 0 {
		return nil
	}
	rd := r.rd // a bytes.Reader is a slice and an offset: the copy shares the bytes
	rd.Seek(0, io.SeekStart)
	return &rd
}

// Handler serves requests on the provider side. Serve is called in its own
// goroutine per request, with ctx cancelled when the consumer's deadline
// (Request.Timeout) passes (context.DeadlineExceeded), the consumer cancels
// the call (context.Canceled; context.Cause matches ErrConsumerCanceled:
// the call's result is then not sent) or the channel dies
// (context.Canceled). A Result.Err that is an *spi.Error keeps its Status
// on the wire; any other error becomes SERVICE_ERROR with its message. A
// panic in Serve is recovered by the exchange and answered SERVER_ERROR, and
// so is a runtime.Goexit ("handler called runtime.Goexit"): the goroutine
// ends, and the worker pool or the connection's reader goes on in a new
// one. req and what it reads (Args, Body) are valid only until Serve
// returns: the exchange reuses the Request for a later one. ctx may be
// kept; once Serve has returned it reads as cancelled.
type Handler interface {
	Serve(ctx context.Context, req *Request) spi.Result
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) spi.Result

// Serve calls f.
func (f HandlerFunc) Serve(ctx context.Context, req *Request) spi.Result { return f(ctx, req) }

// Options configure a Channel or a Server. Codec is required wherever
// requests arrive (the provider side; a consumer decodes responses with the
// codec it called with); the other fields have usable zero values. Server
// forces Side to spi.Provider.
type Options struct {
	Side      spi.Side                          // spi.Consumer for dialed sessions, spi.Provider for accepted ones
	Payload   int64                             // max frame body in bytes; 0 means 8 MiB (protocol.DefaultPayload)
	Codec     func(id uint8) (spi.Codec, error) // resolves a frame's codec id (catalogs.CodecByID)
	Handler   Handler                           // provider side: serves requests; nil on a pure consumer
	Heartbeat spi.Heartbeat                     // optional: Watch(ch) is called in NewChannel (must not block), stop() after the channel died
	Logger    *slog.Logger                      // nil: slog.Default(); protocol violations are logged at Warn, ordinary closes at Info/Debug
	OnClose   func(ch *Channel, reason string)  // optional: called once after the channel died and its goroutines exited
	// Connections, optional (a Server's), is moved +1 when the Server
	// starts serving a connection (its channel made) and -1 when that
	// channel has finished (as Server.Connections counts them; refused
	// connections are not counted): the kernel gives its transport's
	// counters.ProviderConnections gauge (airnode_provider_connections).
	Connections *counters.Gauge
	// OnReadOnly, optional (consumer side), is called once, on the
	// channel's reader, right after the provider's read-only or go-away
	// event made ReadOnly true: the kernel's directories stop picking
	// the provider then, not on their next look. It must not block.
	OnReadOnly func()
	// OnCheck, optional (consumer side), is called right after a
	// liveness check starts (CheckRunning true: calls timed out, or
	// waited, with nothing read, and a ping went out) and right after
	// it ends (answered, or the channel closed): the kernel's
	// directories leave the provider out of their picks meanwhile. It
	// runs on a call's timer or the check's goroutine; it must not
	// block.
	OnCheck func()
	// Waiting, optional, is called by NewChannel (a consumer's) before
	// each extension call it waits on, with "session Open" (the
	// transport's) or `heartbeat "pinger" Watch`, and with "" once it
	// returned: a Shutdown that gives up on a connection being made
	// names the call.
	Waiting func(call string)
	// OwnerLogsClose (consumer side) says the channel's owner logs every
	// close of the channel itself, with Reason and FailedCalls (the
	// kernel's connection manager: "channel closed; reconnecting" at
	// Warn): the channel logs no "channel closed" record of its own, so
	// that one connection loss is one record.
	OwnerLogsClose bool

	// MinPingInterval is the provider's ping-flood guard (gRPC's
	// too_many_pings): with no request running on the
	// channel a consumer may ping once per MinPingInterval×3/4 (the
	// quarter of tolerance absorbs timer jitter, so a consumer pinging
	// exactly every MinPingInterval never strikes), and up to 8 pings may
	// arrive early together (network delay: notePing's GCRA); a heartbeat
	// request beyond that is a strike; any request resets the count. 0 means
	// DefaultMinPingInterval (1 s); negative turns the guard off. Consumer
	// side: unused.
	MinPingInterval time.Duration
	// MaxPingStrikes is how many strikes a provider channel tolerates: the
	// next one closes it with the logged reason "too many pings" (as gRPC's
	// pingStrikes > maxPingStrikes). 0 means DefaultMaxPingStrikes (2).
	MaxPingStrikes int
	// Hello is this side's heartbeat settings as a URL query string
	// (HeartbeatHello builds it), "" for none. A consumer
	// sends it in the body of its first ping (the kernel's handshake ping);
	// a provider answers a ping that carries a hello with its own. Each side
	// keeps the peer's (Channel.PeerHeartbeat) and logs a strategy mismatch
	// once (per channel, or per peer with WarnOnce). Peers that predate
	// this ignore event bodies.
	Hello string
	// Application is the consumer's application name (URL key
	// application), sent once per connection in its first ping's hello
	// as application=NAME (KeyHelloApplication), with or without
	// heartbeat keys; "" sends none. The provider's records of the
	// channel then carry consumer_application=NAME, and its requests
	// Request.Application. Provider side: unused.
	Application string
	// Started is the provider's start, in ms since the epoch on its own
	// clock (the kernel gives the "timestamp" of the first service
	// exported on the server, the one its registry entry carries). A
	// provider answers a ping that carries a hello with its own hello and
	// timestamp=Started (KeyHelloTimestamp), which the consumer keeps
	// (Channel.PeerStarted): a process restarted on the address of an
	// entry the consumer still lists (the registry unreachable) says on
	// each new connection when it started. 0 sends none. Consumer side:
	// unused.
	Started int64
	// WarnOnce, shared by the channels of one node, makes the heartbeat
	// strategy mismatch a warning per peer rather than per channel: one
	// line per provider address on a consumer, per consumer host on a
	// provider, however many connections and redials. nil: once per
	// channel.
	WarnOnce *WarnOnce
	// MaxConcurrent caps the requests one provider channel (one consumer
	// connection) has in flight, queued for a worker or running (gRPC's
	// MaxConcurrentStreams in spirit): a request beyond it is
	// answered at once with SERVER_THREADPOOL_EXHAUSTED "connection limit N
	// concurrent requests reached" and never queued; heartbeats are always
	// answered. On a multiplexed session it also caps the streams the
	// consumer has open towards the provider at max(MaxConcurrent,
	// MinStreamCap): a stream beyond that is refused (an HTTP/2
	// REFUSED_STREAM), counted in ChannelStats.RefusedStreams, its request
	// answered SERVER_THREADPOOL_EXHAUSTED unrun once its frame header
	// arrives (within a second) and the rest of it never read.
	// 0 means DefaultMaxConcurrent (16384); negative means unlimited.
	// Consumer side: unused.
	MaxConcurrent int
	// Workers caps the goroutines that run provider requests: per Server,
	// shared by all its channels (a provider Channel from NewChannel has a
	// pool of its own). Beyond it requests wait in a FIFO queue, each
	// connection's share bounded by MaxConcurrent, while readers keep
	// reading heartbeats and responses; a slow handler holds its worker, so
	// Workers slow handlers make every later request wait. A request may
	// wait there a tenth of its timeout (at least 10 ms): one still queued
	// then, or one that finds the queue's oldest request waiting longer
	// than its own bound, is answered SERVER_THREADPOOL_EXHAUSTED unrun (as
	// Dubbo's fixed pool of 200 threads answers a request that finds no
	// thread free), so an overload fails fast instead of running requests
	// whose consumers time out meanwhile (workerPool). A worker never waits
	// on a slow consumer: a response that cannot be queued at once is sent
	// from a goroutine of its own. 0 means DefaultWorkers (256); negative
	// means unbounded (a goroutine per request whenever no worker is idle).
	Workers int
	// Direct runs provider requests on the connection's reader instead of
	// the worker pool: Dubbo's dispatcher=direct (Netty's I/O thread). It
	// saves a goroutine hand-off per request, and the responses to a batch
	// of requests read together are written together (as Netty's flush
	// consolidation flushes at read-complete), but a handler that blocks
	// stops its connection: no other request, heartbeat or response is read
	// on it meanwhile. For handlers that never wait (in-memory work). Large
	// responses still go out from a goroutine of their own.
	Direct bool
	// Adaptive runs provider requests on the connection's reader, as Direct
	// does, until one runs longer than a millisecond (handOffAfter): then a
	// new reader goroutine takes over the connection, the slow request
	// finishes on the old one, and the connection's requests go to the
	// worker pool for a while before trying the reader again: 10 ms after
	// a lone hand-off, doubling with each one that follows soon after, up
	// to a second (nextPoolWindow). A read batch that has run a millisecond sends the rest of
	// its requests to the pool too. Fast handlers cost what Direct costs; a
	// handler that blocks holds up the requests behind it on its connection
	// for 1 to 11 ms (the worker pool's watchdog checks every millisecond
	// while it finds requests running, every 10 ms while it finds none),
	// not for as long as it blocks. The idea is the
	// Go runtime's: sysmon takes the processor from a goroutine that stays
	// in a system call longer than 20 µs (runtime/proc.go, retake). Ignored
	// when Direct is set.
	Adaptive bool
	// FirstFrameTimeout bounds how long a provider channel waits for the
	// first complete frame from its consumer: a
	// connection that sends nothing, or part of a frame, is closed then,
	// logged at Debug, instead of holding a file descriptor until the
	// heartbeat's idle verdict (heartbeat.timeout, 200 s by default). A
	// consumer's first frame is its first ping (the kernel's handshake)
	// or call. 0 means DefaultFirstFrameTimeout (10 s, the TLS
	// handshake's bound, as Go's http.Server.ReadHeaderTimeout bounds a
	// request's first bytes); negative turns it off. Consumer side:
	// unused.
	FirstFrameTimeout time.Duration
	// UnsentLimit bounds, in bytes, the answers a Server has queued or is
	// writing for all its consumers together (Server only; URL key
	// unsent.limit of the provider's listening address). Each channel
	// stops reading at highWater (8 MiB) of its own; while the Server's
	// channels together hold UnsentLimit or more beyond budgetFree
	// (64 KiB) each, a channel with budgetStop (256 KiB) or more unsent
	// stops reading too, until its own falls under budgetFree
	// (backpressure.go). 0 means DefaultUnsentLimit (256 MiB); negative
	// turns the Server-wide bound off.
	UnsentLimit int64
	// SlowConsumerAfter is how long a Server's channel may hold 64 KiB
	// or more of answers unsent with none of them written, while the
	// Server's channels together hold UnsentLimit or more, before it is
	// closed as a slow consumer (logged at Warn, counted in
	// counters.Channels.SlowConsumerCloses; slowconsumer.go). 0 means
	// DefaultSlowConsumerAfter (5 s); negative never closes one. Unused
	// without an UnsentLimit and on the consumer side.
	SlowConsumerAfter time.Duration

	// SmallAnswer, optional (provider side), reports whether every answer
	// of method of the service with key service (Request.Service,
	// Request.Method) is known to be small before it runs: at most
	// SmallAnswerMax bytes encoded, whatever the arguments, its error's
	// message and response attachments aside (text the method makes,
	// counted as small). The kernel sets it from its exported services'
	// method tables: true for a method whose results are all of a fixed
	// size (bool, integers, floats, arrays and structs of those; a trailing
	// error), false for anything it does not know statically (generic and
	// plugin-hosted services, unknown names). Such a request is neither
	// held nor counted by the Server's UnsentLimit nor by its channel's
	// slow start while it runs (backpressure.go: a burst of long calls of
	// it on a new connection starts at once); its channel still stops at
	// highWater of answers unsent. It is called only while the channel's
	// answers are not yet known to be small (before its first answer, or
	// after large ones), at most once per request, concurrently, from the
	// worker pool or a reader: it must be quick and must not block. nil:
	// every answer's size is unknown until made.
	SmallAnswer func(service, method string) bool
	// ForeignOpening, optional (provider side), looks at a connection's
	// first protocol.HeaderLen bytes when they are no frame header (bad
	// magic), or at those its transport failed on (a peer protocol error
	// of the session whose error chain has a FirstBytes() []byte method:
	// smux's, 8 to 16 bytes) and, when they are how another transport's
	// consumers open a connection, says so for the record, "the consumer
	// speaks transport=smux, ..."; else it returns "". The kernel asks the
	// transports of its catalogs that implement spi.OpeningRecognizer.
	// A recognized opening closes the channel as a transport mismatch,
	// reason "transport mismatch: WHAT (first bytes: protocol: bad magic
	// ...)", logged at Info, rate-bounded as protocol errors are, and not
	// counted in counters.Channels.ProtocolErrors: a consumer with another
	// transport key (airnode health's first try over smux against a
	// provider serving tcp) is no broken peer. It must not block.
	ForeignOpening func(first []byte) string

	budget *unsentBudget // set by the Server for its channels
}

// SmallAnswerMax bounds, in bytes, the encoded result of a method that
// Options.SmallAnswer calls small: well under the 64 KiB a channel holds
// unsent before the Server's UnsentLimit counts it (budgetFree), so that
// Workers such answers being made at once cost at most 1 MiB.
const SmallAnswerMax = 4 << 10

// DefaultUnsentLimit is the default Options.UnsentLimit.
const DefaultUnsentLimit = 256 << 20

// DefaultSlowConsumerAfter is the default Options.SlowConsumerAfter.
const DefaultSlowConsumerAfter = 5 * time.Second

// DefaultFirstFrameTimeout is the default Options.FirstFrameTimeout: as
// long as a TLS listener gives a handshake (internal/tlsconf).
const DefaultFirstFrameTimeout = 10 * time.Second

// DefaultWorkers is the default Options.Workers: many times the cores a
// provider has, so handlers that block briefly (I/O, locks) still keep the
// CPUs busy, yet far fewer goroutines than a request each at high
// concurrency. Against a goroutine per request it measured, at c=10,000 on
// one connection (airnode bench, 3 alternated runs), +45 % calls/s and
// -52 % provider CPU per call, with no change at c=100.
const DefaultWorkers = 256

// Per-connection limits (Options.MaxConcurrent). The default, 16384, sits
// above the heaviest single-connection load airnode is measured with — the
// AirRPC paper's c=10,000 case, which the bench runs on one connection
// (bench/README.md) and must finish without errors — with headroom, while
// still bounding the goroutines, pending responses and request bodies one
// connection can pin (gRPC-Go leaves MaxConcurrentStreams unlimited by
// default; Dubbo's fixed pool rejects beyond 200 threads, which would fail
// that case). MinStreamCap keeps the stream cap from refusing the brief
// bursts of large-frame streams a small request cap still admits.
const (
	DefaultMaxConcurrent = 16384
	MinStreamCap         = 64
)

// Ping-flood guard defaults (Options.MinPingInterval, MaxPingStrikes).
const (
	DefaultMinPingInterval = time.Second
	DefaultMaxPingStrikes  = 2
)
