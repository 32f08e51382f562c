package exchange

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// keyHeartbeat is the URL key of the heartbeat strategy; a
// missing key, or Dubbo's bare interval in ms, means the default, idle.
const keyHeartbeat = "heartbeat"

// HeartbeatHello returns u's heartbeat keys ("heartbeat" and every
// "heartbeat.*" key) as a query string sorted by key, for Options.Hello;
// "" when u has none. Example: "heartbeat=idle&heartbeat.interval=1s".
func HeartbeatHello(u spi.URL) string {
	var keys []string
	for _, k := range u.Keys() {
		if k == keyHeartbeat || strings.HasPrefix(k, keyHeartbeat+".") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('&')
		}
		v, _ := u.Param(k)
		b.WriteString(url.QueryEscape(k))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(v))
	}
	return b.String()
}

// strategyOf names the heartbeat strategy a hello selects.
func strategyOf(hello spi.URL) string {
	s, _ := hello.Param(keyHeartbeat)
	s = strings.TrimSpace(s)
	if s == "" || strings.Trim(s, "0123456789") == "" {
		return "idle"
	}
	return s
}

// parseHello turns a hello body into a URL airnode://<peer>?<keys>.
func (c *Channel) parseHello(body []byte) (spi.URL, error) {
	q, err := url.ParseQuery(string(body))
	if err != nil {
		return spi.URL{}, err
	}
	params := make(map[string]string, len(q))
	for k, v := range q {
		if len(v) > 0 && k != "" {
			params[k] = v[0]
		}
	}
	return spi.NewURL("airnode", "peer", 0, "", params)
}

// WarnOnce is the set of per-peer warnings a node's channels have logged
// (Options.WarnOnce). It keeps at most MaxWarnOnce keys and forgets them
// all when full, so a node talking to more peers than that may log a
// peer's warning again. The zero value is ready; safe for concurrent use.
type WarnOnce struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

// MaxWarnOnce bounds the keys a WarnOnce keeps.
const MaxWarnOnce = 4096

// First reports whether key is new, recording it; a nil WarnOnce
// reports true every time.
func (w *WarnOnce) First(key string) bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.seen[key]; ok {
		return false
	}
	if w.seen == nil || len(w.seen) >= MaxWarnOnce {
		w.seen = map[string]struct{}{}
	}
	w.seen[key] = struct{}{}
	return true
}

// peerKey names the peer for Options.WarnOnce: a provider's address on a
// consumer; a consumer's host on a provider (each connection comes from
// another port).
func (c *Channel) peerKey() string {
	if c.opts.Side == spi.Consumer {
		return c.remote
	}
	if h, _, err := net.SplitHostPort(c.remote); err == nil {
		return h
	}
	return c.remote
}

// KeyHelloApplication is the hello's key of the consumer's application
// name (Options.Application): "heartbeat.interval=60s&application=billing".
// Not a heartbeat key: a provider takes it out of the hello it keeps
// (PeerHeartbeat), and a hello that held only it counts as none there;
// providers older than it ignore it, as any key of a hello they do not
// know (docs/wire.md, The hello), and take an application-only hello for
// the default heartbeat settings, which such a consumer runs.
const KeyHelloApplication = "application"

// KeyHelloDispatcher is the hello key by which a provider whose requests
// run on its connection's reader (Options.Direct, dispatcher=direct) says
// so: its hello carries dispatcher=direct, and it answers every ping with
// its hello, also an empty one. A running method holds up that provider's
// answers to pings too, so its consumers start no liveness check for
// calls merely waiting (checkQuiet); the check after a silent timeout
// still runs. Other providers send no such key.
const KeyHelloDispatcher = "dispatcher"

// withDirect returns hello with KeyHelloDispatcher=direct appended.
func withDirect(hello string) string {
	if hello == "" {
		return KeyHelloDispatcher + "=direct"
	}
	return hello + "&" + KeyHelloDispatcher + "=direct"
}

// peerRunsOnReader reports whether the provider's hello said its requests
// run on its connection's reader (KeyHelloDispatcher).
func (c *Channel) peerRunsOnReader() bool {
	peer, ok := c.PeerHeartbeat()
	if !ok {
		return false
	}
	d, _ := peer.Param(KeyHelloDispatcher)
	return d == "direct"
}

