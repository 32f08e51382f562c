package exchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// Server accepts sessions from a transport listener and serves each with a
// provider Channel (Options.Side is forced to spi.Provider). Safe for
// concurrent use.
type Server struct {
	l    spi.Listener
	opts Options
	log  *slog.Logger

	inflight atomic.Int64
	pool     *workerPool // shared by the channels

	mu       sync.Mutex
	chans    map[*Channel]struct{}
	closing  bool
	draining bool          // AnnounceDraining was called: a new channel is told at once
	stopping chan struct{} // closed when Shutdown or Close begins
	stopOnce sync.Once

	// closeAll left channels behind (handlers ignoring their context):
	// the last of them to finish closes the pool (closePool). On mu.
	poolOnLast bool
	poolOnce   sync.Once
	stuck      []StuckCall // on mu: what the channels closeAll left behind wait on (StuckCalls)

	// Connection limit (LimitConnections), on mu: the channels from each
	// peer IP (only with limit.PerIP > 0), the connections refused, and
	// when the last refusal was logged.
	limit     ConnectionLimit
	perIP     map[string]int
	refused   uint64
	refusedAt time.Time
	// The refused sessions being told why (tellRefused), closed by stop,
	// and their goroutines, which Close and Shutdown wait for.
	telling map[spi.Session]struct{}
	tellers sync.WaitGroup
}

// URL keys of a provider's listening address that set its ConnectionLimit
// (the kernel reads them; the refusal log lines name them).
const (
	KeyAccepts      = "accepts"
	KeyAcceptsPerIP = "accepts.per.ip"
)

// ConnectionLimit bounds the consumer connections a Server serves at once,
// as Dubbo's "accepts" does (AbstractServer.connected closes a channel
// beyond it), so that peers cannot take the file descriptors the provider
// needs itself. A connection accepted beyond a bound is served no
// request: the provider sends its consumer the close-reason event
// (RefusedReason: "the provider refused the connection: it already serves
// 2 connections, its limit (accepts=2)") on the first stream it opens,
// reads its first frame and closes it, refusalWait (500 ms) after the
// accept at most; beyond maxTelling (16) such connections at once, it
// closes one at once, unread (its consumer sees the connection closed
// during its first ping, and can only guess why). Each is counted in
// counters.Transport.AcceptRefused (airnode_accept_refused_total) and
// logged at Warn, rate-bounded: the refusals numbered 1, 2, 4, 8... of the
// server, and any refusal 10 s (refusedLogEvery) or more after the last
// line, each line with the count so far. A connection counts from its
// accept until its channel has finished (Options.OnClose).
type ConnectionLimit struct {
	// Max is the most connections served at once (URL key accepts);
	// 0 or negative: unlimited.
	Max int
	// PerIP is the most connections served at once from one peer IP
	// address (URL key accepts.per.ip); 0 or negative: unlimited.
	PerIP int
}

// refusedLogEvery is the longest a server under a flood of connections
// beyond its limit goes without logging a refusal.
const refusedLogEvery = 10 * time.Second

// LimitConnections sets the connection limit. Call it before Serve; the
// zero ConnectionLimit (the default) is unlimited.
func (s *Server) LimitConnections(l ConnectionLimit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = l
}

// Connections returns the number of connections being served: accepted
// and not yet finished.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.chans)
}

// Refused returns the number of connections the server closed at once for
// its ConnectionLimit.
func (s *Server) Refused() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// NewServer returns a server on l. It does not start: call Serve.
func NewServer(l spi.Listener, opts Options) *Server {
	opts.Side = spi.Provider
	opts.budget = newUnsentBudget(opts.UnsentLimit)
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Server{
		l:        l,
		opts:     opts,
		log:      logger.With("component", "exchange", "listen", l.Addr().String()),
		chans:    make(map[*Channel]struct{}),
		stopping: make(chan struct{}),
		pool:     newWorkerPool(opts.Workers),
	}
}

