// Package exchange carries calls over a transport session as airnode frames
// (kernel/protocol): request/response correlation by request id,
// per-call timeouts, heartbeat events, payload limits and the provider's
// request dispatch.
//
// A Channel wraps one spi.Session. Small frames are pipelined on one
// long-lived stream, written by a single writer goroutine that coalesces every
// ready frame into one write and exits when nothing is queued (an idle
// connection keeps only its reader); on a multiplexed session a frame whose body is
// over 64 KiB gets a stream of its own, so a 4 MiB response does not hold up
// small calls. Request ids come from a per-channel counter and are never
// reused. A consumer call starts no goroutine; a provider request runs on a
// worker goroutine (reused for 2-4 s of idleness), never on the reader —
// unless Options.Direct (Dubbo's dispatcher=direct) runs it on the reader,
// which then writes the responses of each read batch itself, or
// Options.Adaptive (the kernel's default) does so until a request runs a
// millisecond, when a new goroutine takes over reading the connection and
// its requests go to the workers for a second (adaptive.go).
// A Server runs at most Options.Workers workers (default DefaultWorkers =
// 256) for all its channels; beyond that requests wait in a FIFO queue whose
// share per connection Options.MaxConcurrent bounds, so a reader never
// blocks on a busy pool and heartbeats and responses are read while every
// worker is busy. A worker never waits for a slow consumer to read: a
// response that cannot be queued at once goes out from a goroutine of its
// own. Server.Shutdown drains queued requests too.
//
// Rules: a call whose deadline passes (or whose ctx is
// cancelled) while its request is still queued in the writer withdraws the
// request, which is then never sent, and fails with CLIENT_TIMEOUT, so a
// failover retry cannot run the call twice; once the request has been handed
// to the transport (written, or being written) it fails with SERVER_TIMEOUT.
// A request over 64 KiB on a stream of its own counts as queued until it
// opens that stream, and after that while the stream can still withdraw it
// (spi.Withdrawer: smux's, while its flow control has let none of its
// bytes go); the stream is then closed empty.
// Its pending entry and timer are removed either way and a late response is
// dropped and counted (ChannelStats.LateResponses). When a channel dies,
// every pending call fails at once with CHANNEL_INACTIVE (spi.ErrRequestSent
// as Cause when its request had been handed to the transport). A
// CHANNEL_INACTIVE the provider answers in a response frame (a service
// plugin that died during the call) always has spi.ErrRequestSent as Cause:
// the provider received the request. The remaining
// deadline travels in the request preamble (ms, Request.Timeout) and cancels
// the handler's context (context.DeadlineExceeded). So does the caller's
// cancel (cancel.go): a call whose ctx is cancelled (not its deadline)
// after its request was handed to the transport fails CLIENT_ERROR at once
// and sends the one-way cancel event (empty body, the request's id, like
// HTTP/2's RST_STREAM); the provider cancels that request's handler context
// (context.Canceled, context.Cause matching ErrConsumerCanceled), drops the
// request unrun if it is still queued for a worker or not read yet, and
// sends no response for it. Nothing is tracked per call for it on the
// normal path. With Options.Direct the reader runs the handler, so it reads
// the cancel (as a heartbeat) only after the handler returns. Providers that
// predate the event drop it unread. payload (default 8 MiB) is enforced when encoding (nothing is
// sent) and when decoding: a call's frame over it is read and dropped, the
// provider answering BAD_REQUEST and the consumer failing the call
// BAD_RESPONSE, each naming its limit, and the connection goes on, whatever
// size the header claims (the body is dropped as it arrives; an event over
// it closes the connection); a bad magic, unknown codec
// id or truncated header closes the connection with a logged reason; a body
// that fails to decode answers BAD_REQUEST and the connection stays up.
//
// Heartbeats: both ends answer two-way
// heartbeat events. The provider guards against ping floods as gRPC's
// too_many_pings does, judged by rate (GCRA, notePing): on an idle channel
// a consumer may ping once per Options.MinPingInterval×3/4 (default 1 s),
// while a request runs or answers of 64 KiB or more wait to be written
// once per MinPingInterval/100 (faster is a flood
// even while calls run), with up to pingBurst (8) pings arriving early together
// (a lossy link delivers pings held behind a lost segment at once);
// a ping beyond that is a strike, a request read or
// a ping on time resets the count, pings read together from one buffer
// fill, or as the backlog found when the reader reads again after its
// unsent answers stopped it (sent while this side was stopped), are
// judged once, and the strike
// after Options.MaxPingStrikes (default 2) closes the channel with the
// logged reason "too many pings". A heartbeat may carry a body, the sender's
// heartbeat keys as a query string (Options.Hello, HeartbeatHello): the
// consumer sends its hello with its first ping, the provider answers with
// its own; each side exposes the peer's (Channel.PeerHeartbeat, for the
// heartbeat strategies) and logs a strategy mismatch once, and the provider
// logs once a consumer that pings much faster than its advertised interval.
// A consumer's hello also carries its application (Options.Application,
// KeyHelloApplication), which the provider takes out of it: its records of
// the channel carry consumer_application, and its requests
// Request.Application. A provider's answer also carries its start
// (Options.Started, KeyHelloTimestamp), which the consumer takes out of
// it (Channel.PeerStarted): the balancers' warm-up then counts from the
// start of the process the connection reached, not from an older
// registry entry's.
// Liveness after timeouts: when a consumer call
// fails SERVER_TIMEOUT and nothing at all has been read from the channel
// since the call began, and Options.Heartbeat implements
// spi.TimeoutCheck with the check on (the bundled strategies, URL key
// heartbeat.ping.on.timeout, default true), the channel sends one ping at
// once, in a goroutine of its own that Close waits for, waiting
// max(1 s, the call's timeout), capped by the strategy (idle:
// heartbeat.ping.timeout; dual: heartbeat.interval). At most one such
// ping is outstanding and at most one starts per max(1 s, timeout). No
// answer, and still nothing read, closes the channel, logged at Warn:
// "liveness check: N calls to ADDR timed out with nothing read since they
// were sent, and a ping got no answer within T", which every pending call
// fails with (CHANNEL_INACTIVE) and on which the kernel redials. An
// answer (a slow provider) leaves the channel alone. WhenCheckEnds tells
// whether such a ping waits and calls back when the check ends (the
// kernel keeps an ejected provider out until then). A read-idle heartbeat
// never fires on a channel that keeps sending calls, so without this a
// black-holed provider kept its channel for interval × (retries + 1),
// 4 min with the defaults. Nor need a call time out first: the channel's
// quiet watch (one timer, looking every 0.5 s while calls are pending,
// stopped while none is: an idle channel costs nothing periodic) starts
// the same check when calls have been pending with nothing read for
// QuietBound of the longest timeout among them (max(3 s, half of it)),
// its ping waiting 1 s (same cap), unless the provider's hello says it
// runs requests on its reader (KeyHelloDispatcher, dispatcher=direct).
//
// Server.AnnounceDraining, which the kernel calls as a registered node's
// shutdown begins (before its shutdown.wait), sends each consumer a
// one-way draining event (body "D"): Channel.Draining is then true on the
// consumer, which still calls the provider (draining.go).
// Server.Shutdown first sends each consumer a one-way read-only event
// (Dubbo's READONLY_EVENT, body "R"), after which Channel.ReadOnly is true on
// the consumer, then drains. Before closing a channel (Shutdown, Close) the
// provider sends the one-way go-away event: body "G" and the highest
// request id it read, 8 bytes big-endian (HTTP/2's GOAWAY, RFC 9113 §6.8).
// It runs no request read after that, so the consumer fails its calls with
// higher ids as CHANNEL_INACTIVE with spi.ErrGoAway and without
// spi.ErrRequestSent: never run, safe to retry on another provider
// whatever the method (Channel.GoneAway is then true: the kernel picks the
// provider no more). It fails them
// when the go-away arrives, not when the channel closes after the
// provider's drain, and sends no request on the channel after it. The
// provider then pings and, before closing, waits for the answer (at most
// 500 ms in Shutdown, 100 ms in Close), reading meanwhile: a request
// numbered before the go-away's id but written after it (concurrent calls
// are written in any order) is read and answered SERVICE_NOT_FOUND, not
// run, instead of being lost unread with the connection and failed as
// may-have-run.
//
// When its heartbeat (a Close whose reason starts "heartbeat ", or
// CloseExpected) or its ping-flood guard closes a channel, the provider
// first sends the one-way close-reason event, body 'C' and the reason in
// UTF-8, and waits 100 ms at most for it to be written; the consumer adds
// it to its own close reason ("closed by peer (the provider's reason:
// ...)"), which its failed calls and the kernel's log carry
// (closereason.go). Unlike the go-away it says nothing about which
// requests ran.
//
// Backpressure: while a provider
// channel has highWater (8 MiB) or more of answers queued or being
// written for a consumer that does not read them — heartbeat answers and
// refusals included — its readers read no frame and the worker pool
// parks its requests instead of running them; both resume under
// lowWater (4 MiB), parked requests oldest first, as many as have room
// and at most 64 at a time (resumeBatch), so that they do not queue ahead
// of other consumers' all at once; a request read while older ones are
// parked parks behind them (parkBehind), so a connection's callers of
// large answers are served in turn. A consumer that reads nothing thus pins about 8 MiB
// plus the answers of the handlers already running when it stopped (at
// most min(Options.Workers, Options.MaxConcurrent) of them, each at most
// payload) and at most highWater of requests read and not started
// (a reader that has handed the worker pool that much waits for them to
// start: HTTP/2's connection window in spirit), instead of growing the
// provider without bound. That middle term is what a method
// with large answers costs: demo.Echo's Payload(4 MiB) called by a
// consumer reading nothing held airnode serve at 715 MiB RSS (5.2 GB without it), 219
// MiB with connection.concurrency=16. Each
// stop is counted (ChannelStats.Stalls) and logged at Info, "stopped
// reading from ADDR: 8.0 MiB of answers unread", at a bounded rate. A consumer that reads,
// however slowly, gets every answer. A Server also bounds what its
// channels hold unsent together (Options.UnsentLimit, default 256 MiB):
// over it, a channel holding budgetStop (256 KiB) or more stops reading
// as at highWater, until it holds under budgetFree (64 KiB).
//
// Connection lifetimes: a provider channel on which no complete frame
// arrives within Options.FirstFrameTimeout (default 10 s, the TLS
// handshake's bound) is closed, logged at Debug ("no complete frame
// within 10s of connecting"); after its first frame, the heartbeat's
// verdict (heartbeat.timeout with nothing read or written) closes a
// connection gone quiet.
//
// Log volume: "channel closed" lines at
// Warn (protocol errors, heartbeat verdicts), "stopped reading" lines and
// answers for ids never sent are bounded per class (the reason with its
// numbers blanked) and base logger as internal/netaccept bounds accept
// failures: the first line verbatim, then one per doubling of the count
// up to 1,024, then one every 10 s, each with suppressed (left out since
// the previous line) and in_burst. Once lines are left out, a summary line
// (the class's message with summary, class, suppressed and in_burst) is
// written 10 s after the class's last line unless another line of it
// came meanwhile, so a burst that stops is always summed up. A response whose id this side never
// sent (0, or above the highest it numbered) is dropped, counted
// (ChannelStats.Unsolicited) and logged at Warn "answer for request id X
// never sent: is the provider's framing broken?"; a duplicate or late
// answer (after CLIENT_TIMEOUT) is silent, counted in LateResponses.
//
// Counters: whatever the log leaves out, the process-wide
// counters.Channels count (package internal/counters; exported by
// extensions/filter/metrics as airnode_channels_closed_total{reason} and
// the channels.* keys of /stats): channels closed for a protocol error
// (bad magic, oversize, a frame the peer cut short, an unknown codec),
// by the ping-flood guard, or by the first-frame rule, each once under
// the reason that closed it (a heartbeat verdict is
// counters.Heartbeat.IdleClosed, the liveness check's close
// counters.Heartbeat.LivenessClosed: reason="liveness"); backpressure stalls; answers for ids
// never sent. A read cut short because this side's connection was closed
// under it (the tcp transport closes it when a write fails, a consumer
// that read nothing having gone away), or after a write failed, is the
// peer's close ("closed by peer", Debug), and a reset is a read error
// (Info): neither is reported or counted as the peer's protocol error. A
// write the peer reset or closed (ECONNRESET, EPIPE) closes the channel
// at Info ("write: ..."), other write errors at Warn.
//
// Limits: a provider channel — one consumer connection —
// has at most Options.MaxConcurrent requests in flight (queued or running;
// default DefaultMaxConcurrent = 16384, negative = unlimited; the kernel sets
// it from the provider URL key connection.concurrency: integer, default
// 16384, 0 or negative = unlimited, at most 2147483647). A request beyond it
// is answered at once by the reader with SERVER_THREADPOOL_EXHAUSTED
// "connection limit N concurrent requests reached" and counted
// (ChannelStats.Rejected); nothing queues without bound, and heartbeats are
// always answered. On a multiplexed session the consumer may have at most
// max(MaxConcurrent, MinStreamCap = 64) streams open towards the provider; a
// stream beyond that is closed unread (HTTP/2's REFUSED_STREAM), counted
// (ChannelStats.RefusedStreams) and logged once per channel. A well-behaved
// consumer opens a stream only for a frame over 64 KiB and closes it after
// that frame, so it does not come near the cap.
//
// A handler's panic is answered SERVER_ERROR, and so is a handler that
// calls runtime.Goexit (t.FailNow in a test double), "handler called
// runtime.Goexit": its goroutine ends, so a worker is replaced and a reader
// that ran it (Direct, Adaptive) goes on in a new goroutine; the connection
// stays up.
//
// Channel and Server methods are safe for concurrent use. Channel.Close fails
// every pending call with CHANNEL_INACTIVE at once and waits for the
// channel's I/O goroutines; Channel.Wait also waits for running handlers, the
// heartbeat watch's stop and OnClose. Server.Close returns after every
// channel it owns has finished, handlers included. Server.Shutdown does so
// too unless its ctx ends first: it then waits at most 100 ms more
// (closeGrace) and returns ctx's error, leaving behind a handler that
// ignores its cancelled context; that handler's goroutine ends when it
// returns (its answer dropped), its channel finishes then, and the last
// channel to finish closes the worker pool — no goroutine of the server
// waits for it meanwhile.
package exchange
