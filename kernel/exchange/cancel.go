package exchange

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// The cancel event: a consumer whose call's ctx is cancelled (not its
// deadline, which travels in the request) after the request was handed to
// the transport sends a one-way event frame with an empty body whose
// header id is the cancelled request's id (gRPC cancels the server
// handler's context on RST_STREAM the same way). The provider cancels that
// request's handler context (context.Canceled; context.Cause matches
// ErrConsumerCanceled) if it is running, drops it unrun and unanswered if it
// is still queued for a worker (or not read yet: a request on a stream of
// its own may arrive after its cancel), and sends no response for a
// cancelled request: its consumer has stopped waiting. A provider that
// predates the event ignores it: a one-way event with an empty body was
// already dropped unread (heartbeatRequest), so an old provider runs the
// request to its end as before.
//
// Nothing is tracked per call on the normal path: the consumer sends the
// frame only from the cancel path, and the provider keeps the ids it was
// told of (cancelState) and looks at them only while there are any (one
// atomic load per request otherwise). A handler waiting on Done is
// registered so that a cancel reaches it at once; one that only polls Err
// sees the cancel at its next Err.

// ErrConsumerCanceled matches (errors.Is) the cause of a handler context
// cancelled by its consumer's cancel event: context.Cause(ctx) on the
// provider. The cause matches context.Canceled too.
var ErrConsumerCanceled = errors.New("exchange: the consumer cancelled the call")

// consumerCanceled is the cause of a handler context cancelled by a cancel
// event.
type consumerCanceled struct {
	remote string
	id     uint64
}

func (e *consumerCanceled) Error() string {
	return fmt.Sprintf("exchange: the consumer %s cancelled the call (cancel event for request %d)", e.remote, e.id)
}

// Is matches ErrConsumerCanceled and context.Canceled.
func (e *consumerCanceled) Is(target error) bool {
	return target == ErrConsumerCanceled || target == context.Canceled
}

// The provider forgets a cancel it could not match to a request after
// between cancelGenAge and twice that, or after 2 x cancelGenCap later
// cancels: a cancel that arrived just after its request finished would
// otherwise stay for ever. A request still queued that long after its
// cancel runs as if it had not been cancelled.
const (
	cancelGenAge = 10 * time.Second
	cancelGenCap = 4096
)

// cancelState is a provider channel's record of its consumer's cancel
// events: the ids cancelled and not yet matched to a request (two
// generations, cancelGenAge / cancelGenCap), and the handlers waiting on
// Done, so that a cancel reaches them at once.
type cancelState struct {
	n atomic.Int64 // ids in cur and prev: nothing else is looked at while 0

	mu        sync.Mutex
	cur, prev map[uint64]struct{}
	since     int64              // mono() when cur began
	waiting   map[uint64]*reqCtx // running handlers that asked for Done
}

// rotateLocked starts a new generation when cur is old or full. On mu.
func (s *cancelState) rotateLocked() {
	if len(s.cur) == 0 && len(s.prev) == 0 {
		return
	}
	if now := mono(); len(s.cur) >= cancelGenCap || now-s.since >= int64(cancelGenAge) {
		s.prev, s.cur, s.since = s.cur, nil, now
	}
}

// countLocked publishes the number of ids. On mu.
func (s *cancelState) countLocked() { s.n.Store(int64(len(s.cur) + len(s.prev))) }

// sendCancel queues the cancel event for request id (consumer side).
func (c *Channel) sendCancel(id uint64) {
	var f [protocol.HeaderLen]byte
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagEvent, ID: id}.Put(f[:])
	s := c.w.enqueue(f[:])
	for last := c.lastCancel.Load(); last < s.gen && !c.lastCancel.CompareAndSwap(last, s.gen); last = c.lastCancel.Load() {
	}
	c.cancelsSeen.Add(1)
}

// cancelFlush bounds how long a consumer channel's Close waits for its
// cancel events still queued to be written (flushCancels).
const cancelFlush = 100 * time.Millisecond