// Serve runs the accept loop in the calling goroutine. It returns nil after
// Shutdown or Close, or the listener's error if it fails on its own.
// Temporary accept errors are logged and retried with a backoff of 5 ms
// doubling to 1 s (as net/http does).
func (s *Server) Serve() error {
	var backoff time.Duration
	for {
		sess, err := s.l.Accept()
		if err != nil {
			select {
			case <-s.stopping:
				return nil
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed; retrying", "err", err, "backoff", backoff)
			select {
			case <-time.After(backoff):
			case <-s.stopping:
				return nil
			}
			continue
		}
		backoff = 0
		s.add(sess)
	}
}

// add serves sess with a new channel, unless the server is closing or at
// its connection limit (refuse).
func (s *Server) add(sess spi.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		_ = sess.Close()
		return
	}
	ip := ""
	if s.limit.PerIP > 0 {
		ip = peerIP(sess.RemoteAddr())
	}
	if s.refuse(sess, ip) {
		return
	}
	if s.limit.PerIP > 0 {
		if s.perIP == nil {
			s.perIP = make(map[string]int)
		}
		s.perIP[ip]++
	}
	opts := s.opts
	user := opts.OnClose
	opts.OnClose = func(ch *Channel, reason string) {
		s.mu.Lock()
		delete(s.chans, ch)
		if g := s.opts.Connections; g != nil {
			g.Add(-1)
		}
		// A session Close or heartbeat stop that failed, whenever the
		// channel closed (its peer's close, an Unexport's...): the next
		// Shutdown reports it (StuckCalls).
		s.stuck = append(s.stuck, failedCalls(ch, true)...)
		if n, ok := s.perIP[ip]; ok {
			if n <= 1 {
				delete(s.perIP, ip)
			} else {
				s.perIP[ip] = n - 1
			}
		}
		last := s.poolOnLast && len(s.chans) == 0
		s.mu.Unlock()
		if user != nil {
			user(ch, reason)
		}
		if last {
			s.closePool()
		}
	}
	ch := newChannel(sess, opts, &s.inflight, s.pool, true)
	s.chans[ch] = struct{}{}
	if g := s.opts.Connections; g != nil {
		g.Add(1)
	}
	if s.draining {
		ch.sendDraining()
	}
	// The heartbeat's Watch runs on a goroutine of its own (counted by
	// the channel): one that blocks holds neither the accept loop nor
	// s.mu, and is named if Shutdown gives up on it.
	go ch.startWatch()
}

// refuse closes sess, counts and logs it, and reports true when the server
// is at its ConnectionLimit: Max connections in all, or PerIP from ip. On
// s.mu.
func (s *Server) refuse(sess spi.Session, ip string) bool {
	perIP := false
	switch {
	case s.limit.Max > 0 && len(s.chans) >= s.limit.Max:
	case s.limit.PerIP > 0 && s.perIP[ip] >= s.limit.PerIP:
		perIP = true
	default:
		return false
	}
	remote := sess.RemoteAddr()
	why := fmt.Sprintf("%sit already serves %d %s, its limit (%s=%d)", RefusedReason,
		len(s.chans), plural(int64(len(s.chans)), "connection", "connections"), KeyAccepts, s.limit.Max)
	if perIP {
		why = fmt.Sprintf("%sit already serves %d %s from %s, its limit per peer IP (%s=%d)", RefusedReason,
			s.perIP[ip], plural(int64(s.perIP[ip]), "connection", "connections"), ip, KeyAcceptsPerIP, s.limit.PerIP)
	}
	if len(s.telling) < maxTelling {
		if s.telling == nil {
			s.telling = make(map[spi.Session]struct{})
		}
		s.telling[sess] = struct{}{}
		s.tellers.Add(1)
		go s.tellRefused(sess, why)
	} else {
		_ = sess.Close()
	}
	counters.Transport.AcceptRefused.Inc()
	s.refused++
	now := time.Now()
	if s.refused&(s.refused-1) != 0 && now.Sub(s.refusedAt) < refusedLogEvery {
		return true
	}
	s.refusedAt = now
	if perIP {
		s.log.Warn(fmt.Sprintf("connection refused: the provider already serves %d %s from %s, its limit per peer IP (URL key %s=%d); closed at once",
			s.perIP[ip], plural(int64(s.perIP[ip]), "connection", "connections"), ip, KeyAcceptsPerIP, s.limit.PerIP),
			"consumer", addrString(remote), "limit", s.limit.PerIP, "key", KeyAcceptsPerIP, "refused", s.refused)
	} else {
		s.log.Warn(fmt.Sprintf("connection refused: the provider already serves %d %s, its limit (URL key %s=%d); closed at once",
			len(s.chans), plural(int64(len(s.chans)), "connection", "connections"), KeyAccepts, s.limit.Max),
			"consumer", addrString(remote), "limit", s.limit.Max, "key", KeyAccepts, "refused", s.refused)
	}
	return true
}

