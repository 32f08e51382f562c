package exchange

import (
	"context"
	"errors"
	"fmt"
	"github.com/airnode/airnode/internal/counters"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// run serves t on a worker goroutine: it decodes the request, runs the
// handler and answers (two-way requests only); a request the worker pool
// refused is answered its refusal unrun, one it purged at shutdown
// NotRunAnswer. A request whose channel died
// while it was queued, or whose consumer cancelled it (cancel event), is
// dropped unserved; a request cancelled while it ran is not answered. A
// handler that calls runtime.Goexit is answered SERVER_ERROR (goexited)
// before the goroutine ends.
func (c *Channel) run(t task) {
	select {
	case <-c.dying:
		putBody(t.body)
		c.finish()
		return
	default:
	}
	if c.cancels.n.Load() > 0 && c.cancelled(t.h.ID, true) {
		c.cancelDropped.Add(1)
		putBody(t.body)
		c.finish()
		return
	}
	returned := false
	defer func() {
		if !returned { // runtime.Goexit: neither a return nor a panic (handle recovers those)
			c.goexited(t)
		}
	}()
	var res spi.Result
	switch {
	case t.notRun:
		res = spi.Result{Err: NotRunAnswer()}
	case t.refused != 0:
		res = c.refusal(t)
	default:
		res = c.handle(t.h, t.codec, t.body, t.arrived)
	}
	returned = true
	putBody(t.body) // decoded: the handler has returned
	// a request its consumer cancelled while it ran is not answered: the
	// consumer stopped waiting for it
	dropped := c.cancels.n.Load() > 0 && c.cancelled(t.h.ID, true)
	if t.h.TwoWay() && !dropped && c.respond(t.h.ID, t.codec, res) {
		return // handed off: the sender finishes the request
	}
	c.finish()
}

// coming estimates how many frames are about to be enqueued on the
// channel besides the queued ones: provider requests read and not yet
// answered, plus consumer calls in progress whose request is neither
// queued nor on the wire (their caller is encoding it, or returning from
// the previous call). The writer waits for them to join its batch while
// the estimate is positive, and a lone frame is written by its caller only
// when nothing else is coming.
func (c *Channel) coming(queued int64) int64 {
	n := c.inflight.Load() - queued
	if calls := c.calls.Load(); calls > 0 {
		n += calls - max(c.framesWritten.Load()-c.framesRead.Load(), 0)
	}
	return n
}

// finish ends a request dispatch counted: in flight, and in handlers.
func (c *Channel) finish() {
	c.inflight.Add(-1)
	if c.serverInflight != nil {
		c.serverInflight.Add(-1)
	}
	c.handlers.Done()
}

// handle decodes the request preamble and calls the handler with the
// arguments' decoder: a body that does not decode is BAD_REQUEST; a missing
// handler SERVICE_NOT_FOUND; a panic SERVER_ERROR.
//
// The consumer's deadline counts from arrived (when the request was read;
// zero: now), so time spent queued for a worker counts: a request whose
// deadline passed while it waited is answered SERVER_TIMEOUT without
// running, and a result that is ready only after the deadline is replaced
// by SERVER_TIMEOUT — the consumer has given up on both, and neither costs
// the handler's work or a large response body.
func (c *Channel) handle(h protocol.Header, codec spi.Codec, body []byte, arrived int64) (res spi.Result) {
	p, args, err := protocol.ParseRequestPreamble(body)
	if err != nil {
		counters.Provider.BadRequest.Inc()
		return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "exchange: bad request body: %v", err)}
	}
	req := requests.Get().(*Request)
	defer func() { // last: the panic handler below still reads req
		*req = Request{}
		requests.Put(req)
	}()
	*req = Request{
		Service:     intern(p.Service),
		Method:      intern(p.Method),
		Attachments: p.Attachments(),
		NumArgs:     p.NumArgs,
		Timeout:     time.Duration(p.TimeoutMS) * time.Millisecond,
		Codec:       codec,
		Remote:      c.remote,
		Application: c.PeerApplication(),
		Local:       c.local,
		ID:          h.ID,
	}
	if c.opts.Handler == nil {
		return spi.Result{Err: spi.Errorf(spi.StatusServiceNotFound, "exchange: %s serves no services (service %q)", c.opts.Side, req.Service)}
	}
	req.rd.Reset(args)
	dec := codec.NewDecoder(&req.rd)
	req.Args = dec
	defer spi.Release(dec)
	now := mono() // shared with the layers above: Request.Began
	req.Began = time.Duration(now)
	var due int64 // mono() deadline
	if req.Timeout > 0 {
		if arrived == 0 {
			arrived = now
		}
		due = arrived + int64(req.Timeout)
		if now >= due {
			return c.expiredWaiting(req.Service, req.Method, req.Timeout, now-arrived)
		}
		req.Due = time.Duration(due)
	}
	ctx := &reqCtx{ch: c, due: due, id: h.ID} // a handler may keep its context: not pooled
	defer ctx.release()
	defer func() {
		if p := recover(); p != nil {
			c.log().Error("handler panic", "service", req.Service, "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			res = spi.Result{Err: spi.Errorf(spi.StatusServerError, "exchange: panic in %s.%s: %v", req.Service, req.Method, p)}
		}
	}()
	res = c.opts.Handler.Serve(ctx, req)
	switch {
	case res.Err != nil && errors.Is(context.Cause(c.ctx), errShutdownAbandoned):
		// Shutdown's ctx ended while it ran (Channel.abandon).
		var e *spi.Error
		if !errors.As(res.Err, &e) || e.Status != spi.StatusServerError {
			res.Err = &spi.Error{Status: spi.StatusServerError, Cause: res.Err,
				Message: fmt.Sprintf("exchange: provider shut down: its shutdown timeout passed while %s.%s was running; the call was abandoned (%s)",
					req.Service, req.Method, methodEnded(res.Err))}
		}
	case res.Err != nil && closingCauseOf(c.ctx) != nil:
		// A heartbeat closes the connection while it ran (CloseExpected).
		res.Err = &spi.Error{Status: spi.StatusChannelInactive, Cause: res.Err,
			Message: fmt.Sprintf("exchange: the provider closed the connection while %s.%s was running (for %v), cancelling it: %s (%s)",
				req.Service, req.Method, time.Duration(mono()-now).Round(time.Millisecond), closingCauseOf(c.ctx).reason, methodEnded(res.Err))}
	case res.Err != nil && errors.Is(res.Err, context.DeadlineExceeded) && c.ctx.Err() == nil && gaveUpBefore(res.Err) > 0:
		// A filter plugin given up on just before the consumer's
		// deadline (sdk/pluginrpc), so that this answer, naming it,
		// beats the consumer's own timer (tester88 #3); counted expired.
		c.expired.Add(1)
		res.Err = spi.Errorf(spi.StatusServerTimeout, "exchange: call %s.%s timed out after %v on the provider (%s ran until %v before the consumer's deadline, when the provider gave up on it so that this answer reaches the consumer before its own timer; the method was not called)",
			req.Service, req.Method, req.Timeout, deadlinePart(res.Err), gaveUpBefore(res.Err))
	case res.Err != nil && errors.Is(res.Err, context.DeadlineExceeded) && ctx.Err() != nil && c.ctx.Err() == nil:
		// The call's deadline passed while serving: say so in the
		// words of the consumer's own timer ("timed out after 300ms"),
		// which the provider's answer may beat (tester75 #3), and where;
		// answered without its result, so counted expired. "The call's",
		// not "the consumer's": the deadline the consumer sent is the
		// sooner of its timeout and its caller's ctx deadline, which this
		// side cannot tell apart; a kernel consumer adds which it was
		// (tester98 #1: "the consumer's deadline" read as the ctx's).
		c.expired.Add(1)
		res.Err = spi.Errorf(spi.StatusServerTimeout, "exchange: call %s.%s timed out after %v on the provider (the call's deadline passed while %s)", req.Service, req.Method, req.Timeout, deadlineWhere(res.Err))
	case res.Err == nil && due != 0 && ended(res) >= due:
		c.expired.Add(1)
		res = spi.Result{Err: spi.Errorf(spi.StatusServerTimeout, "exchange: call %s.%s timed out after %v on the provider (the method finished after the call's deadline; result not sent)", req.Service, req.Method, req.Timeout)}
	}
	return res
}

