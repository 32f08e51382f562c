// Package hbtest holds test helpers for the heartbeat strategies: a fake
// spi.Channel whose ping behaviour a test chooses, and a busy-traffic
// generator. Used by tests only.
package hbtest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/airnode/airnode/spi"
)

// Peer says how a Channel's pings are answered.
type Peer int

const (
	// Answering peers answer every ping at once: LastWrite then LastRead advance.
	Answering Peer = iota
	// Hung peers never answer: LastWrite advances, the ping waits for its ctx.
	Hung
	// Failing peers fail every ping at once without writing.
	Failing
)

// ErrPing is the error of a Failing peer's ping.
var ErrPing = errors.New("hbtest: ping failed")

// Channel is a fake spi.Channel. Safe for concurrent use.
type Channel struct {
	side spi.Side

	mu        sync.Mutex
	peer      Peer
	script    []Peer // consumed one per ping before peer applies
	lastRead  time.Time
	lastWrite time.Time
	pings     int
	spans     []Span // one per ping, in order
	reason    string
	closedAt  time.Time
	onClose   func()

	closeOnce sync.Once
	done      chan struct{}
}

// NewChannel returns a live fake channel on side whose pings are answered
// as peer says. LastRead and LastWrite start at zero ("nothing yet").
func NewChannel(side spi.Side, peer Peer) *Channel {
	return &Channel{side: side, peer: peer, done: make(chan struct{})}
}

// Script makes the next pings behave as given, in order, before the
// channel's Peer applies again.
func (c *Channel) Script(p ...Peer) {
	c.mu.Lock()
	c.script = append(c.script, p...)
	c.mu.Unlock()
}

// SetPeer changes how later pings are answered.
func (c *Channel) SetPeer(p Peer) { c.mu.Lock(); c.peer = p; c.mu.Unlock() }

// OnClose sets f to run inside Close after Done is closed (as an exchange
// that calls the heartbeat's stop synchronously would).
func (c *Channel) OnClose(f func()) { c.mu.Lock(); c.onClose = f; c.mu.Unlock() }

// Read records a frame read now (an RPC response, say).
func (c *Channel) Read() { c.mu.Lock(); c.lastRead = time.Now(); c.mu.Unlock() }

// Write records a frame written now.
func (c *Channel) Write() { c.mu.Lock(); c.lastWrite = time.Now(); c.mu.Unlock() }

// Span is one ping's run: when Ping was called and when it returned (zero
// while it runs).
type Span struct{ Start, End time.Time }

// Spans returns the runs of the pings started so far, in order.
func (c *Channel) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

// Pings returns how many pings were started.
func (c *Channel) Pings() int { c.mu.Lock(); defer c.mu.Unlock(); return c.pings }

// Reason returns the close reason, "" while open.
func (c *Channel) Reason() string { c.mu.Lock(); defer c.mu.Unlock(); return c.reason }

// ClosedAt returns when Close was first called, zero while open.
func (c *Channel) ClosedAt() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.closedAt }

// Side implements spi.Channel.
func (c *Channel) Side() spi.Side { return c.side }

// RemoteAddr implements spi.Channel.
func (c *Channel) RemoteAddr() string { return "127.0.0.1:20880" }

// LastRead implements spi.Channel.
func (c *Channel) LastRead() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.lastRead }

// LastWrite implements spi.Channel.
func (c *Channel) LastWrite() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.lastWrite }

// Ping implements spi.Channel as the channel's Peer says.
func (c *Channel) Ping(ctx context.Context) error {
	c.mu.Lock()
	c.pings++
	i := len(c.spans)
	c.spans = append(c.spans, Span{Start: time.Now()})
	p := c.peer
	if len(c.script) > 0 {
		p, c.script = c.script[0], c.script[1:]
	}
	c.mu.Unlock()
	defer func() { c.mu.Lock(); c.spans[i].End = time.Now(); c.mu.Unlock() }()
	select {
	case <-c.done:
		return spi.ErrChannelInactive
	default:
	}
	switch p {
	case Failing:
		return ErrPing
	case Hung:
		c.Write()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return spi.ErrChannelInactive
		}
	default:
		c.Write()
		c.Read()
		return nil
	}
}

// Close implements spi.Channel: idempotent, records the first reason.
func (c *Channel) Close(reason string) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.reason, c.closedAt = reason, time.Now()
		f := c.onClose
		c.mu.Unlock()
		close(c.done)
		if f != nil {
			f()
		}
	})
}

// Done implements spi.Channel.
func (c *Channel) Done() <-chan struct{} { return c.done }

// Busy records a read and a write on every channel every period until the
// returned stop is called; stop waits for the goroutine.
func Busy(period time.Duration, chs ...*Channel) (stop func()) {
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			for _, c := range chs {
				c.Write()
				c.Read()
			}
			select {
			case <-quit:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit); <-exited }) }
}

var _ spi.Channel = (*Channel)(nil)
