package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Connection-manager defaults (DESIGN §3, §6).
const (
	// DefaultConnectTimeout bounds one dial plus its first ping ("connect.timeout").
	DefaultConnectTimeout = 3 * time.Second
	// DefaultReconnectBackoff is the first redial delay ("reconnect.backoff");
	// it doubles after every failed attempt up to MaxReconnectBackoff.
	DefaultReconnectBackoff = 100 * time.Millisecond
	// MaxReconnectBackoff caps the redial delay.
	MaxReconnectBackoff = 30 * time.Second
)

// channel is what the connection manager needs of an exchange channel
// (*exchange.Channel in production, a fake in tests).
type channel interface {
	Invoke(ctx context.Context, codec spi.Codec, inv *spi.Invocation, timeout time.Duration) spi.Result
	Ping(ctx context.Context) error
	Close(reason string)
	Done() <-chan struct{}
	Wait()
}

// dialFunc opens a consumer channel to addr, giving up when ctx ends.
type dialFunc func(ctx context.Context, addr string) (channel, error)

// connState is one published state of a conn: a ready channel, or the
// error that explains why there is none.
type connState struct {
	ch  channel
	err error // *spi.Error with StatusChannelInactive when ch is nil
}

// conn is one managed consumer connection to a provider address: it owns
// the channel independently of any heartbeat timer (DESIGN §6, issue 4).
// It dials in the background as soon as it starts; when the channel dies for
// any reason it redials with backoff (doubling from reconnect.backoff to 30 s,
// ±20 % jitter) without waiting for user traffic, until close. A channel is
// published only after the provider answered a ping on it, because a hung
// process's kernel still accepts TCP connections.
type conn struct {
	addr           string
	dial           dialFunc
	connectTimeout time.Duration
	backoff        time.Duration
	logger         *slog.Logger

	state     atomic.Pointer[connState] // nil until the first attempt ends
	firstDone chan struct{}             // closed when the first attempt ends
	firstOnce sync.Once

	ctx    context.Context // cancelled by close: aborts a dial in progress
	cancel context.CancelFunc
	once   sync.Once
	done   chan struct{} // closed when run has returned
}