// deadlineWhere says where a call whose deadline passed with err was:
// "the method ran", or, when err's chain names a part that ran before the
// method was called (DeadlineBeforeMethod: a filter plugin, sdk/pluginrpc),
// `filter "acme.stamp" ran; the method was not called`.
func deadlineWhere(err error) string {
	var b interface{ DeadlineBeforeMethod() string }
	if errors.As(err, &b) {
		return b.DeadlineBeforeMethod() + " ran; the method was not called"
	}
	return "the method ran"
}

// deadlinePart names the part that ran before the method was called
// when err's chain says one did (DeadlineBeforeMethod: `filter
// "acme.stamp"`), else "the call".
func deadlinePart(err error) string {
	var b interface{ DeadlineBeforeMethod() string }
	if errors.As(err, &b) {
		return b.DeadlineBeforeMethod()
	}
	return "the call"
}

// gaveUpBefore is how long before the consumer's deadline the provider
// gave up on a part that ran before the method (a filter plugin,
// sdk/pluginrpc: GaveUpBefore) so that its answer arrives first; 0 when
// err's chain says none was.
func gaveUpBefore(err error) time.Duration {
	var g interface{ GaveUpBefore() time.Duration }
	if errors.As(err, &g) {
		return g.GaveUpBefore()
	}
	return 0
}

