package kernel

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/tlsconf"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// DefaultTimeout is the consumer call timeout ("timeout", method-level first).
const DefaultTimeout = 1000 * time.Millisecond

// remoteInvoker is the consumer's invoker for one provider URL (the
// provider's URL merged with the reference's). It holds connections=N
// managed connections from the node's pool, round-robined, and records
// Stats for every call.
type remoteInvoker struct {
	url     spi.URL
	own     spi.URL // the reference's URL, whose keys are the consumer's own (timeoutOrigin)
	addr    string  // url's host:port, set on every Result (spi.Result.ProviderAddr)
	cat     *extension.Catalogs
	pool    *connPool
	keys    []string // pool keys, one per connection slot
	conns   []*conn
	next    atomic.Uint32
	stats   spi.Stats
	methods sync.Map // method name -> *callConf or error
	base    *callConf
	uniform bool   // no method-level codec or timeout: every method's settings are base
	token   string // provider's access token ("token"), sent with every call
	once    sync.Once
	closed  atomic.Bool  // Close has begun: the ejection's timer logs nothing (ejectionOver)
	upStops []func()     // the conns' whenUp cancels (connUp), called by Close
	out     outlierState // outlier ejection (outlier.go)
	fails   failCounts   // stats' failures by status (spi.ProviderStats.FailuresByStatus)
	// notServing: the provider's last answer was SERVICE_NOT_FOUND (it
	// unexported the service while its node runs on); a success clears
	// it. The directory drops such a provider if it keeps it only by
	// empty protection or removal damping (directory.NotServing).
	notServing atomic.Bool
	// Probe's pings (directory.Prober), stopped and waited for by Close.
	probeMu   sync.Mutex
	probeCtx  context.Context // nil until the first Probe
	probeStop context.CancelFunc
	probes    sync.WaitGroup
}

// callConf is what a call needs from the URL, resolved once per method.
type callConf struct {
	codec   spi.Codec
	timeout time.Duration
	// from is where timeout came from when not from the reference's own
	// URL (timeoutOrigin): "" or the provider's key, "Work.timeout". Read
	// only when a call times out (withTimeoutBound).
	from string
	// key is the URL key that set timeout as written ("timeout",
	// "methods.Work.timeout", "Work.timeout"), "" for DefaultTimeout.
	// Read only when a call times out (withTimeoutBound).
	key string
}

// newRemoteInvoker validates u's consumer keys and acquires its connections.
// own is the reference's URL (u is the provider's merged with it): a
// timeout u takes from the provider's keys is named in a timeout's error.
// The connections dial in the background at once. The invoker joins
// outliers, its reference's providers, which outlier ejection is counted
// over (nil: it counts alone and is never ejected); Close leaves it.
// warns bounds the reference's lines of first connections that fail
// (nil: none), for the conns the invoker makes.
func newRemoteInvoker(u, own spi.URL, cat *extension.Catalogs, pool *connPool, logger *slog.Logger, outliers *outlierGroup, warns *connectWarns) (*remoteInvoker, error) {
	addr := u.Address()
	if u.Host() == "" || u.Port() == 0 {
		return nil, fmt.Errorf("kernel: provider URL %s has no host:port", u)
	}
	st, err := readInvokerSettings(cat, u)
	if err != nil {
		return nil, fmt.Errorf("kernel: provider %s: %w", addr, err)
	}
	r := &remoteInvoker{url: u, own: own, addr: addr, cat: cat, pool: pool, base: st.base,
		uniform: !perMethod(u, cat.Codec.Key(), "timeout")}
	r.base.from = timeoutOrigin(u, own, "")
	klog := logger.With("component", "kernel") // logger is the node's base: the exchange adds its own component
	r.out.conf, r.out.group, r.out.log = st.outlier, outliers, klog
	if t, _ := u.Param(spi.AttachmentToken); t != "false" {
		r.token = t
	}
	cs := st.conn
	opts := exchange.Options{Side: spi.Consumer, Payload: cs.payload, Codec: cat.CodecByID, Heartbeat: st.heartbeat, Logger: logger,
		Hello:          exchange.HeartbeatHello(u),    // the provider matches its idle-close timeout to these settings
		Application:    u.ParamOr(KeyApplication, ""), // the consumer's (Refer's withApplication): the provider's records of the connection name it
		WarnOnce:       &pool.warnOnce,                // a strategy mismatch: one line per provider address, not per connection
		OwnerLogsClose: true,                          // the conn logs each close once: "channel closed; reconnecting"
		OnReadOnly:     r.bumpEpoch,                   // the provider announced its shutdown: the directory's list leaves it out (conn.ready)
		OnCheck:        r.bumpEpoch}                   // a liveness ping went out or ended: Available may change (checkHolds)
	tr := st.transport
	dial := func(ctx context.Context, addr string) (channel, error) {
		sess, err := guardedDial(ctx, klog, tr, st.transportName, addr)
		if err != nil {
			return nil, err
		}
		o := opts
		o.Waiting = waiting(ctx) // names a blocking session Open or heartbeat Watch
		return exchange.NewChannel(sess, o), nil
	}
	shared := connKey(u, st.transportName, st.heartbeatName)
	tlsOn, _ := u.Bool(tlsconf.KeyTLS, false) // a malformed tls failed readInvokerSettings (the transport's Build)
	for i := range int(cs.connections) {
		key := shared + "|" + strconv.Itoa(i)
		r.keys = append(r.keys, key)
		r.conns = append(r.conns, pool.acquire(key, func(line *connLine) *conn {
			return newNamedConn(addr, st.transportName, st.heartbeatName, tlsOn, pool.oneShot, dial, cs.connectTimeout, cs.backoff, klog, warns, &pool.changed, line)
		}))
	}
	for _, c := range r.conns {
		r.upStops = append(r.upStops, c.whenUp(r.connUp))
	}
	outliers.add(r)
	return r, nil
}