// withApplication returns hello with KeyHelloApplication=app appended.
func withApplication(hello, app string) string {
	kv := KeyHelloApplication + "=" + url.QueryEscape(app)
	if hello == "" {
		return kv
	}
	return hello + "&" + kv
}

// KeyHelloTimestamp is the provider's hello key of its start, ms since
// the epoch on its clock (Options.Started): "heartbeat.min.ping.interval=1s&timestamp=1764493200000",
// the same value and meaning as its registry entry's "timestamp". A
// provider adds it to its answer to every ping that carries a hello (a Go
// consumer's first ping on each connection), so that the consumer learns
// the start of the process it actually reached (Channel.PeerStarted),
// also when its registry entry is an older process's on the same address.
// Not a heartbeat key: a consumer takes it out of the hello it keeps
// (PeerHeartbeat), and a hello that held only it counts as none there.
// Consumers older than it ignore it, as any key of a hello they do not
// know (docs/wire.md, The hello); one of them, against a provider whose
// hello had no other key (its ping-flood guard off, no heartbeat keys),
// now reads a hello meaning the default settings (idle), which that
// provider runs.
const KeyHelloTimestamp = "timestamp"

// withStarted returns hello with KeyHelloTimestamp=ms appended.
func withStarted(hello string, ms int64) string {
	kv := KeyHelloTimestamp + "=" + strconv.FormatInt(ms, 10)
	if hello == "" {
		return kv
	}
	return hello + "&" + kv
}

// learnStarted takes the provider's start out of its hello u (consumer
// side) and keeps it (PeerStarted) when it is a positive number of ms;
// it returns u without the key.
func (c *Channel) learnStarted(u spi.URL) spi.URL {
	v, ok := u.Param(KeyHelloTimestamp)
	if !ok {
		return u
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
		c.peerStarted.Store(ms)
	} else {
		c.log().Warn("ignoring a malformed timestamp in the provider's hello: want ms since the epoch, above 0; its warm-up counts from its registry entry's timestamp",
			"timestamp", shortHello([]byte(v)))
	}
	return u.Without(KeyHelloTimestamp)
}

// PeerStarted returns the provider's start, ms since the epoch on the
// provider's clock, that its hello gave on this channel
// (KeyHelloTimestamp); 0 before the answer to the first ping with a
// hello, and for a provider that sends none (older than it). Consumer
// side; one atomic load, safe for concurrent use.
func (c *Channel) PeerStarted() int64 { return c.peerStarted.Load() }

// log returns the channel's logger: on a provider, with
// consumer_application once the consumer's hello named it.
func (c *Channel) log() *slog.Logger { return c.logp.Load() }

// learnApplication keeps the consumer's application name a hello gave
// (provider side; the first name only, at most echoWord bytes) and adds
// it to the channel's logger as consumer_application, so that the
// channel's records from then on (its close, a heartbeat mismatch, a
// stall, a refusal) name the consumer's team, not only its ephemeral
// port.
func (c *Channel) learnApplication(app string) {
	if app == "" || c.opts.Side != spi.Provider {
		return
	}
	if len(app) > echoWord { // a hello is a frame body, from any peer that reaches the port
		app = cutEcho(app, echoWord)
	}
	if c.peerApp.CompareAndSwap(nil, &app) {
		c.logp.Store(c.log().With("consumer_application", app))
	}
}

// PeerApplication returns the consumer's application name its hello gave
// (Options.Application on the consumer), "" before the hello and for a
// consumer that sent none (older than it). Provider side; one atomic
// load, safe for concurrent use.
func (c *Channel) PeerApplication() string {
	if p := c.peerApp.Load(); p != nil {
		return *p
	}
	return ""
}

