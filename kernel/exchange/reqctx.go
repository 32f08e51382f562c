package exchange

import (
	"context"
	"sync"
	"time"
)

// reqCtx is a handler's context: cancelled when the consumer's deadline
// passes or the channel dies. It is lazy: the timer and the link to the
// channel's context are only set up when a handler first asks for Done, so
// a handler that never waits (the common, fast case) costs no timer and no
// registration on the channel's shared context — context.WithTimeout would
// take the parent's lock twice per request. The deadline is kept on the
// monotonic clock (mono) and turned into a time.Time only when asked: a
// wall-clock read costs a tenth of a fast request's provider CPU on a VM.
type reqCtx struct {
	parent context.Context // the channel's context
	due    int64           // mono() deadline; 0: none

	mu       sync.Mutex
	deadline time.Time // due on the wall clock, once Deadline has been asked
	done     chan struct{}
	err      error
	timer    *time.Timer
	stopLink func() bool
}

func (c *reqCtx) Deadline() (time.Time, bool) {
	if c.due == 0 {
		return time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deadline.IsZero() {
		c.deadline = time.Now().Add(time.Duration(c.due - mono()))
	}
	return c.deadline, true
}

func (c *reqCtx) Value(key any) any { return c.parent.Value(key) }

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
	if err := c.expiredLocked(); err != nil {
		c.cancelLocked(err)
		return c.done
	}
	if c.due != 0 {
		c.timer = time.AfterFunc(time.Duration(c.due-mono()), func() { c.cancel(context.DeadlineExceeded) })
	}
	c.stopLink = context.AfterFunc(c.parent, func() { c.cancel(context.Canceled) })
	return c.done
}

func (c *reqCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		if err := c.expiredLocked(); err != nil {
			c.cancelLocked(err)
		}
	}
	return c.err
}

// expiredLocked reports why the context is over now, or nil.
func (c *reqCtx) expiredLocked() error {
	if c.parent.Err() != nil {
		return context.Canceled
	}
	if c.due != 0 && mono() >= c.due {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *reqCtx) cancel(err error) {
	c.mu.Lock()
	c.cancelLocked(err)
	c.mu.Unlock()
}

func (c *reqCtx) cancelLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
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
	}
	c.cancelLocked(context.Canceled)
}

func (c *reqCtx) String() string { return "exchange.requestContext" }

var _ context.Context = (*reqCtx)(nil)