// invokerSettings is everything a remote invoker builds from its URL.
type invokerSettings struct {
	conn          connSettings
	base          *callConf // service-level codec and timeout
	transport     spi.Transport
	transportName string
	heartbeat     spi.Heartbeat // nil when the catalog has no heartbeat
	heartbeatName string
	outlier       outlierConf
}

// readInvokerSettings reads and builds, with the catalogs' builders, what
// a remote invoker needs from u: the connection keys (readConnSettings),
// the outlier keys (readOutlierSettings),
// the codec and timeout of the service and of every method u lists (or,
// when u lists none, of every method u sets either for: callMethods), the
// transport and the heartbeat strategy. It is the one check of a URL's
// consumer-side keys: newRemoteInvoker runs it on each merged provider
// URL, Refer on the consumer's URL and Export on the provider URL it will
// publish, so that a bad key fails at once, naming the key, instead of
// leaving a reference with no usable provider. Pure: no I/O beyond what a
// transport's Build reads (TLS files), no goroutine.
func readInvokerSettings(cat *extension.Catalogs, u spi.URL) (invokerSettings, error) {
	var st invokerSettings
	var refused refusals // every bad key, not the first one only (tester83 #5)
	var err error
	if st.conn, err = readConnSettings(u); err != nil {
		refused.add(err)
	}
	if st.outlier, err = readOutlierSettings(u); err != nil {
		refused.add(err)
	}
	if st.base, err = resolveCall(cat, u, ""); err != nil {
		refused.add(err)
	}
	for _, m := range callMethods(cat, u) {
		if _, err := resolveCall(cat, u, m); err != nil {
			refused.add(err)
		}
	}
	if trb, _, err := cat.Transport.Select(u, ""); err != nil {
		refused.add(err)
	} else if st.transport, err = extension.Build(extension.PointTransport, trb.Name(), func() (spi.Transport, error) { return trb.Build(u) }); err != nil {
		refused.add(err) // `transport "name": ...`, a panic in Build included
	} else {
		st.transportName = trb.Name()
	}
	if st.heartbeat, st.heartbeatName, err = buildHeartbeat(cat, u); err != nil {
		refused.add(err)
	}
	return st, refused.err()
}