// learnHello stores the peer's heartbeat settings and logs a strategy
// mismatch once per channel, and with Options.WarnOnce once per peer. On
// a provider it first takes the consumer's application out of it
// (learnApplication).
func (c *Channel) learnHello(body []byte) {
	u, err := c.parseHello(body)
	if err != nil {
		c.log().Warn("ignoring a malformed heartbeat hello from the peer", "hello", shortHello(body), "error", err)
		return
	}
	if app, ok := u.Param(KeyHelloApplication); ok && c.opts.Side == spi.Provider {
		c.learnApplication(app)
		if u = u.Without(KeyHelloApplication); len(u.Keys()) == 0 {
			return // no heartbeat keys: as an empty ping
		}
	}
	if _, ok := u.Param(KeyHelloTimestamp); ok && c.opts.Side == spi.Consumer {
		if u = c.learnStarted(u); len(u.Keys()) == 0 {
			return // no heartbeat keys: as an empty answer
		}
	}
	c.peerHello.Store(&u)
	if c.opts.Hello == "" {
		return
	}
	mine, err := c.parseHello([]byte(c.opts.Hello))
	if err != nil {
		return
	}
	if a, b := strategyOf(mine), strategyOf(u); a != b && c.mismatchLogged.CompareAndSwap(false, true) &&
		c.opts.WarnOnce.First("heartbeat mismatch|"+string(c.opts.Side)+"|"+c.peerKey()+"|"+a+"|"+b) {
		msg := "heartbeat strategy mismatch: each side applies its own rules, " + mismatchNote(c.opts.Side, a, b)
		switch {
		case c.opts.WarnOnce == nil:
		case c.opts.Side == spi.Consumer:
			msg += " (logged once per provider address)"
		default:
			msg += " (logged once per consumer host)"
		}
		c.log().Warn(msg, "this_side", a, "peer", b, "peer_hello", shortHello(body))
	}
	if c.opts.Side != spi.Consumer {
		return
	}
	// The provider's ping-flood guard closes an idle connection whose
	// consumer pings faster than it allows (notePing): say so once, here,
	// rather than leave the user with a connection that keeps reconnecting.
	min, err := u.Duration(keyMinPingInterval, 0)
	if iv, ok := AdvertisedInterval(mine); ok && err == nil && min > 0 && iv < min-min/4 && c.slowPingLogged.CompareAndSwap(false, true) &&
		c.opts.WarnOnce.First("slow ping|"+c.peerKey()+"|"+iv.String()+"|"+min.String()) {
		msg := "heartbeat.interval is below the provider's heartbeat.min.ping.interval, which closes a connection pinged faster while idle: the bundled heartbeats ping at the provider's minimum instead; raise heartbeat.interval, or lower heartbeat.min.ping.interval on the provider"
		if c.opts.WarnOnce != nil {
			msg += " (logged once per provider address)"
		}
		c.log().Warn(msg, "heartbeat.interval", iv, "provider_min_ping_interval", min)
	}
}

// shortHello returns a peer's hello for a log line: at most echoWord
// bytes of it, then "... (N bytes)" (a hello is a frame body: up to the
// payload limit, from any peer that reaches the port).
func shortHello(body []byte) string {
	if len(body) > echoWord {
		return cutEcho(string(body), echoWord)
	}
	return string(body)
}

// mismatchNote says what a strategy mismatch means for who closes an idle
// connection, seen from side, which runs mine against the peer's.
func mismatchNote(side spi.Side, mine, peer string) string {
	consumer, provider := mine, peer
	if side == spi.Provider {
		consumer, provider = peer, mine
	}
	switch {
	case consumer == "none" && provider == "idle":
		return "the idle provider closes the none consumer's connection after its own heartbeat.timeout with nothing read or written (none sends nothing while idle), and the consumer redials"
	case provider == "dual":
		return "the dual provider closes a silent connection after the shorter of its own heartbeat.timeout and the consumer's bound"
	}
	return "the provider's idle-close timeout follows the consumer's settings"
}

// PeerHeartbeat returns the peer's heartbeat settings as a URL whose
// parameters are the peer's heartbeat keys (its Options.Hello), and true
// once they arrived: on the provider with the consumer's first ping, on the
// consumer with the answer to it. Implements spi.PeerHeartbeat.
func (c *Channel) PeerHeartbeat() (spi.URL, bool) {
	if p := c.peerHello.Load(); p != nil {
		return *p, true
	}
	return spi.URL{}, false
}

// pingGuard is the provider's per-channel ping-flood state (gRPC's
// too_many_pings). Only the reader of the long-lived stream uses it, under
// mu because a multiplexed peer may send events on any stream.
type pingGuard struct {
	lastPing    time.Time
	lastBatch   uint64    // the read batch of the last ping (Channel.readBatches)
	tat         time.Time // theoretical arrival time of the next ping at the permitted rate (GCRA)
	fastTat     time.Time // the same at twice the consumer's advertised rate, for the warning
	strikes     int
	fastLogged  bool
	minInterval time.Duration // ≤ 0: off
	maxStrikes  int
}