// RefusedReason begins the close-reason event (docs/wire.md, Events) a
// provider at its ConnectionLimit sends the consumer it refuses, which
// goes on "it already serves 2 connections, its limit (accepts=2)" (or
// "... from IP, its limit per peer IP (accepts.per.ip=N)"): the consumer
// names the cause instead of guessing among a transport or TLS mismatch
// and the limit (the kernel's first-ping diagnosis looks for it).
const RefusedReason = "the provider refused the connection: "

// Telling a refused consumer why (tellRefused) holds its connection open
// until the consumer's first frame is read, refusalWait at most, for at
// most maxTelling connections at once: beyond them (a flood of
// connections past the limit, which exists to save file descriptors) a
// refused connection is closed at once, unread and untold, as before.
const (
	refusalWait = 500 * time.Millisecond
	maxTelling  = 16
)

// tellRefused sends the consumer of sess, refused at the connection
// limit, the close-reason event why on the first stream it opens (a
// consumer that predates the event drops it unread), reads its first
// frame (its first ping: a TCP connection closed with bytes unread is
// reset, and the consumer would lose the event), then closes sess; at
// most refusalWait after the accept, or at once when the server stops.
func (s *Server) tellRefused(sess spi.Session, why string) {
	defer s.tellers.Done()
	t := time.AfterFunc(refusalWait, func() { _ = sess.Close() })
	defer func() {
		t.Stop()
		_ = sess.Close()
		s.mu.Lock()
		delete(s.telling, sess)
		s.mu.Unlock()
	}()
	st, err := sess.Accept()
	if err != nil {
		return
	}
	if _, err := st.Write(closeReasonFrame(why, 1)); err != nil {
		return
	}
	var hb [protocol.HeaderLen]byte
	h, err := protocol.ReadHeader(st, &hb, maxRefusedFrame)
	if err != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, st, int64(h.Length))
}

// maxRefusedFrame bounds the first frame tellRefused reads from a refused
// consumer (a ping with its hello is well under it); a longer one is left
// unread.
const maxRefusedFrame = 4096

// peerIP returns the IP address of a, without its port: a's host part, or
// a whole when it has none.
func peerIP(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	str := addrString(a)
	if h, _, err := net.SplitHostPort(str); err == nil {
		return h
	}
	return str
}