// callMethods returns the methods whose codec and timeout
// readInvokerSettings checks: those u lists in "methods" (a provider's
// URL), else, for a reference URL that lists none, those with a
// method-level codec or timeout (spi.URL.MethodsSetting), so that
// methods.Echo.codec=nope fails Refer naming the key rather than every
// call of Echo (tester71 #4). A key for a method a listing leaves out sets
// nothing: Refer warns of it (Reference.checkMethodKeys).
func callMethods(cat *extension.Catalogs, u spi.URL) []string {
	if ms := u.Methods(); len(ms) > 0 {
		return ms
	}
	return u.MethodsSetting(cat.Codec.Key(), "timeout")
}

// connSettings are a provider URL's connection keys.
type connSettings struct {
	connections    int64
	connectTimeout time.Duration
	backoff        time.Duration
	payload        int64
}

// readConnSettings reads and checks connections, connect.timeout,
// reconnect.backoff, payload and timeout. Each bad value, malformed or
// out of bounds, is an *spi.ParamError naming the key, the value and
// what is allowed.
func readConnSettings(u spi.URL) (connSettings, error) {
	var cs connSettings
	var refused refusals // each bad key, not the first one only
	var err error
	if cs.connections, err = u.MethodIntIn("", "connections", 1, 1, MaxConnections, ""); err != nil {
		refused.add(err)
	}
	if cs.connectTimeout, err = u.Duration("connect.timeout", DefaultConnectTimeout); err != nil {
		refused.add(err)
	} else if cs.connectTimeout <= 0 {
		refused.add(outOfBounds(u, "connect.timeout", "a duration more than 0, such as 3s"))
	}
	if cs.backoff, err = u.Duration("reconnect.backoff", DefaultReconnectBackoff); err != nil {
		refused.add(err)
	} else if cs.backoff <= 0 || cs.backoff > MaxReconnectBackoff {
		refused.add(outOfBounds(u, "reconnect.backoff", fmt.Sprintf("a duration more than 0 and at most %v, such as 100ms", MaxReconnectBackoff)))
	}
	if cs.payload, err = u.Size("payload", 0); err != nil {
		refused.add(err)
	}
	if _, err = u.Duration("timeout", DefaultTimeout); err != nil {
		refused.add(err)
	}
	return cs, refused.err()
}

// outOfBounds is the *spi.ParamError for key of u, present and well
// formed but out of its bounds: want says what is allowed.
func outOfBounds(u spi.URL, key, want string) error {
	v, _ := u.Param(key)
	return &spi.ParamError{Key: key, Value: v, Want: want}
}

// connKey identifies connections that can be shared: same address,
// transport, heartbeat strategy and connection settings.
func connKey(u spi.URL, transport, heartbeat string) string {
	var b strings.Builder
	b.WriteString(transport + "|" + u.Address() + "|" + heartbeat)
	keys := u.Keys()
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, "heartbeat") || strings.HasPrefix(k, "connect.") || k == "tls" || strings.HasPrefix(k, "tls.") ||
			strings.HasPrefix(k, "reconnect.") || k == "payload" || strings.HasPrefix(k, transport+".") {
			v, _ := u.Param(k)
			b.WriteString("|" + k + "=" + v)
		}
	}
	return b.String()
}

// buildHeartbeat builds the heartbeat strategy u selects, or nil when the
// catalog has none. Dubbo's "heartbeat=60000" (a bare number of ms) means
// the default strategy with that interval (extension.Point.Normalize).
func buildHeartbeat(cat *extension.Catalogs, u spi.URL) (spi.Heartbeat, string, error) {
	if len(cat.Heartbeat.Names()) == 0 {
		return nil, "", nil
	}
	nu := cat.Heartbeat.Normalize(u)
	b, _, err := cat.Heartbeat.Select(nu, "")
	if err != nil {
		return nil, "", err
	}
	hb, err := extension.Build(extension.PointHeartbeat, b.Name(), func() (spi.Heartbeat, error) { return b.Build(nu) })
	if err != nil {
		// "heartbeat dual: ..." as the bundled name themselves, else
		// `heartbeat "name": ...`; heartbeat=0 named as written
		return nil, "", cat.Heartbeat.BareNumberError(u, err)
	}
	return hb, b.Name(), nil
}

// minTimeout is the shortest "timeout" a reference takes
// (config.MinTimeout, Dubbo's millisecond).
const minTimeout = time.Millisecond