// flushCancels waits, on a consumer channel whose last cancel event is
// not written yet, until it is (with what was queued before it), the
// channel dies or cancelFlush passes: a consumer that cancels a call and
// then closes at once (Ctrl-C on airnode call) would otherwise close the
// connection with the cancel still queued, and its provider would see the
// handler's context end only with the connection ("context canceled"),
// not by the consumer's cancel (ErrConsumerCanceled).
func (c *Channel) flushCancels() {
	if c.opts.Side != spi.Consumer {
		return
	}
	if last := c.lastCancel.Load(); last == 0 || c.w.written(last) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cancelFlush)
	defer cancel()
	c.flush(ctx)
}

// takeCancel handles a cancel event for request id on the provider: it is
// recorded for run (a queued request is dropped) and a handler waiting on
// Done is cancelled now.
func (c *Channel) takeCancel(id uint64) {
	c.cancelsSeen.Add(1)
	s := &c.cancels
	s.mu.Lock()
	s.rotateLocked()
	if len(s.cur) == 0 && len(s.prev) == 0 {
		s.since = mono() // the first cancel of a generation
	}
	if s.cur == nil {
		s.cur = make(map[uint64]struct{})
	}
	s.cur[id] = struct{}{}
	s.countLocked()
	ctx := s.waiting[id]
	s.mu.Unlock()
	if ctx != nil {
		ctx.cancel(context.Canceled, c.cancelCause(id))
	}
}

// cancelled reports whether the consumer cancelled request id, forgetting
// the cancel when take is set. Call it only while cancels.n > 0.
func (c *Channel) cancelled(id uint64, take bool) bool {
	s := &c.cancels
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rotateLocked()
	_, ok := s.cur[id]
	if ok {
		if take {
			delete(s.cur, id)
		}
	} else if _, ok = s.prev[id]; ok && take {
		delete(s.prev, id)
	}
	s.countLocked()
	return ok
}

// cancelCause is the cause of request id's context cancelled by its
// consumer.
func (c *Channel) cancelCause(id uint64) error { return &consumerCanceled{remote: c.remote, id: id} }

// watchCancel registers ctx, whose handler asked for Done, for its cancel
// event; when the consumer cancelled it already it returns the cause
// instead. Lock order: ctx.mu, then cancels.mu.
func (c *Channel) watchCancel(ctx *reqCtx) error {
	s := &c.cancels
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n.Load() > 0 {
		_, cur := s.cur[ctx.id]
		_, prev := s.prev[ctx.id]
		if cur || prev {
			return c.cancelCause(ctx.id)
		}
	}
	if s.waiting == nil {
		s.waiting = make(map[uint64]*reqCtx)
	}
	s.waiting[ctx.id] = ctx
	return nil
}

// unwatchCancel undoes watchCancel.
func (c *Channel) unwatchCancel(id uint64) {
	s := &c.cancels
	s.mu.Lock()
	delete(s.waiting, id)
	s.mu.Unlock()
}

// goexited answers request t, whose handler called runtime.Goexit (t.FailNow
// in a test double): it neither returned nor panicked, and the goroutine
// that ran it is ending. The consumer is answered SERVER_ERROR at once
// instead of waiting for its whole timeout; the caller of run (a worker, or
// the reader with Options.Direct or Options.Adaptive) replaces the
// goroutine.
func (c *Channel) goexited(t task) {
	svc, method := "?", "?"
	if p, _, err := protocol.ParseRequestPreamble(t.body); err == nil {
		svc, method = string(p.Service), string(p.Method)
	}
	c.log().Error("handler called runtime.Goexit: answered SERVER_ERROR", "service", svc, "method", method, "request_id", t.h.ID)
	res := spi.Result{Err: spi.Errorf(spi.StatusServerError, "exchange: %s.%s: handler called runtime.Goexit (t.FailNow in a test double?) before returning a result", svc, method)}
	putBody(t.body)
	if t.h.TwoWay() && c.respond(t.h.ID, t.codec, res) {
		return
	}
	c.finish()
}

// resume continues reading r's stream on a new goroutine after a request
// running on the reader called runtime.Goexit (Options.Direct, or
// Options.Adaptive before a hand-off): the connection goes on, the new
// goroutine taking over the old one's count of c.io. The responses held
// for the read batch go out now, as at a hand-off.
func (r *reader) resume() {
	c := r.c
	if r.held {
		r.held = false
		c.w.hold(false)
	}
	go c.read(r)
}