// methodEnded is how a call cut short with err ended: "the method
// returned: err", or err alone when err's chain says the method had not
// returned (an error with a MethodUnfinished method: a service plugin's
// call the host cancelled, sdk/pluginrpc).
func methodEnded(err error) string {
	var u interface{ MethodUnfinished() bool }
	if errors.As(err, &u) && u.MethodUnfinished() {
		return err.Error()
	}
	return "the method returned: " + err.Error()
}

// expiredWaiting counts and answers a request whose consumer's deadline
// of timeout passed while it waited (nanoseconds) for a worker.
func (c *Channel) expiredWaiting(service, method string, timeout time.Duration, waited int64) spi.Result {
	c.expired.Add(1)
	return spi.Result{Err: spi.Errorf(spi.StatusServerTimeout, "exchange: call %s.%s timed out after %v on the provider (the call's deadline passed while the request waited %v for a worker; not run)",
		service, method, timeout, time.Duration(waited).Round(time.Millisecond))}
}

// requests pools handle's Requests: a Request is valid only until its
// Serve returns (Handler), and a pooled one spares the provider 160 bytes
// of garbage a call (with the context, a quarter of what a call leaves;
// the provider's collector ran every ~5,000 calls at c=100: bench/README,
// the thirteenth pass).
var requests = sync.Pool{New: func() any { return new(Request) }}

// ended returns when the handler's result was ready: the layer that timed
// it stamped it (spi.Result.Ended), else the clock now.
func ended(res spi.Result) int64 {
	if res.Ended != 0 {
		return int64(res.Ended)
	}
	return mono()
}

// respond encodes res as the response to request id in codec and sends it.
// A response that fails to encode becomes SERIALIZATION_ERROR, one over the
// payload limit or with more attachments than a consumer decodes
// (protocol.MaxAttachments) BAD_RESPONSE naming the limit: the consumer
// always hears back.
//
// A worker must not wait on a consumer that reads slowly (that would take a
// pool worker from every other consumer): a response that cannot join the
// writer's queue at once — no room (maxQueued), or a large body bound for a
// stream of its own — is handed to a goroutine of its own, and respond
// returns true: that goroutine finishes the request (Channel.finish) once
// the frame is sent, so the request stays in flight, and MaxConcurrent
// bounds these goroutines per channel.
func (c *Channel) respond(id uint64, codec spi.Codec, res spi.Result) (handedOff bool) {
	f := getFrame()
	defer func() {
		if !handedOff {
			putFrame(f)
		}
	}()
	if n := len(res.Attachments); n > protocol.MaxAttachments {
		c.log().Warn("response over the attachment count", "request_id", id, "attachments", n, "limit", protocol.MaxAttachments)
		res = spi.Result{Err: spi.Errorf(spi.StatusBadResponse, "exchange: the answer carries %d attachments, over the %d a consumer accepts (a fixed limit of the wire format, docs/wire.md; the method ran)", n, protocol.MaxAttachments)}
	}
	status, err := encodeResponse(f, codec, res)
	if err != nil {
		status = spi.StatusSerializationError
		f.b = f.b[:protocol.HeaderLen]
		msg := err.Error()
		var rw resultWorded
		if errors.As(err, &rw) {
			msg = rw.ResultMessage()
		}
		_, _ = encodeResponse(f, codec, spi.Result{Err: spi.Errorf(status, "exchange: the method ran, but its result could not be encoded in the call's codec %s: %s", codec.Name(), msg)})
	}
	made := int64(len(f.b)) // what the answer cost to make, before it is replaced below
	if n := made - protocol.HeaderLen; n > c.payload {
		status = spi.StatusBadResponse
		msg := fmt.Sprintf("exchange: response body %d bytes exceeds the provider's payload limit %s (URL key payload; the method ran)", n, protocol.FormatSize(c.payload))
		c.log().Warn("response over payload limit", "request_id", id, "bytes", n, "payload", c.payload)
		f.b = f.b[:protocol.HeaderLen]
		_, _ = encodeResponse(f, codec, spi.Result{Err: &spi.Error{Status: status, Message: msg}})
	}
	protocol.Header{Flags: codec.ID() & protocol.CodecMask, Status: status, ID: id, Length: uint32(len(f.b) - protocol.HeaderLen)}.Put(f.b)
	// The expected size of the answers being made (backpressure.go): the
	// one made, not the BAD_RESPONSE sent for it when it was over payload
	// (tester68 F5: 10 MB answers noted at their 200-byte refusal had
	// every worker make one, 9.5 GB of heap).
	c.noteAnswer(max(made, int64(len(f.b))))
	if !c.ownStream(f.b) && c.w.tryEnqueue(f.b) {
		return false
	}
	// unsent until it has joined the writer's batches or been written on
	// its stream: the reader stops while it waits (backpressure.go)
	n := len(f.b)
	c.w.addUnsent(int64(n))
	go func() {
		defer c.finish()
		defer putFrame(f)
		err := c.send(f.b)
		c.sent(n)
		if err != nil {
			c.die(err.Error(), slog.LevelWarn)
		}
	}()
	return true
}