// resolveCall reads the codec and timeout of method ("" for service
// level) from u.
func resolveCall(cat *extension.Catalogs, u spi.URL, method string) (*callConf, error) {
	codec, sel, err := cat.Codec.Select(u, method)
	if err != nil {
		return nil, methodKeyError(sel, cat.Codec.Key(), err)
	}
	c := &callConf{codec: codec, timeout: DefaultTimeout}
	if v, key, ok := u.MethodParam(method, "timeout"); ok {
		var want string
		if c.timeout, want = parseTimeout(v); want != "" {
			return nil, &spi.ParamError{Key: key, Value: v, Want: want}
		}
		c.key = key
	}
	return c, nil
}

// parseTimeout reads v, the value of the "timeout" URL key or of a
// caller's "timeout" attachment: a Go duration or bare milliseconds, at
// least minTimeout. want is "" when v is one, else what is allowed
// (spi.ParamError's Want), so that both say the same.
func parseTimeout(v string) (d time.Duration, want string) {
	d, err := spi.ParseDuration(v)
	switch {
	case err != nil:
		return 0, spi.DurationWant(err)
	case d <= 0:
		return 0, "a positive duration such as 500ms, 1.5s or 3000 (ms); there is no \"no timeout\", use a large one"
	case d < minTimeout:
		return 0, fmt.Sprintf("a duration of at least %v such as 500ms, 1.5s or 3000 (ms): no call is answered within %v", minTimeout, d)
	}
	return d, ""
}

// attemptTimeout returns how long one attempt of inv waits for its
// answer: the caller's "timeout" attachment when inv has one (Dubbo's
// per-call RpcContext timeout, RpcUtils.getTimeout), else def, the
// method's "timeout" key. A bad attachment (set by a consumer filter:
// Reference.attach checks the caller's) is CLIENT_ERROR.
func attemptTimeout(inv *spi.Invocation, def time.Duration) (time.Duration, error) {
	v, ok := inv.Attachments[spi.AttachmentTimeout]
	if !ok {
		return def, nil
	}
	d, want := parseTimeout(v)
	if want != "" {
		return 0, timeoutAttachmentError(inv.Service+"."+inv.Method, v, want)
	}
	return d, nil
}

// timeoutAttachmentError is the CLIENT_ERROR of a call ("demo.Echo.Sleep")
// whose "timeout" attachment v is no timeout; want is parseTimeout's.
func timeoutAttachmentError(call, v, want string) error {
	return spi.Errorf(spi.StatusClientError, "kernel: call %s: invalid value %q for attachment %q (this call's timeout, read as the URL key): want %s",
		call, v, spi.AttachmentTimeout, want)
}

// conf returns the call settings of method, resolved on first use.
func (r *remoteInvoker) conf(method string) (*callConf, error) {
	if r.uniform {
		return r.base, nil // what resolveCall would find (saves a 20 ns sync.Map load)
	}
	if v, ok := r.methods.Load(method); ok {
		if c, ok := v.(*callConf); ok {
			return c, nil
		}
		return nil, v.(error)
	}
	var v any
	c, err := resolveCall(r.cat, r.url, method)
	if err == nil {
		c.from = timeoutOrigin(r.url, r.own, method)
	}
	switch {
	case err != nil:
		v = spi.Errorf(spi.StatusClientError, "kernel: %v", err)
	case c.codec.Name() == r.base.codec.Name() && c.timeout == r.base.timeout && c.from == r.base.from && c.key == r.base.key:
		v = r.base
	default:
		v = c
	}
	v, _ = r.methods.LoadOrStore(method, v)
	if c, ok := v.(*callConf); ok {
		return c, nil
	}
	return nil, v.(error)
}

// URL returns the merged provider URL.
func (r *remoteInvoker) URL() spi.URL { return r.url }