// activePingDivisor sets the ping-flood guard's bound while a request
// runs on the channel: pings more than one per
// MinPingInterval/activePingDivisor (10 ms with the default 1 s) are
// strikes then. Liveness checks during a long call (a heartbeat every
// interval, the ping after a silent timeout, at most one per second) are
// far apart, and a consumer pinging every 20 ms during a call is still
// answered; a flood (5.3 million pings in 5 s while one call ran) is
// closed within a dozen read batches. gRPC-Go
// likewise counts pings faster than its MinTime as strikes while streams
// are active.
const activePingDivisor = 100

// pingBurst is how many pings' worth of earliness the guard forgives: a
// consumer that pings at the permitted rate may have up to pingBurst of
// its pings arrive early, together, after a delay (6 s with the default
// minimum while idle). On a lossy link TCP holds every ping behind a lost
// segment until its retransmission (Linux's timer: 200 ms doubling, 1.2
// to 3 s seen at 20-35 % loss), then delivers them at once, and the next
// on time right after: measured gap by gap, a consumer pinging once a
// second was closed for "too many pings" twice in 165 s at 35 % loss.
const pingBurst = 8

// busyUnsent is how many bytes of answers unsent to the peer make the
// ping-flood guard judge a channel as busy, not idle: while a large answer
// crosses a slow link the consumer's heartbeats check the provider is
// alive, as they do while a call runs (activePingDivisor).
const busyUnsent = 64 << 10