// newConn returns a started conn to addr.
func newConn(addr string, dial dialFunc, connectTimeout, backoff time.Duration, logger *slog.Logger) *conn {
	c := &conn{
		addr: addr, dial: dial, connectTimeout: connectTimeout, backoff: backoff, logger: logger,
		firstDone: make(chan struct{}), done: make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.run()
	return c
}

// get returns the ready channel. Before the first attempt has ended it waits
// for it (or for ctx: CLIENT_TIMEOUT, nothing was sent); afterwards it never
// blocks: with no ready channel it fails fast with CHANNEL_INACTIVE naming
// the address and the last connection error, so a cluster can try another
// provider.
func (c *conn) get(ctx context.Context) (channel, error) {
	st := c.state.Load()
	if st == nil {
		select {
		case <-c.firstDone:
			st = c.state.Load()
		case <-ctx.Done():
			return nil, &spi.Error{Status: spi.StatusClientTimeout,
				Message: fmt.Sprintf("connecting to provider %s: %v", c.addr, ctx.Err()), Cause: ctx.Err()}
		}
	}
	if st.ch != nil {
		return st.ch, nil
	}
	return nil, st.err
}

// available reports whether calls may be routed here: while the first
// attempt is in progress (calls wait for it) or with a ready channel.
func (c *conn) available() bool {
	st := c.state.Load()
	return st == nil || st.ch != nil
}

// ready reports whether a channel is up and answered its first ping.
func (c *conn) ready() bool {
	st := c.state.Load()
	return st != nil && st.ch != nil
}

func (c *conn) publish(st *connState) {
	c.state.Store(st)
	c.firstOnce.Do(func() { close(c.firstDone) })
}

func (c *conn) down(format string, args ...any) *connState {
	err := fmt.Errorf(format, args...)
	return &connState{err: &spi.Error{Status: spi.StatusChannelInactive, Message: err.Error(), Cause: errors.Unwrap(err)}}
}

// run is the manager loop: connect, wait for the channel to die, redial.
func (c *conn) run() {
	defer close(c.done)
	delay := c.backoff
	everUp := false
	for attempt := 1; ; attempt++ {
		if everUp {
			counters.Heartbeat.Reconnects.Inc()
		}
		ch, err := c.connect()
		if err != nil {
			if c.ctx.Err() != nil {
				c.publish(c.down("connection to provider %s closed", c.addr))
				return
			}
			c.publish(c.down("cannot connect to provider %s: %w", c.addr, err))
			c.logger.Debug("kernel: connect failed", "addr", c.addr, "attempt", attempt, "err", err, "retry_in", delay)
			if !c.sleep(jitter(delay)) {
				c.publish(c.down("connection to provider %s closed", c.addr))
				return
			}
			delay = min(delay*2, MaxReconnectBackoff)
			continue
		}
		if everUp || attempt > 1 {
			c.logger.Info("kernel: connected to provider", "addr", c.addr, "attempts", attempt)
		}
		everUp = true
		attempt, delay = 0, c.backoff
		c.publish(&connState{ch: ch})
		select {
		case <-ch.Done():
			c.publish(c.down("provider %s: channel closed, reconnecting", c.addr))
			ch.Wait()
			c.logger.Info("kernel: channel closed; reconnecting", "addr", c.addr)
			if !c.sleep(jitter(c.backoff)) {
				c.publish(c.down("connection to provider %s closed", c.addr))
				return
			}
		case <-c.ctx.Done():
			c.publish(c.down("connection to provider %s closed", c.addr))
			ch.Close("consumer released the provider")
			ch.Wait()
			return
		}
	}
}

// connect dials and waits for the provider to answer a ping, both within
// connect.timeout.
func (c *conn) connect() (channel, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.connectTimeout)
	defer cancel()
	ch, err := c.dial(ctx, c.addr)
	if err != nil {
		return nil, err
	}
	if err := ch.Ping(ctx); err != nil {
		ch.Close("no answer to the connection's first ping")
		ch.Wait()
		return nil, fmt.Errorf("connected but the provider did not answer a ping within %v: %w", c.connectTimeout, err)
	}
	return ch, nil
}

// sleep waits d or until close; it reports whether to go on.
func (c *conn) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// close stops reconnecting, closes the channel and waits for the manager
// goroutine and the channel's goroutines. Idempotent.
func (c *conn) close() {
	c.once.Do(c.cancel)
	<-c.done
}

// jitter spreads d by ±20 % so that consumers of a restarted provider do
// not redial in lockstep.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d*4/5 + rand.N(d*2/5+1)
}

// connPool shares managed connections between the remote invokers of one
// node: one session per provider address and connection settings (slot i of
// "connections=N"), reference-counted, closed when the last invoker using it
// closes (Dubbo's shared connections).
type connPool struct {
	mu    sync.Mutex
	conns map[string]*pooled
}

type pooled struct {
	c    *conn
	refs int
}

// acquire returns the conn for key, creating it with mk when absent.
func (p *connPool) acquire(key string, mk func() *conn) *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		p.conns = map[string]*pooled{}
	}
	e := p.conns[key]
	if e == nil {
		e = &pooled{c: mk()}
		p.conns[key] = e
	}
	e.refs++
	return e.c
}

// release drops one reference to key's conn and closes it at zero.
func (p *connPool) release(key string) {
	p.mu.Lock()
	e := p.conns[key]
	if e == nil {
		p.mu.Unlock()
		return
	}
	e.refs--
	if e.refs > 0 {
		p.mu.Unlock()
		return
	}
	delete(p.conns, key)
	p.mu.Unlock()
	e.c.close()
}

// closeAll closes every conn still held (invokers leaked by a caller).
func (p *connPool) closeAll() {
	p.mu.Lock()
	all := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, e := range all {
		e.c.close()
	}
}