// Invoke sends inv on one of the invoker's connections. A provider with no
// ready connection (still connecting, reconnecting) fails fast with
// CHANNEL_INACTIVE, never waiting for a connection.
func (r *remoteInvoker) Invoke(ctx context.Context, inv *spi.Invocation) spi.Result {
	start := spi.Mono() // also the exchange's start (Channel.InvokeFrom)
	r.stats.BeginAt(start)
	res := r.invoke(ctx, inv, start)
	res.ProviderAddr = r.addr // the consumer's accesslog line names it
	if res.Err != nil {
		st := spi.StatusOf(res.Err)
		if st == spi.StatusServiceNotFound {
			r.notServing.Store(true)
		}
		r.fails.add(st)
	} else if r.notServing.Load() {
		r.notServing.Store(false)
	}
	end := spi.Mono()
	res.Ended = end // the filters above time the call by it
	r.stats.EndAt(spi.MonoTime(end), end-start, res.Err == nil)
	if r.out.conf.consecutive > 0 && (res.Err != nil || r.out.streak.Load() != 0) {
		r.observeOutlier(ctx, inv, res.Err, start)
	}
	return res
}

// invoke is Invoke after its clock read: start (spi.Mono) is the call's.
func (r *remoteInvoker) invoke(ctx context.Context, inv *spi.Invocation, start time.Duration) spi.Result {
	cc, err := r.conf(inv.Method)
	if err != nil {
		return spi.Result{Err: err}
	}
	if r.token != "" {
		// the provider's token, as its registered URL publishes it
		// (Dubbo's DubboInvoker does the same)
		inv.SetAttachment(spi.AttachmentToken, r.token)
	}
	timeout, err := attemptTimeout(inv, cc.timeout)
	if err != nil {
		return spi.Result{Err: err}
	}
	ch, err := r.pick().get()
	if err != nil {
		return spi.Result{Err: err}
	}
	res := ch.InvokeFrom(ctx, cc.codec, inv, timeout, start)
	if res.Err != nil {
		res.Err = withTimeoutBound(ctx, res.Err, inv, cc, timeout, start)
	}
	return res
}

// timeoutOrigin returns the key of merged provider URL u that sets
// method's timeout ("" for service level; spi.URL.MethodParam's key:
// "Work.timeout", "timeout") when it is not the reference's own, own:
// the provider's, which Dubbo's order lets win over the reference's
// service-level timeout (a provider's Work.timeout=300 over the
// consumer's timeout=3s). "" when own sets it, or nothing does (the
// default).
func timeoutOrigin(u, own spi.URL, method string) string {
	v, key, ok := u.MethodParam(method, "timeout")
	if !ok {
		return ""
	}
	if ov, mine := own.Param(key); mine && ov == v {
		return ""
	}
	return key
}

// withTimeoutBound returns err, the error of an attempt of inv made with
// settings cc and timeout (cc's, or the caller's "timeout" attachment)
// from start (spi.Mono), with what ended it added when err is a timeout
// (CLIENT_TIMEOUT or SERVER_TIMEOUT): the sooner of timeout and ctx's
// deadline bounds an attempt, and "timed out after 1s" alone read to a
// gRPC user as a 5 s ctx deadline ignored (tester98 #1). Only a call's
// error path calls it.
func withTimeoutBound(ctx context.Context, err error, inv *spi.Invocation, cc *callConf, timeout, start time.Duration) error {
	e, ok := err.(*spi.Error)
	if !ok || e.Status != spi.StatusClientTimeout && e.Status != spi.StatusServerTimeout {
		return err
	}
	if bound := attemptBound(ctx, timeout, start); bound > 0 && spi.Mono()-start < bound/2 {
		// back long before any bound ended the attempt: a method's own
		// error with a timeout status (tester14 #8's joined error), which
		// no bound of this call explains
		return err
	}
	c := *e
	c.Message += timeoutBound(ctx, inv, cc, timeout, start)
	return &c
}

// attemptBound returns the sooner of timeout and what ctx's deadline left
// when the attempt began at start (spi.Mono); 0 when neither bounds it.
func attemptBound(ctx context.Context, timeout, start time.Duration) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return timeout
	}
	left := time.Until(d) + spi.Mono() - start
	if timeout <= 0 || left < timeout {
		return max(left, 0)
	}
	return timeout
}