// resultWorded is a codec's error with its own words for a provider whose
// method's result failed to encode (the protobuf codec's for a JSON object
// or array, whose message is written for the caller that would send one).
type resultWorded interface{ ResultMessage() string }

// encodeResponse appends the response body to f: the attachments, then
// the value in codec (OK) or the error message (any other status; the
// attachments then carry a BizError in the error's chain, bizerror.go).
func encodeResponse(f *frameBuf, codec spi.Codec, res spi.Result) (spi.Status, error) {
	if res.Err == nil {
		f.b = protocol.AppendAttachments(f.b, res.Attachments)
		enc := codec.NewEncoder(f)
		defer spi.Release(enc)
		return spi.StatusOK, enc.Encode(res.Value)
	}
	status, msg := spi.StatusServiceError, res.Err.Error()
	// the message without the status name, which the consumer prefixes
	// again; a wrapper's (a provider filter's fmt.Errorf("auth: %w",
	// err)) keeps its text, the status named once (spi.FromError)
	if e, ok := spi.FromError(res.Err); ok && e.Status != spi.StatusOK {
		status, msg = e.Status, e.Message
	}
	if status == spi.StatusBadRequest && len(msg) > echoWord {
		msg = shortenEcho(msg)
	}
	f.b = protocol.AppendAttachments(f.b, errorAttachments(res, msg)) // a BizError's in its keys
	f.b = protocol.AppendString(f.b, msg)
	return status, nil
}

// A BAD_REQUEST's text often quotes the consumer's input (a codec's
// "number 1000000…", a string it could not decode), and a
// 1,000,001-digit number came back whole (tester49 finding 9). So the
// provider shortens, in a BAD_REQUEST's text, every run of over echoWord
// bytes without a space to its first echoKeep bytes and "... (N bytes)",
// and the whole text to echoMax bytes the same way.
const (
	echoWord = 128
	echoKeep = 64
	echoMax  = 4 << 10
)

// shortenEcho returns msg shortened as above.
func shortenEcho(msg string) string {
	var b strings.Builder
	for rest := msg; rest != ""; {
		word, sep := rest, ""
		if i := strings.IndexByte(rest, ' '); i >= 0 {
			word, sep = rest[:i], " "
		}
		rest = rest[len(word)+len(sep):]
		if len(word) > echoWord {
			word = cutEcho(word, echoKeep)
		}
		b.WriteString(word)
		b.WriteString(sep)
	}
	out := b.String()
	if len(out) > echoMax {
		out = cutEcho(out, echoMax)
	}
	return out
}

// cutEcho returns s's first keep bytes (whole UTF-8 characters) and
// "... (N bytes)", N being len(s).
func cutEcho(s string, keep int) string {
	for keep > 0 && keep < len(s) && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:keep], len(s))
}