// addrString returns a.String(), or "" for a nil a.
func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// stop closes the listener and refuses new sessions; it returns the live
// channels.
func (s *Server) stop() []*Channel {
	s.stopOnce.Do(func() {
		close(s.stopping)
		_ = s.l.Close()
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	for sess := range s.telling {
		_ = sess.Close()
	}
	out := make([]*Channel, 0, len(s.chans))
	for ch := range s.chans {
		out = append(out, ch)
	}
	return out
}

// StopAccepting closes the listener, so that new connections are refused:
// the accept loop (Serve) returns, and a session accepted just before is
// closed at once. It sends every channel already served the read-only
// event (Dubbo's READONLY_EVENT: its consumer should send no new request,
// and its load balancer stops picking this provider: Channel.ReadOnly),
// but the channels go on as before (their requests are read and served)
// until Shutdown or Close. It is Shutdown's first step; a provider that
// lets its calls in flight finish before calling Shutdown calls it first,
// so that no new consumer connects to a server that is leaving, and the
// connected ones are told at once rather than when that drain ends (Dubbo
// closes the server's accept and sends READONLY_EVENT before its channels
// drain). Idempotent: a channel gets one read-only event.
func (s *Server) StopAccepting() {
	for _, ch := range s.stop() {
		ch.sendReadOnly()
	}
}

// GoAway stops accepting and sends every channel the go-away now: a
// request read from then on is not run (answered at once as not run, so
// its consumer may retry it elsewhere), while those read before it run to
// their end. A provider whose own drain has seen the calls in flight as it
// began end calls it before Shutdown, so that Shutdown's wait for a moment
// with no request in flight is bounded by the requests read before the
// go-away: without it, a consumer that keeps sending (one whose only
// provider this is, which the read-only event cannot turn away) holds
// that wait open until ctx ends, and the requests it sent meanwhile are
// abandoned. gRPC's GracefulStop likewise sends its GOAWAY at once.
// Idempotent; it never blocks (the event joins each channel's write
// queue). It returns how many requests were running as it was sent.
func (s *Server) GoAway() (running int) {
	s.StopAccepting()
	for _, ch := range s.stop() {
		ch.sendGoAway()
	}
	return s.InFlight()
}

// Shutdown stops accepting, tells every consumer the provider is going
// read-only (a one-way event, Dubbo's READONLY_EVENT, so consumers stop
// picking it at once: Channel.ReadOnly; StopAccepting sent it already to
// the channels it saw), waits until no request is in
// flight or ctx ends, then sends each consumer the go-away (the last
// request it will run: later ones are not run, so the consumer may retry
// them elsewhere), waits again for the requests that started before it,
// lets the queued responses reach the wire, then closes every channel and
// waits for their goroutines. After the go-away it pings each consumer
// and waits (at most goAwayAckWait) for the answer, so that the requests
// crossing the go-away on the wire are read and answered as not run
// rather than lost (awaitGoAwayAck). It returns ctx's error if requests were
// still in flight when ctx ended. Requests arriving on existing channels
// while draining are still served.
//
// When ctx ends with requests in flight, the requests read before the
// go-away are still answered before the close: their handlers' contexts
// are cancelled (context.Cause: "shutdown timeout passed"), and for
// abandonWait (200 ms) Shutdown pings after the go-away and waits for
// their answers; a handler that returns an error then is answered
// SERVER_ERROR "... the call was abandoned". A request still queued for
// a worker after that wait never starts: it is answered as not run
// (NotRunAnswer) and counted in NotStarted.
//
// Shutdown is bounded by ctx: once ctx has ended it waits at most
// abandonWait, then closeGrace (100 ms) more for the channels' goroutines
// and the workers.
// A handler that ignores its cancelled context and is still running then
// is left behind: its goroutine is the handler's, it ends when the handler
// returns (its answer is dropped, the channel being closed), and Shutdown
// returns ctx's error without waiting for it. No other goroutine of the
// server waits for it meanwhile: the channel finishes, and the last
// channel closes the worker pool, when the handler returns. Listeners and connections
// are closed either way, each connection on a goroutine of its own: a
// connection whose transport session's Close or heartbeat stop does not
// return is left closing too, and StuckCalls names the call it waits on;
// so is one whose heartbeat Watch, or whose acceptor's
// session Accept, never returns. A connection whose session Close failed
// (returned an error, or panicked) is waited for closeGrace at most, then
// given up at once, whatever ctx (its net.Conn closed when the session
// gives one: NetConn() net.Conn); StuckCalls lists every failed session
// Close and heartbeat stop, with its error. Close, in
// contrast, waits for every goroutine, but for those of a connection
// whose session Close failed.
func (s *Server) Shutdown(ctx context.Context) error {
	s.StopAccepting()
	err := s.drain(ctx)
	// Nothing read from now on runs (the go-away); what started before it
	// finishes and is answered.
	chans := s.stop()
	for _, ch := range chans {
		ch.sendGoAway()
	}
	acked := false
	if err == nil {
		awaitGoAwayAck(ctx, chans)
		acked = true
		err = s.drain(ctx)
	}
	fctx := ctx
	if err != nil {
		// ctx ended with requests in flight. Those read before the
		// go-away are answered all the same, before the close: their
		// handlers' contexts are cancelled now, and a handler that
		// returns within abandonWait has its failure answered
		// SERVER_ERROR "abandoned" (handle). The ping after the
		// go-away is still sent, so that a request crossing it is read
		// and answered as not run.
		for _, ch := range chans {
			ch.abandon()
		}
		actx, cancel := context.WithTimeout(context.Background(), abandonWait)
		defer cancel()
		if !acked {
			awaitGoAwayAck(actx, chans)
		}
		_ = s.drain(actx)
		fctx = actx
		// The requests still queued for a worker (each held by a
		// handler that ignores its context) never started: answered as
		// not run behind the go-away, before their channels close, not
		// left to be dropped unanswered when a worker frees up.
		for _, t := range s.pool.purge() {
			t.c.refuseQueued(t)
		}
	}
	// the last responses may still be queued: let them reach the wire
	for _, ch := range s.live() {
		ch.flush(fctx)
	}
	ok := s.closeAll(ctx, "server shutdown")
	s.tellers.Wait() // stop closed their sessions
	open := 0        // connections left behind with a call named
	for _, st := range s.StuckCalls() {
		switch {
		case st.Err == nil:
			open++
			s.log.Warn(fmt.Sprintf("shutdown: the connection from %s was left closing: its %s did not return", st.Remote, st.Call),
				"consumer", st.Remote, "call", st.Call)
		case st.Closed:
			s.log.Warn(fmt.Sprintf("shutdown: the connection from %s closed, but its %s failed: %v", st.Remote, st.Call, st.Err),
				"consumer", st.Remote, "call", st.Call)
		default:
			open++
			what := "the connection was left open (its session gives no NetConn to close)"
			if st.ClosedNetConn {
				what = "its net.Conn was closed instead"
			}
			s.log.Warn(fmt.Sprintf("shutdown: the connection from %s was given up: its %s failed: %v; %s", st.Remote, st.Call, st.Err, what),
				"consumer", st.Remote, "call", st.Call)
		}
	}
	if !ok {
		if h := s.inflight.Load(); h > 0 || open == 0 {
			s.log.Warn("shutdown: handlers still running past the deadline were left behind (they ignore their context)",
				"handlers", h)
		}
		if err == nil {
			err = ctx.Err()
		}
	}
	return err
}

// live returns the server's channels.
func (s *Server) live() []*Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	chans := make([]*Channel, 0, len(s.chans))
	for ch := range s.chans {
		chans = append(chans, ch)
	}
	return chans
}

// abandonWait bounds how long Shutdown, once its ctx has ended, still
// waits for the requests read before the go-away, their contexts
// cancelled, to be answered (and for the ping after the go-away to be
// answered), before it closes the channels.
const abandonWait = 200 * time.Millisecond

// drain waits until no request is in flight, or returns ctx's error.
func (s *Server) drain(ctx context.Context) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for s.inflight.Load() > 0 {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close closes the listener and every channel at once, cancelling requests
// in flight, after sending each consumer the go-away, and the ping whose
// answer says the consumer read it (waiting at most goAwayFlush for the
// answer, and as long again for the go-away to reach the wire), and waits
// for the channels' goroutines. Idempotent.
func (s *Server) Close() error {
	s.stop()
	s.closeAll(context.Background(), "server closed")
	s.tellers.Wait()
	return nil
}

// goAwayFlush bounds how long closing a server waits for the go-away
// events to reach the wire (a consumer that stops reading gets none).
const goAwayFlush = 100 * time.Millisecond

// goAwayAckWait bounds how long Shutdown waits for each consumer to
// answer the ping that follows the go-away (awaitGoAwayAck).
const goAwayAckWait = 500 * time.Millisecond

// awaitGoAwayAck pings every channel of chans, just told the go-away, and
// waits for the answers (each for at most goAwayAckWait, or until ctx
// ends), reading and answering meanwhile: a consumer answers a ping after
// every frame it wrote before reading the go-away, so once it has
// answered, every request it sent before learning of the go-away has been
// read — and, read after the go-away, answered as not run. Without this
// wait, a request written after one with a higher id (consumers number
// requests when a call starts, and concurrent calls are written in any
// order) could cross the go-away, whose id said it was read, and be lost
// unread when the connection closed: its call failed as "the provider may
// have run it" although it never ran. gRPC-Go's graceful stop likewise
// follows its first HTTP/2 GOAWAY with a PING and acts on the answer.
func awaitGoAwayAck(ctx context.Context, chans []*Channel) {
	var wg sync.WaitGroup
	for _, ch := range chans {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, goAwayAckWait)
			defer cancel()
			_ = ch.ping(pctx, "") // no answer: the channel closes all the same
		})
	}
	wg.Wait()
}