// timeoutBound says, in parentheses after a space, which bound ended an
// attempt (withTimeoutBound):
//
//   - the caller's ctx deadline, when it was sooner than timeout:
//     " (ended by the caller's ctx deadline, 400ms after this attempt
//     began; the timeout, 1s per attempt, was later)";
//   - the timeout of the caller's "timeout" attachment;
//   - the provider's timeout key (cc.from): which, and how to choose
//     one's own: "(timeout 300ms: the provider's Work.timeout; give the
//     reference URL its own Work.timeout=... (airnode call: -p
//     Work.timeout=...) or the call its own timeout, a "timeout"
//     attachment (airnode call: --timeout), to choose yours)";
//   - the reference's timeout key, or its default when none is set, with
//     the fix: " (ended by the timeout URL key's default, 1s per attempt
//     (the reference sets no timeout), not by the caller's ctx deadline,
//     5s after this attempt began: set timeout= above the time the method
//     needs, e.g. timeout=5s, or per method methods.Slow.timeout=5s)".
func timeoutBound(ctx context.Context, inv *spi.Invocation, cc *callConf, timeout, start time.Duration) string {
	var left time.Duration // what ctx's deadline left when the attempt began
	d, hasDeadline := ctx.Deadline()
	if hasDeadline {
		left = time.Until(d) + spi.Mono() - start
		if left < timeout {
			if left <= 0 {
				return " (ended by the caller's ctx deadline, which had passed when this attempt began)"
			}
			return fmt.Sprintf(" (ended by the caller's ctx deadline, %v after this attempt began; the timeout, %v per attempt, was later)", roundMs(left), timeout)
		}
	}
	ctxPart := "the caller's ctx has no deadline"
	if hasDeadline {
		ctxPart = fmt.Sprintf("not by the caller's ctx deadline, %v after this attempt began", roundMs(left))
	}
	if _, attached := inv.Attachments[spi.AttachmentTimeout]; attached {
		return fmt.Sprintf(" (ended by this call's %q attachment, %v per attempt; %s)", spi.AttachmentTimeout, timeout, ctxPart)
	}
	if cc.from != "" {
		return fmt.Sprintf(" (timeout %v: the provider's %s; give the reference URL its own %s=... (airnode call: -p %s=...) or the call its own timeout, a %q attachment (airnode call: --timeout), to choose yours)", cc.timeout, cc.from, cc.from, cc.from, spi.AttachmentTimeout)
	}
	// an example above the timeout: the ctx deadline's, else 5s or twice
	// the timeout
	eg := max(5*time.Second, 2*timeout).Round(time.Second)
	if hasDeadline {
		eg = ((left + time.Second - 1) / time.Second) * time.Second
	}
	perMethod := fmt.Sprintf("methods.%s.timeout", inv.Method)
	switch cc.key {
	case "":
		return fmt.Sprintf(" (ended by the timeout URL key's default, %v per attempt (the reference sets no timeout), %s: set timeout= above the time the method needs, e.g. timeout=%v, or per method %s=%v)", timeout, ctxPart, eg, perMethod, eg)
	case "timeout":
		return fmt.Sprintf(" (ended by the URL key timeout=%v per attempt, %s: set it above the time the method needs, e.g. timeout=%v, or per method %s=%v)", timeout, ctxPart, eg, perMethod, eg)
	}
	return fmt.Sprintf(" (ended by the URL key %s=%v per attempt, %s: set it above the time the method needs, e.g. %s=%v)", cc.key, timeout, ctxPart, cc.key, eg)
}