// notePing judges one heartbeat request arriving at now on the provider
// and returns an error (closing the channel) after too many strikes; it
// also logs, once, a consumer pinging under half its advertised interval.
//
// The permitted rate is one ping per MinPingInterval×3/4 on an idle
// channel, one per MinPingInterval/activePingDivisor while a request
// runs, and it is judged as the generic cell rate algorithm of ATM
// traffic policing (ITU-T I.371) judges cells: tat, the theoretical
// arrival time, advances by the emission interval with every conforming
// ping; a ping arriving more than pingBurst intervals before tat is a
// strike (and does not advance tat). So a consumer at the permitted rate
// never strikes however its pings are bunched by the network, while a
// flood is closed after pingBurst + MaxPingStrikes + 1 pings. Strikes
// start again from 0 when a request is read, and when a ping arrives no
// earlier than tat (the consumer kept to the rate); a consumer pinging
// twice too fast never gets there and is closed within about
// 4 × pingBurst pings. Pings read together from one buffer fill, or
// read as a backlog right after the reader waited for its unsent answers
// to drain (stallBacklogWindow), arrived while this side was not reading
// (a SIGSTOP, a VM pause, a stalled reader): they were sent over that
// time, so only the first is judged. A channel with busyUnsent bytes of
// answers unsent is judged as one where a request runs.
func (c *Channel) notePing(now time.Time) error {
	c.guardMu.Lock()
	defer c.guardMu.Unlock()
	g := &c.guard
	data := c.dataSeen.Swap(false)
	prev := g.lastPing
	g.lastPing = now
	// A ping while a request runs on the channel, or while its answers
	// are still being written, checks that the provider is alive during
	// a long call: what heartbeats are for, so only a flood strikes
	// (activePingDivisor).
	limit, shown, where := g.minInterval-g.minInterval/4, g.minInterval, "on an idle connection"
	active := true
	switch {
	case c.inflight.Load() > 0:
		where = "while a call runs"
	case c.w.unsent.Load() >= busyUnsent:
		where = "while answers are being written"
	default:
		active = false
	}
	if active {
		limit = g.minInterval / activePingDivisor
		shown = limit
	}
	batch := c.readBatches.Load()
	sameBatch := batch == g.lastBatch
	g.lastBatch = batch
	if data || prev.IsZero() {
		g.strikes, g.tat = 0, now.Add(limit)
		return nil
	}
	gap := now.Sub(prev)
	if g.minInterval > 0 && !sameBatch {
		if early := g.tat.Sub(now); early > pingBurst*limit { // ahead of the permitted rate by more than the burst
			g.strikes++
			if g.strikes > g.maxStrikes {
				peer := "not advertised"
				if iv, ok := c.peerInterval(); ok {
					peer = iv.String()
				}
				return fmt.Errorf("%w: %d heartbeats more than one per %v %s beyond a burst of %d (last gap %v; the consumer's heartbeat.interval: %s; the provider's heartbeat.min.ping.interval: %v, strikes allowed %d)",
					errTooManyPings, g.strikes, shown, where, pingBurst, gap.Round(time.Microsecond), peer, g.minInterval, g.maxStrikes)
			}
		} else {
			if !now.Before(g.tat) { // kept to the rate
				g.strikes = 0
			}
			g.tat = later(g.tat, now).Add(limit)
		}
	}
	if active {
		return nil
	}
	if !g.fastLogged && !sameBatch {
		// The same rule at twice the consumer's advertised rate, guard
		// on or off: half a burst ahead of it is pinging fast for a
		// while, not one bunch of pings a lossy link held back.
		if iv, ok := c.peerInterval(); ok && iv > 0 {
			if g.fastTat.Sub(now) > pingBurst/2*(iv/2) {
				g.fastLogged = true
				c.log().Warn("consumer pings much faster than its advertised heartbeat.interval (answered)",
					"gap", gap.Round(time.Millisecond), "heartbeat.interval", iv)
			}
			g.fastTat = later(g.fastTat, now).Add(iv / 2)
		}
	}
	return nil
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// errTooManyPings is what the ping-flood guard's error wraps: the
// channel's close is counted as counters.Channels.TooManyPings.
var errTooManyPings = errors.New("too many pings")

// MinPingInterval returns the provider's ping-flood guard minimum
// (Options.MinPingInterval; 0 when the guard is off, and on a consumer):
// the bundled heartbeats stretch their timeouts by it when a consumer
// pings slower than it asked to, at this minimum. Safe for concurrent use.
func (c *Channel) MinPingInterval() time.Duration { return max(c.guard.minInterval, 0) }

// keyMinPingInterval is the provider's URL key for its ping-flood guard
// (Options.MinPingInterval), which its hello advertises.
const keyMinPingInterval = "heartbeat.min.ping.interval"

// AdvertisedInterval returns the heartbeat interval a URL or a peer's
// hello (Channel.PeerHeartbeat) sets: heartbeat.interval, or Dubbo's bare
// heartbeat=<ms>; false when it sets none (the heartbeat extension's
// default applies) or the value does not parse.
func AdvertisedInterval(h spi.URL) (time.Duration, bool) {
	if iv, err := h.Duration("heartbeat.interval", 0); err == nil && iv > 0 {
		return iv, true
	}
	if v, _ := h.Param(keyHeartbeat); v != "" && strings.Trim(v, "0123456789") == "" {
		if iv, err := h.Duration(keyHeartbeat, 0); err == nil && iv > 0 {
			return iv, true
		}
	}
	return 0, false
}

// peerInterval returns the heartbeat interval the peer's hello advertised.
func (c *Channel) peerInterval() (time.Duration, bool) {
	if peer, ok := c.PeerHeartbeat(); ok {
		return AdvertisedInterval(peer)
	}
	return 0, false
}

// readOnlyEvent is the body of the one-way event a provider sends each
// consumer when it starts shutting down (Dubbo's READONLY_EVENT, "R").
// Peers that predate it ignore one-way events.
const readOnlyEvent = "R"

// goAwayEvent is the first byte of the body of the one-way event a
// provider sends a consumer just before it closes their channel (Server.
// Shutdown and Server.Close): 'G', then the highest request id it read on
// the channel, 8 bytes big-endian (goAwayLen bytes in all). It runs no
// request read after it, so a call pending on the consumer with a higher
// id never ran and fails with CHANNEL_INACTIVE that a failover may retry
// even for a method that is not idempotent; a request it reads after the
// go-away is answered SERVICE_NOT_FOUND, not run (its id may be under the
// go-away's: a consumer may write ids out of order). HTTP/2's GOAWAY carries the
// last stream id the same way (RFC 9113 §6.8). Peers that predate it
// ignore one-way events.
const (
	goAwayEvent = 'G'
	goAwayLen   = 9
)

// sendGoAway stops the channel from running requests it reads from now on
// and queues the go-away event naming the last one it ran (provider side).
// Only the first call does anything; it reports whether this call did.
func (c *Channel) sendGoAway() bool {
	if c.closing.Swap(true) {
		return false // sent already
	}
	last := c.lastRequestID.Load() // after closing: see dispatch
	var fb [protocol.HeaderLen + goAwayLen]byte
	f := append(fb[:protocol.HeaderLen], goAwayEvent)
	f = binary.BigEndian.AppendUint64(f, last)
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagEvent, ID: c.nextID.Add(1), Length: goAwayLen}.Put(f)
	c.w.enqueue(f)
	close(c.goAwayQueued) // dispatch's answers to requests read after it go out behind it
	return true
}