// closeGrace is how long a Shutdown whose ctx has ended still waits for
// the goroutines of the channels it closed (closeAll).
const closeGrace = 100 * time.Millisecond

// closeAll sends the go-away, closes every channel (sessions closed,
// handler contexts cancelled) at once, and waits for the channels'
// goroutines and then the worker pool's. It reports whether they all
// ended: it stops waiting closeGrace after ctx ends, leaving behind the
// handlers that ignore their context (each on its own goroutine: a
// worker's, or with dispatcher=direct or adaptive the reader's that ran
// it). No other goroutine waits for them: each channel finishes when its
// last handler returns (Channel.release), and the last channel to finish
// closes the pool.
func (s *Server) closeAll(ctx context.Context, reason string) bool {
	chans := s.stop()
	// Tell each consumer the last request run on its channel, so that it
	// can send the later ones elsewhere (sendGoAway), then close.
	var told []*Channel
	for _, ch := range chans {
		if ch.sendGoAway() {
			told = append(told, ch)
		}
	}
	actx, cancel := context.WithTimeout(context.Background(), goAwayFlush)
	awaitGoAwayAck(actx, told)
	cancel()
	fctx, cancel := context.WithTimeout(context.Background(), goAwayFlush)
	for _, ch := range chans {
		ch.flush(fctx)
	}
	cancel()
	// Every connection closes now, each on a goroutine of its own: a
	// transport session whose Close blocks holds only its own (it is left
	// running and named: StuckCalls).
	for _, ch := range chans {
		go ch.die(reason, slog.LevelDebug)
	}
	// No request is read any more: the idle workers go now, each busy one
	// once its handler returns, so that handlers left behind (those that
	// ignore their context) leave only their own goroutines.
	s.pool.stop()
	ended := ctx.Done()
	var grace <-chan time.Time
	gaveUp := map[*Channel]bool{} // session Close failed, goroutines still running after closeGrace
	for _, ch := range chans {
		for waiting := true; waiting; {
			select {
			case <-ch.finished:
				waiting = false
			case <-ch.closeFailed:
				// The session's Close failed: the transport may have
				// left the connection open, and its readers blocked.
				// Wait closeGrace from the failure at most, then give
				// the connection up.
				t := time.NewTimer(time.Until(ch.closeFailedAt.Add(closeGrace)))
				select {
				case <-ch.finished:
				case <-t.C:
					gaveUp[ch] = true
				}
				t.Stop()
				waiting = false
			case <-ended:
				t := time.NewTimer(closeGrace)
				defer t.Stop()
				ended, grace = nil, t.C
			case <-grace:
				// Left behind: the last channel to finish closes the
				// pool (add's OnClose), or this does when they all
				// finished meanwhile.
				s.noteStuck(chans)
				s.mu.Lock()
				s.poolOnLast = true
				last := len(s.chans) == 0
				s.mu.Unlock()
				if last {
					s.closePool()
				}
				return false
			}
		}
	}
	s.noteStuck(chans)
	if len(gaveUp) > 0 {
		s.mu.Lock()
		s.poolOnLast = true
		last := len(s.chans) == 0
		s.mu.Unlock()
		if last {
			s.closePool()
		}
		return false
	}
	s.closePool() // after every channel: nothing is queued any more
	return true
}