// roundMs rounds d to the millisecond, or to the microsecond below one.
func roundMs(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// pick returns the next ready connection in round-robin order, or the next
// one when none is ready (its get reports why).
func (r *remoteInvoker) pick() *conn {
	if len(r.conns) == 1 {
		return r.conns[0]
	}
	start := int(r.next.Add(1))
	for i := range r.conns {
		if c := r.conns[(start+i)%len(r.conns)]; c.ready() {
			return c
		}
	}
	return r.conns[start%len(r.conns)]
}

// Available reports whether the provider may be picked: it is not
// ejected (outlier.go), one of its connections can take calls: it is
// up and answered a ping, and no liveness check holds it (checkHolds).
// A provider still making its first connection is not available
// (Reference.awaitProvider waits for one, bounded).
func (r *remoteInvoker) Available() bool {
	if r.out.ejected.Load() && r.ejectedNow(spi.Mono()) {
		return false
	}
	if !r.connected() {
		return false
	}
	if r.checkHolds() {
		return false
	}
	r.noteBack() // an ejection that ended while it was not connected: back in use now
	return true
}

// connUp runs when one of r's connections comes up (conn.whenUp, on the
// conn's goroutine): the event that makes a provider whose ejection ended
// while it was not connected usable again. It looks as Available does,
// so that "back in use" is logged now, once (noteBack), and an ejection
// over by now ends with its line, rather than at the directory's next
// look, which a reference with no calls and no metrics scrape makes late
// or never. The state stays the invoker's (out, the conns' states) that
// ProviderStats reads.
func (r *remoteInvoker) connUp() {
	if !r.closed.Load() {
		r.Available()
	}
}

// NotServing reports whether the provider's last answer said it does not
// serve this service (SERVICE_NOT_FOUND): a provider kept by the
// directory's empty protection or removal damping then goes
// (directory.NotServing).
func (r *remoteInvoker) NotServing() bool { return r.notServing.Load() }

// Draining reports whether one of the provider's channels got its
// draining event (exchange.Channel.Draining: its node is shutting it
// down, after shutdown.wait): the directory's removal damping does not
// keep it, nor does empty protection while another provider is
// connected (directory.Draining). Draining alone leaves it Available:
// while the registry lists it, or if it is all there is, it is called as
// before.
func (r *remoteInvoker) Draining() bool {
	for _, c := range r.conns {
		if st := c.state.Load(); st != nil && st.ch != nil {
			if d, ok := st.ch.(interface{ Draining() bool }); ok && d.Draining() {
				return true
			}
		}
	}
	return false
}

// GoingAway reports whether the provider said go-away (exchange.Channel.
// GoneAway: its drain ended, it runs no new call on the connection): one
// of its channels got it and none is up without it. Such a provider is
// not Available (the go-away made its channels read-only), and unlike a
// read-only one the kernel does not call it when no provider is
// available: a call to it would fail at once, not run (providerView,
// Reference.awaitProvider). A new connection (the provider back on its
// address) is a new channel, without the go-away. Not called per call:
// only once no provider is available.
func (r *remoteInvoker) GoingAway() bool {
	gone := false
	for _, c := range r.conns {
		st := c.state.Load()
		if st == nil || st.ch == nil {
			continue // down or connecting: its get says why
		}
		if g, ok := st.ch.(interface{ GoneAway() bool }); !ok || !g.GoneAway() {
			return false
		}
		gone = true
	}
	return gone
}

// probeTimeout bounds each ping of Probe.
const probeTimeout = time.Second

// Probe pings each of the provider's up channels once, each on a
// goroutine of its own bounded by probeTimeout (directory.Prober): the
// directory keeps a provider the registry dropped only if something is
// read from it afterwards (LastRead), so a hung one (a stopped process,
// connection up) goes within seconds. Never blocks; Close stops the pings
// and waits for them.
func (r *remoteInvoker) Probe() {
	r.probeMu.Lock()
	defer r.probeMu.Unlock()
	if r.probeCtx == nil {
		r.probeCtx, r.probeStop = context.WithCancel(context.Background())
	}
	if r.probeCtx.Err() != nil {
		return // closed
	}
	for _, c := range r.conns {
		st := c.state.Load()
		if st == nil || st.ch == nil {
			continue
		}
		ch := st.ch
		r.probes.Add(1)
		go func() {
			defer r.probes.Done()
			ctx, cancel := context.WithTimeout(r.probeCtx, probeTimeout)
			defer cancel()
			_ = ch.Ping(ctx) // the answer moves LastRead; a failure is the liveness check's business
		}()
	}
}

// Stalled reports whether calls wait on one of the provider's up
// channels and nothing was read from any of them for quiet
// (directory.Stalled): a hung provider, not an idle one.
func (r *remoteInvoker) Stalled(quiet time.Duration) bool {
	waiting := false
	for _, c := range r.conns {
		st := c.state.Load()
		if st == nil || st.ch == nil {
			continue
		}
		ch, ok := st.ch.(interface {
			LastRead() time.Time
			Pending() int
		})
		if !ok {
			return false
		}
		if time.Since(ch.LastRead()) < quiet {
			return false
		}
		waiting = waiting || ch.Pending() > 0
	}
	return waiting
}

// LastRead returns when a frame was last read from any of the provider's
// up channels (exchange.Channel.LastRead; zero with none up): a ping's
// answer moves it (directory.Prober).
func (r *remoteInvoker) LastRead() time.Time {
	var last time.Time
	for _, c := range r.conns {
		st := c.state.Load()
		if st == nil || st.ch == nil {
			continue
		}
		if lr, ok := st.ch.(interface{ LastRead() time.Time }); ok {
			if t := lr.LastRead(); t.After(last) {
				last = t
			}
		}
	}
	return last
}

// AvailabilityEpoch returns the epoch of the node's connection pool,
// bumped after every change of a connection's state (conn.publish), an
// ejection and its end (outlier.go), and a channel turning read-only
// (exchange.Options.OnReadOnly): the directory asks Available again only
// then (directory.Watched). nil without a pool (tests).
func (r *remoteInvoker) AvailabilityEpoch() *directory.Epoch {
	if r.pool == nil {
		return nil
	}
	return &r.pool.changed.epoch
}

// ProviderStarted returns the start its hello gave of the provider the
// invoker's up channels reached (exchange.Channel.PeerStarted), the
// latest of them, in ms since the epoch; 0 with none up or none said
// (spi.ProviderStart: the warm-up of a process restarted on the address
// of the entry the invoker was made from counts from it).
func (r *remoteInvoker) ProviderStarted() int64 {
	var started int64
	for _, c := range r.conns {
		st := c.state.Load()
		if st == nil || st.ch == nil {
			continue
		}
		if p, ok := st.ch.(interface{ PeerStarted() int64 }); ok {
			started = max(started, p.PeerStarted())
		}
	}
	return started
}

// StartChanges returns AvailabilityEpoch: a channel is published, and
// the epoch bumped, after its first ping's answer gave the provider's
// start (spi.ProviderStart). nil without a pool (tests): then the
// balancers read ProviderStarted once per list.
func (r *remoteInvoker) StartChanges() interface{ Load() uint64 } {
	if e := r.AvailabilityEpoch(); e != nil {
		return e
	}
	return nil
}

// bumpEpoch says Available may have changed (AvailabilityEpoch).
func (r *remoteInvoker) bumpEpoch() {
	if r.pool != nil {
		r.pool.changed.epoch.Bump()
	}
}

// connected reports whether one of the connections can take calls (up,
// answered a ping, not draining), ejected or not.
func (r *remoteInvoker) connected() bool {
	for _, c := range r.conns {
		if c.ready() {
			return true
		}
	}
	return false
}

// connecting reports whether some connection is making its first attempt,
// or a redial a call asked for (conn.redialNow).
func (r *remoteInvoker) connecting() bool {
	for _, c := range r.conns {
		if c.connecting() {
			return true
		}
	}
	return false
}

// redialNow asks every connection that is down to redial at once
// (conn.redialNow); it reports whether one will.
func (r *remoteInvoker) redialNow() bool {
	asked := false
	for _, c := range r.conns {
		asked = c.redialNow() || asked
	}
	return asked
}

// Stats returns the invoker's live statistics.
func (r *remoteInvoker) Stats() *spi.Stats { return &r.stats }

// Close releases the invoker's connections (the last user closes them and
// stops their reconnecting). Idempotent.
func (r *remoteInvoker) Close() error {
	r.once.Do(func() {
		r.closed.Store(true)
		for _, stop := range r.upStops {
			stop()
		}
		r.probeMu.Lock()
		if r.probeCtx == nil {
			r.probeCtx, r.probeStop = context.WithCancel(context.Background())
		}
		r.probeStop()
		r.probeMu.Unlock()
		r.probes.Wait()
		r.out.group.remove(r)
		for _, k := range r.keys {
			r.pool.release(k)
		}
	})
	return nil
}

var _ spi.Invoker = (*remoteInvoker)(nil)
var _ spi.ProviderStart = (*remoteInvoker)(nil)