// takeGoAway handles the provider's go-away on the consumer: the first id
// it did not read is unread. The channel turns read-only, and the calls
// pending with ids from unread on fail at once as never run (Invoke does
// the same for a call made after this), instead of waiting for the channel
// to close, which may take the provider's whole drain.
func (c *Channel) takeGoAway(unread uint64) {
	c.goAway.Store(unread)
	if !c.readOnly.Swap(true) {
		c.readOnlyNow()
	}
	calls := c.pending.takeFrom(unread)
	if len(calls) == 0 {
		return
	}
	err := c.notRunError()
	for _, cl := range calls {
		cl.err, cl.unread = err, true
		cl.done <- struct{}{}
	}
}

// readOnlyNow tells Options.OnReadOnly that the channel just turned
// read-only.
func (c *Channel) readOnlyNow() {
	if c.opts.OnReadOnly != nil {
		c.opts.OnReadOnly()
	}
}

// notRunError is the CHANNEL_INACTIVE of a call the provider's go-away says
// it did not run: spi.ErrGoAway, no spi.ErrRequestSent, so failover may
// retry it, on another provider.
func (c *Channel) notRunError() error {
	return &spi.Error{Status: spi.StatusChannelInactive, Cause: spi.ErrGoAway,
		Message: fmt.Sprintf("exchange: provider %s is closing the channel and did not run the request (its go-away): safe to retry", c.remote)}
}

// GoneAway reports whether the provider's go-away arrived on this
// (consumer) channel: it runs no request sent on it from then on, and
// Invoke fails each at once with spi.ErrGoAway, sending nothing. A
// channel that got it never loses it; a new connection to the provider
// is a new channel. One atomic load; safe for concurrent use.
func (c *Channel) GoneAway() bool { return c.goAway.Load() != 0 }

// noteRequest raises lastRequestID to id (provider side; own-stream
// readers dispatch concurrently with the primary one).
func (c *Channel) noteRequest(id uint64) {
	for {
		last := c.lastRequestID.Load()
		if id <= last || c.lastRequestID.CompareAndSwap(last, id) {
			return
		}
	}
}

// errShutdownAbandoned is the cause of the handler contexts of a provider
// channel whose server's Shutdown ctx ended with requests still running
// (Channel.abandon): such a request that then fails is answered
// SERVER_ERROR "abandoned" (handle).
var errShutdownAbandoned = errors.New("exchange: provider shutting down: shutdown timeout passed")

// abandon cancels the contexts of the requests the channel is running, with
// cause errShutdownAbandoned, without closing it (provider side): their
// answers still go out.
func (c *Channel) abandon() { c.cancel(errShutdownAbandoned) }

// sendReadOnly queues the read-only event (provider side), once per
// channel: StopAccepting sends it, and Shutdown again for a channel that
// missed it.
func (c *Channel) sendReadOnly() {
	if c.readOnly.Swap(true) {
		return
	}
	var fb [protocol.HeaderLen + len(readOnlyEvent)]byte
	f := append(fb[:protocol.HeaderLen], readOnlyEvent...)
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagEvent, ID: c.nextID.Add(1), Length: uint32(len(readOnlyEvent))}.Put(f)
	c.w.enqueue(f)
}

// ReadOnly reports whether the provider said it is shutting down (Server.
// Shutdown's read-only event): the channel still carries calls already made
// and their responses, but a load balancer should stop picking it. Always
// false on the provider side.
func (c *Channel) ReadOnly() bool { return c.opts.Side == spi.Consumer && c.readOnly.Load() }
