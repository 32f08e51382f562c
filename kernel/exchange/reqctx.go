package exchange

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/spi"
)

// peerCertificate returns the consumer's certificate the channel's
// session verified under mutual TLS (spi.PeerCertifier), as a
// *x509.Certificate, or an untyped nil.
func (c *Channel) peerCertificate() any {
	if p, ok := c.sess.(spi.PeerCertifier); ok {
		if cert := p.PeerCertificate(); cert != nil {
			return cert
		}
	}
	return nil
}

// reqCtx is a handler's context: cancelled when the consumer's deadline
// passes, the consumer cancels the call (its cancel event, cancel.go) or
// the channel dies. context.Cause says which: context.DeadlineExceeded, an
// error matching ErrConsumerCanceled, or the channel's. It is lazy: the timer and the link to the
// channel's context are only set up when a handler first asks for Done, so
// a handler that never waits (the common, fast case) costs no timer and no
// registration on the channel's shared context — context.WithTimeout would
// take the parent's lock twice per request. The deadline is kept on the
// monotonic clock (mono) and turned into a time.Time only when asked: a
// wall-clock read costs a tenth of a fast request's provider CPU on a VM.
type reqCtx struct {
	ch  *Channel // the provider channel: its ctx is the parent, and its cancel events
	due int64    // mono() deadline; 0: none
	id  uint64   // the request's id, for cancel events

	end atomic.Pointer[ctxEnd] // set when cancelled for a reason (not by release)

	mu       sync.Mutex
	deadline int64 // due on the wall clock (unix ns), once Deadline has been asked
	done     chan struct{}
	err      error
	timer    *time.Timer
	stopLink func() bool // set by Done; with ch, it is registered for cancel events too
}

// ctxEnd is why a reqCtx was cancelled, kept apart (and made only then) so
// that a request's context stays small.
type ctxEnd struct {
	cause error
	once  sync.Once
	ctx   context.Context // cancelled with cause, made when Value is asked
}

func (c *reqCtx) Deadline() (time.Time, bool) {
	if c.due == 0 {
		return time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deadline == 0 {
		c.deadline = time.Now().Add(time.Duration(c.due - mono())).UnixNano()
	}
	return time.Unix(0, c.deadline), true
}

// Value is the channel context's, except once the context is cancelled:
// then it is a context cancelled with the same cause, so that
// context.Cause (which asks Value for the cancelling context) returns it.
//
// It answers spi.PeerCertificateKey from the channel's session (the
// consumer's certificate, kept by the transport at the handshake), so
// the identity costs a call nothing unless the call asks for it.
func (c *reqCtx) Value(key any) any {
	if _, ok := key.(spi.PeerCertificateKey); ok {
		return c.ch.peerCertificate()
	}
	if e := c.end.Load(); e != nil {
		e.once.Do(func() {
			// not cancelled by the channel's ctx: when the channel died
			// in between (a consumer that cancels, then closes), the
			// child would take the channel's cause, not e.cause
			cc, cancel := context.WithCancelCause(context.WithoutCancel(c.ch.ctx))
			cancel(e.cause)
			e.ctx = cc
		})
		return e.ctx.Value(key)
	}
	return c.ch.ctx.Value(key)
}

func (c *reqCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	c.done = make(chan struct{})
	if c.err != nil {
		close(c.done)
		return c.done
	}
	if err, cause := c.expiredLocked(); err != nil {
		c.cancelLocked(err, cause)
		return c.done
	}
	if cause := c.ch.watchCancel(c); cause != nil {
		c.cancelLocked(context.Canceled, cause)
		return c.done
	}
	if c.due != 0 {
		c.timer = time.AfterFunc(time.Duration(c.due-mono()), func() { c.cancel(context.DeadlineExceeded, context.DeadlineExceeded) })
	}
	c.stopLink = context.AfterFunc(c.ch.ctx, func() { c.cancel(context.Canceled, context.Cause(c.ch.ctx)) })
	return c.done
}

func (c *reqCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		if err, cause := c.expiredLocked(); err != nil {
			c.cancelLocked(err, cause)
		}
	}
	return c.err
}

// expiredLocked reports why the context is over now, and the cause, or
// nil. A handler that never asked for Done learns of its consumer's cancel
// event here.
func (c *reqCtx) expiredLocked() (err, cause error) {
	if c.ch.ctx.Err() != nil {
		return context.Canceled, context.Cause(c.ch.ctx)
	}
	if c.due != 0 && mono() >= c.due {
		return context.DeadlineExceeded, context.DeadlineExceeded
	}
	if c.ch.cancels.n.Load() > 0 && c.ch.cancelled(c.id, false) {
		return context.Canceled, c.ch.cancelCause(c.id)
	}
	return nil, nil
}

// cancel ends the context with err and cause (nil: none, as release).
func (c *reqCtx) cancel(err, cause error) {
	c.mu.Lock()
	c.cancelLocked(err, cause)
	c.mu.Unlock()
}

func (c *reqCtx) cancelLocked(err, cause error) {
	if c.err != nil {
		return
	}
	c.err = err
	if cause != nil {
		c.end.Store(&ctxEnd{cause: cause})
	}
	if c.done != nil {
		close(c.done)
	}
}

// release stops the timer and the link to the parent; the context is
// cancelled (Canceled) if it was not over yet, as a CancelFunc would.
func (c *reqCtx) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.stopLink != nil {
		c.stopLink()
		c.ch.unwatchCancel(c.id)
	}
	c.cancelLocked(context.Canceled, nil)
}

func (c *reqCtx) String() string { return "exchange.requestContext" }

var _ context.Context = (*reqCtx)(nil)