// noteStuck records, for StuckCalls, what each channel of chans not yet
// finished waits on (a heartbeat's Watch or stop, the session's Close or
// Accept), or the session Close that failed; a finished channel's
// failures were recorded as it finished.
func (s *Server) noteStuck(chans []*Channel) {
	var stuck []StuckCall
	for _, ch := range chans {
		finished := false
		select {
		case <-ch.finished:
			finished = true
		default:
		}
		if finished {
			continue // its failures were recorded as it finished (add's OnClose)
		}
		if call := ch.watching.Load(); call != nil {
			stuck = append(stuck, StuckCall{Call: *call, Remote: ch.remote})
			continue
		}
		if call := ch.stuck.Load(); call != nil {
			stuck = append(stuck, StuckCall{Call: *call, Remote: ch.remote})
			continue
		}
		failed := failedCalls(ch, false)
		stuck = append(stuck, failed...)
		if len(failed) == 0 && ch.accepting.Load() {
			stuck = append(stuck, StuckCall{Call: "session Accept", Remote: ch.remote})
		}
	}
	if len(stuck) == 0 {
		return
	}
	s.mu.Lock()
	s.stuck = append(s.stuck, stuck...)
	s.mu.Unlock()
}

// failedCalls returns ch's session Close and heartbeat stop that failed,
// if any, as StuckCalls; closed says whether the channel finished.
func failedCalls(ch *Channel, closed bool) []StuckCall {
	var out []StuckCall
	if err := ch.CloseErr(); err != nil {
		out = append(out, StuckCall{Call: "session Close", Remote: ch.remote, Err: err, Closed: closed, ClosedNetConn: ch.ClosedNetConn()})
	}
	if err := ch.StopErr(); err != nil {
		out = append(out, StuckCall{Call: fmt.Sprintf("heartbeat %q stop", heartbeatName(ch.opts.Heartbeat)), Remote: ch.remote, Err: err, Closed: closed})
	}
	return out
}

// closePool closes the worker pool, once.
func (s *Server) closePool() { s.poolOnce.Do(s.pool.close) }

// Addr returns the listener's address.
func (s *Server) Addr() net.Addr { return s.l.Addr() }

// InFlight returns the number of requests being served on all channels,
// including those queued for a worker (NotStarted).
func (s *Server) InFlight() int { return int(s.inflight.Load()) }

// NotStarted returns how many requests joined the worker pool's queue and
// never started: those still queued, and those Shutdown answered as not
// run (NotRunAnswer) because no worker freed up before its channels
// closed. Read after Shutdown, it is how many of the requests in flight
// at the go-away (GoAway, InFlight) never ran, for a count of the calls
// that did.
func (s *Server) NotStarted() int { return int(s.pool.unstarted.Load()) }
