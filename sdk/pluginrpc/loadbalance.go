package pluginrpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

// ---------------------------------------------------------------- plugin side

type lbServer struct {
	pb.UnimplementedLoadBalanceServer
	b    spi.LoadBalanceBuilder
	h    handles[spi.LoadBalance]
	urls urlCache
}

func newLBServer(b spi.LoadBalanceBuilder) *lbServer { return &lbServer{b: b} }

func (s *lbServer) Describe(context.Context, *pb.Empty) (*pb.Describe, error) {
	return &pb.Describe{Name: s.b.Name(), Keys: keysToPB(s.b), WithoutArgs: withoutArgs(s.b)}, nil
}

func (s *lbServer) Build(_ context.Context, req *pb.BuildRequest) (*pb.BuildReply, error) {
	return s.h.buildOnce("loadbalance Build", req.Url, s.b.Build), nil
}

// candidate is the plugin-side stand-in for a host invoker: its URL and a
// copy of its statistics. It cannot invoke.
type candidate struct {
	url       spi.URL
	stats     *spi.Stats
	available bool
}

func (c *candidate) URL() spi.URL { return c.url }
func (c *candidate) Invoke(context.Context, *spi.Invocation) spi.Result {
	return spi.Result{Err: spi.Errorf(spi.StatusClientError, "pluginrpc: a balancer's candidate cannot be invoked")}
}
func (c *candidate) Available() bool   { return c.available }
func (c *candidate) Stats() *spi.Stats { return c.stats }
func (c *candidate) Close() error      { return nil }

var _ spi.Invoker = (*candidate)(nil)

func (s *lbServer) Select(_ context.Context, req *pb.SelectRequest) (rep *pb.SelectReply, _ error) {
	defer func() {
		if r := recover(); r != nil {
			rep = &pb.SelectReply{Index: -1, Error: recovered("loadbalance Select", r)}
		}
	}()
	lb, err := s.h.get(req.Handle)
	if err != nil {
		return &pb.SelectReply{Index: -1, Error: toPB(err)}, nil
	}
	if len(req.Candidates) == 0 {
		return &pb.SelectReply{Index: -1, Error: toPB(spi.Errorf(spi.StatusClientError, "pluginrpc: Select with no candidates"))}, nil
	}
	cands := make([]candidate, len(req.Candidates))
	invokers := make([]spi.Invoker, len(req.Candidates))
	for i, c := range req.Candidates {
		u, err := s.urls.parse(c.Url)
		if err != nil {
			return &pb.SelectReply{Index: -1, Error: toPB(err)}, nil
		}
		cands[i] = candidate{url: u, available: c.Available, stats: spi.StatsFromSnapshot(spi.StatsSnapshot{
			Active: c.Active, Total: c.Total, Failed: c.Failed, Elapsed: time.Duration(c.ElapsedNs),
			MeanResponse: time.Duration(c.MeanResponseNs), MeanCount: c.MeanCount,
			OldestInFlight: time.Duration(c.OldestInFlightNs),
		})}
		invokers[i] = &cands[i]
	}
	picked := lb.Select(invokers, fromInvocation(req.Invocation))
	if picked == nil {
		return &pb.SelectReply{Index: -1}, nil // nothing selectable (all weights 0)
	}
	for i := range invokers {
		if invokers[i] == picked {
			return &pb.SelectReply{Index: int32(i)}, nil
		}
	}
	e := toPB(notCandidate(s.b.Name()))
	e.Kind = kindNotCandidate // the host names the plugin as declared
	return &pb.SelectReply{Index: -1, Error: e}, nil
}

// notCandidateText ends the error of a balancer whose Select returned an
// invoker that was not one of its candidates (notCandidate).
const notCandidateText = " returned an invoker that was not a candidate"

// notCandidate is that error, naming the balancer name: the plugin's own
// Name() in the plugin, which the host replaces with the declared name.
func notCandidate(name string) error {
	return spi.Errorf(spi.StatusClientError, "pluginrpc: balancer %q"+notCandidateText, name)
}

// ---------------------------------------------------------------- host side

// Defaults of LoadBalanceOptions.
const (
	// DefaultSelectTimeout bounds one Select or Build round trip to a
	// balancer plugin when half of what the call allows is more.
	DefaultSelectTimeout = time.Second
	// DefaultBypass is the first bypass after a round trip timed out;
	// each further timeout of the probe doubles it up to DefaultMaxBypass
	// (a circuit breaker's open state, Hystrix's sleep window).
	DefaultBypass    = time.Second
	DefaultMaxBypass = 30 * time.Second
	// DefaultFailuresToBypass is how many Selects in a row that the
	// plugin answered with an error (a panic, a pick that was not a
	// candidate, any error) bypass it as one that timed out does.
	DefaultFailuresToBypass = 3
	// minTripBound: a round trip given less than this (a call with
	// almost nothing left of its deadline) fails without tripping the
	// bypass: a healthy plugin cannot answer in no time either.
	minTripBound = 10 * time.Millisecond
	// defaultCallTimeout is the kernel's "timeout" default
	// (kernel.DefaultTimeout), used when a candidate URL has none.
	defaultCallTimeout = time.Second
)

// Bypass is one change of a balancer plugin's bypass, for the host's log.
type Bypass struct {
	// Point is the round trip that timed out or failed: "Select" or
	// "Build".
	Point string
	// Err, when not nil, is the error of the last of Failures round
	// trips in a row that the plugin answered with an error (a panic, a
	// pick that was not a candidate), which started the bypass; nil when
	// a round trip timed out.
	Err      error
	Failures int
	// Took is how long it waited; Bound what it was allowed (the plugin's
	// Timeout, or the call's deadline or timeout when sooner).
	Took, Bound time.Duration
	// For is how long the plugin is now bypassed (the default balancer
	// picks meanwhile), after which one call probes it again; 0 when
	// Recovered.
	For time.Duration
	// Recovered: the probe answered in time; the plugin picks again.
	Recovered bool
}

// LoadBalanceOptions configure a plugin-backed balancer builder.
type LoadBalanceOptions struct {
	// Name is the extension name in the host's catalog.
	Name string
	// Source yields the plugin's live client.
	Source Source
	// Fallback builds the balancer used while the plugin is down, fails
	// or is bypassed (the point's default); nil picks uniformly at random.
	Fallback func(u spi.URL) (spi.LoadBalance, error)
	// OnFallback is told every time a Select falls back because the
	// plugin is down or answered an error, with why; the host logs it
	// (rate-limited: FallbackLog). May be nil.
	OnFallback func(err error)
	// OnBack is told once when the plugin answers a Select again after
	// Selects fell back (OnFallback), with how many fell back since it
	// last answered; the host logs it at info (FallbackLog). May be nil.
	OnBack func(fellBack int64)
	// Timeout bounds one Select or Build round trip; default
	// DefaultSelectTimeout (1s). Half of the call's own bound comes
	// first when sooner: of its ctx deadline or its "timeout" key
	// (method-level first, as the exchange reads it, default 1s),
	// whichever is sooner, so a call has time left to fall back. Build
	// at Refer is bounded by Timeout and the reference's "timeout".
	Timeout time.Duration
	// Bypass and MaxBypass are the first and the longest bypass of a
	// plugin whose round trip timed out, or that answered
	// FailuresToBypass round trips in a row with an error; defaults
	// DefaultBypass (1s) and DefaultMaxBypass (30s).
	Bypass, MaxBypass time.Duration
	// FailuresToBypass is how many round trips in a row answered with an
	// error (a panic in Select, a pick that was not a candidate, any
	// error; not the plugin being down) bypass the plugin; default
	// DefaultFailuresToBypass (3). A probe answered with an error
	// doubles the bypass, as one that timed out does.
	FailuresToBypass int
	// OnBypass is told when a round trip timed out, or FailuresToBypass
	// failed, and the plugin is bypassed, and when a probe answered
	// again. May be nil.
	OnBypass func(Bypass)
	// OnSlow is told of a Select that answered but took more than a tenth
	// of the call's timeout (took, timeout); the host logs it
	// rate-limited. May be nil.
	OnSlow func(took, timeout time.Duration)
	// WithoutArgs: the plugin said it does not read the call's arguments
	// (Description.WithoutArgs): Select requests carry none. A Source
	// that is a DescribedSource overrides it, at each Select, with what
	// the running process described (a restart or handover into a build
	// that reads them, or no longer does); this is used when it gives no
	// Description.
	WithoutArgs bool
	// Keys are the URL keys the plugin declared (Description.Keys); the
	// builder reports them as its spi.KeyDescriber. nil: none declared.
	// A Source that is a DescribedSource overrides them with the running
	// process's.
	Keys []spi.KeyDoc
}

// NewLoadBalanceBuilder returns a spi.LoadBalanceBuilder whose balancers
// select in the plugin process, falling back to o.Fallback when the plugin
// is down, answers an error or is bypassed. Its balancers are
// spi.ContextLoadBalance: the call's ctx bounds each round trip.
//
// A round trip that times out makes every balancer of the plugin bypass it
// for o.Bypass (the default balancer picks, without waiting); then one call
// probes it, and each probe that times out again doubles the bypass up to
// o.MaxBypass, while one that answers ends it (a circuit breaker). So do
// o.FailuresToBypass round trips in a row answered with an error (a
// deterministic panic cost a round trip per call, tester73 #3), and a
// probe answered with an error doubles the bypass. A
// round trip waits at most half of what the call allows (its deadline or
// timeout), and at most o.Timeout; cut short, the call goes on with the
// fallback. Only a call whose deadline had already passed fails
// CLIENT_TIMEOUT naming the balancer (nothing was sent).
func NewLoadBalanceBuilder(o LoadBalanceOptions) spi.LoadBalanceBuilder {
	if o.Timeout <= 0 {
		o.Timeout = DefaultSelectTimeout
	}
	if o.Bypass <= 0 {
		o.Bypass = DefaultBypass
	}
	if o.MaxBypass < o.Bypass {
		o.MaxBypass = max(o.Bypass, DefaultMaxBypass)
	}
	if o.FailuresToBypass <= 0 {
		o.FailuresToBypass = DefaultFailuresToBypass
	}
	return &lbBuilder{o: o, brk: &breaker{next: o.Bypass}, fellBack: new(atomic.Int64)}
}

type lbBuilder struct {
	o        LoadBalanceOptions
	brk      *breaker      // shared by every balancer of the plugin
	fellBack *atomic.Int64 // Selects that fell back since the plugin last answered, all balancers
}

func (b *lbBuilder) Name() string { return b.o.Name }

// Keys returns the keys the running plugin process declared
// (DescribedSource; while the plugin is down, the last process's), else
// LoadBalanceOptions.Keys.
func (b *lbBuilder) Keys() []spi.KeyDoc { return declaredKeys(b.o.Source, b.o.Keys) }

// Build checks the values u gives the keys the plugin declared
// (checkDeclared), then validates u in the plugin when the plugin is up and not bypassed
// (the plugin's own Build errors are returned), within Timeout and u's
// "timeout"; when it is down, bypassed or does not answer in time the
// balancer builds lazily on a later Select.
func (b *lbBuilder) Build(u spi.URL) (spi.LoadBalance, error) {
	if err := checkDeclared(b.Keys(), u); err != nil {
		return nil, fmt.Errorf("loadbalance %q: %w", b.o.Name, err)
	}
	lb := &lbAdapter{o: &b.o, brk: b.brk, fellBackN: b.fellBack, u: u, us: u.String(), sem: make(chan struct{}, 1)}
	c, gen, err := b.o.Source.Current()
	if err != nil {
		return lb, nil
	}
	probe, ok := b.brk.enter()
	if !ok {
		return lb, nil
	}
	bound := b.o.Timeout
	if t, err := u.Duration("timeout", defaultCallTimeout); err == nil && t > 0 {
		bound = min(bound, t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	start := time.Now()
	_, err = lb.handle(ctx, c, gen)
	if timedOut(ctx, err) {
		lb.tripped(probe, "Build", time.Since(start), bound)
		return lb, nil
	}
	lb.answered(probe)
	var be buildError
	if errors.As(err, &be) {
		return nil, fmt.Errorf("loadbalance %q: %w", b.o.Name, be.error)
	}
	return lb, nil
}

type buildError struct{ error }

// built is a balancer's handle in one plugin generation.
type built struct{ gen, id uint64 }

type lbAdapter struct {
	o         *LoadBalanceOptions
	brk       *breaker
	fellBackN *atomic.Int64 // the builder's
	u         spi.URL
	us        string

	cur    atomic.Pointer[built]
	sem    chan struct{} // one Build at a time, waited for under a ctx
	fbOnce sync.Once
	fb     spi.LoadBalance
}

// Name returns the plugin's extension name (for the cluster's "balancer X
// returned no provider" message).
func (lb *lbAdapter) Name() string { return lb.o.Name }

// handle returns the balancer's handle in plugin generation gen, building it
// there when the plugin (re)started.
func (lb *lbAdapter) handle(ctx context.Context, c *Client, gen uint64) (uint64, error) {
	if b := lb.cur.Load(); b != nil && b.gen == gen {
		return b.id, nil
	}
	select {
	case lb.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, fmt.Errorf("plugin loadbalance Build: %w", ctx.Err())
	}
	defer func() { <-lb.sem }()
	if b := lb.cur.Load(); b != nil && b.gen == gen {
		return b.id, nil
	}
	rep, err := c.LoadBalance.Build(ctx, &pb.BuildRequest{Url: lb.us})
	if err != nil {
		return 0, rpcError("loadbalance Build", err)
	}
	if rep.Error != nil {
		return 0, buildError{fromPB(rep.Error)}
	}
	lb.cur.Store(&built{gen: gen, id: rep.Handle})
	return rep.Handle, nil
}

// Select is SelectContext without a call context: the call's "timeout"
// and Timeout bound the round trip, and any failure falls back.
func (lb *lbAdapter) Select(invokers []spi.Invoker, inv *spi.Invocation) spi.Invoker {
	x, err := lb.SelectContext(context.Background(), invokers, inv)
	if err != nil {
		return lb.fallback(invokers, inv)
	}
	return x
}

// SelectContext asks the plugin within the call's bound (see
// NewLoadBalanceBuilder); while the plugin is down, bypassed or answers
// an error it picks with the fallback balancer.
func (lb *lbAdapter) SelectContext(ctx context.Context, invokers []spi.Invoker, inv *spi.Invocation) (spi.Invoker, error) {
	c, gen, desc, err := described(lb.o.Source)
	if err != nil {
		lb.fellBack(consumerSide(err))
		return lb.fallback(invokers, inv), nil
	}
	probe, ok := lb.brk.enter()
	if !ok {
		return lb.fallback(invokers, inv), nil // bypassed: the trip was logged
	}
	timeout := callTimeout(invokers, inv)
	callBound, byDeadline := timeout, false
	if d, ok := ctx.Deadline(); ok {
		if r := time.Until(d); r < callBound {
			callBound, byDeadline = r, true
		}
	}
	// The plugin gets at most half of what the call allows (and never
	// more than Timeout), so that a hung plugin leaves the call the other
	// half to go on with the fallback: the pick takes microseconds, the
	// call's connect, request and provider work the rest. With the bound
	// equal to the call's (1s each by default) the documented fallback
	// never happened and the call failed CLIENT_TIMEOUT (tester36 F6).
	// A healthy Select takes well under a tenth (OnSlow).
	bound := min(lb.o.Timeout, callBound/2)
	rctx, cancel := context.WithTimeout(ctx, bound)
	start := time.Now()
	withoutArgs := lb.o.WithoutArgs
	if desc != nil {
		withoutArgs = desc.WithoutArgs // the running process's (LoadBalanceOptions.WithoutArgs)
	}
	i, point, err := lb.remote(rctx, c, gen, withoutArgs, invokers, inv)
	took := time.Since(start)
	cancel()
	switch {
	case err == nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		// It answered, but after the caller's deadline: say so here
		// rather than let the exchange find the deadline gone.
		lb.answered(probe)
		return nil, &spi.Error{Status: spi.StatusClientTimeout, Cause: ctx.Err(), Message: fmt.Sprintf(
			"pluginrpc: balancer %q: Select answered after %v, past the caller's deadline, so nothing was sent", lb.o.Name, took.Round(time.Millisecond))}
	case err == nil:
		lb.answered(probe)
		if lb.fellBackN.Load() > 0 {
			if n := lb.fellBackN.Swap(0); n > 0 && lb.o.OnBack != nil {
				lb.o.OnBack(n)
			}
		}
		if lb.o.OnSlow != nil && took > timeout/10 {
			lb.o.OnSlow(took, timeout)
		}
		if i < 0 {
			return nil, nil
		}
		return invokers[i], nil
	case timedOut(rctx, err):
		bypass := lb.tripped(probe, point, took, bound)
		if bound < callBound {
			return lb.fallback(invokers, inv), nil // its own or the probe's bound: the call goes on
		}
		by := fmt.Sprintf("the call's timeout %v", timeout)
		if byDeadline {
			by = fmt.Sprintf("what was left of the caller's deadline (%v)", callBound.Round(time.Millisecond))
		}
		msg := fmt.Sprintf("pluginrpc: balancer %q: %s gave no answer within %s, so nothing was sent", lb.o.Name, point, by)
		if bypass > 0 {
			msg += fmt.Sprintf("; the plugin is bypassed for %v", bypass)
		}
		e := &spi.Error{Status: spi.StatusClientTimeout, Message: msg}
		if ctx.Err() != nil {
			e.Cause = ctx.Err()
		}
		return nil, e
	case ctx.Err() != nil: // the caller cancelled
		lb.brk.leave(probe)
		return nil, spi.Errorf(spi.StatusClientError, "pluginrpc: balancer %q: %s: %w", lb.o.Name, point, ctx.Err())
	}
	if faultOf(err) != "" {
		lb.failed(probe, point, took, bound, err) // it answered, with an error
	} else {
		lb.answered(probe) // it died or its connection broke: the next call finds it down
	}
	lb.fellBack(err)
	return lb.fallback(invokers, inv), nil
}

// consumerSide is err, the host's "plugin is unavailable" SERVER_ERROR
// for a balancer plugin that is down, with the status of a consumer-side
// event, CLIENT_ERROR (as a consumer-side filter plugin's failures have):
// no provider failed (tester73 #6).
func consumerSide(err error) error {
	var se *spi.Error
	if !errors.As(err, &se) || se.Status != spi.StatusServerError {
		return err
	}
	return &spi.Error{Status: spi.StatusClientError, Message: se.Message, Cause: se.Cause}
}

// callTimeout is the call's "timeout" as the exchange reads it: from the
// first candidate's URL (the provider's merged with the reference's),
// method-level first.
func callTimeout(invokers []spi.Invoker, inv *spi.Invocation) time.Duration {
	method := ""
	if inv != nil {
		method = inv.Method
	}
	t, err := invokers[0].URL().MethodDuration(method, "timeout", defaultCallTimeout)
	if err != nil || t <= 0 {
		return defaultCallTimeout
	}
	return t
}

// timedOut reports whether a round trip under rctx ended for want of time
// (rctx's deadline, or gRPC's timer for it firing a moment before).
func timedOut(rctx context.Context, err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(rctx.Err(), context.DeadlineExceeded)
}

func (lb *lbAdapter) fellBack(err error) {
	lb.fellBackN.Add(1)
	if lb.o.OnFallback != nil {
		lb.o.OnFallback(err)
	}
}

// tripped records a round trip that timed out after took (allowed bound)
// and returns the bypass it started (0: too short a bound to blame the
// plugin, or already bypassed by a concurrent call).
func (lb *lbAdapter) tripped(probe bool, point string, took, bound time.Duration) time.Duration {
	if bound < minTripBound {
		lb.brk.leave(probe)
		return 0
	}
	d := lb.brk.trip(probe, lb.o.MaxBypass)
	if d > 0 && lb.o.OnBypass != nil {
		lb.o.OnBypass(Bypass{Point: point, Took: took, Bound: bound, For: d})
	}
	return d
}

// failed records a round trip the plugin answered in time with err: the
// FailuresToBypass-th in a row, or a probe's, bypasses it.
func (lb *lbAdapter) failed(probe bool, point string, took, bound time.Duration, err error) {
	d, n := lb.brk.fail(probe, lb.o.FailuresToBypass, lb.o.MaxBypass)
	if d > 0 && lb.o.OnBypass != nil {
		lb.o.OnBypass(Bypass{Point: point, Took: took, Bound: bound, For: d, Err: err, Failures: n})
	}
}

// answered records a round trip the plugin answered in time.
func (lb *lbAdapter) answered(probe bool) {
	if lb.brk.ok(probe, lb.o.Bypass) && lb.o.OnBypass != nil {
		lb.o.OnBypass(Bypass{Point: "Select", Recovered: true})
	}
}

// remote asks the plugin, the process of generation gen, sending the
// call's arguments unless withoutArgs; point names the round trip that
// failed.
func (lb *lbAdapter) remote(ctx context.Context, c *Client, gen uint64, withoutArgs bool, invokers []spi.Invoker, inv *spi.Invocation) (int, string, error) {
	id, err := lb.handle(ctx, c, gen)
	if err != nil {
		if errors.As(err, new(buildError)) {
			err = &selectError{err, faultAnswered}
		}
		return 0, "Build", err
	}
	req := &pb.SelectRequest{Handle: id, Candidates: make([]*pb.Candidate, len(invokers)), Invocation: toInvocation(inv, !withoutArgs)}
	cands := make([]pb.Candidate, len(invokers))
	for i, iv := range invokers {
		c := &cands[i]
		c.Url = iv.URL().String()
		c.Available = iv.Available()
		if st := iv.Stats(); st != nil {
			s := st.Snapshot()
			c.Active, c.Total, c.Failed = s.Active, s.Total, s.Failed
			c.ElapsedNs, c.MeanResponseNs, c.MeanCount = int64(s.Elapsed), int64(s.MeanResponse), s.MeanCount
			c.OldestInFlightNs = int64(s.OldestInFlight)
		}
		req.Candidates[i] = c
	}
	rep, err := c.LoadBalance.Select(ctx, req)
	if err != nil {
		return 0, "Select", rpcError("loadbalance Select", err)
	}
	if e := rep.Error; e != nil {
		if e.Kind == kindNotCandidate || strings.HasSuffix(e.Message, notCandidateText) { // the latter from plugins built before kindNotCandidate
			return 0, "Select", &selectError{notCandidate(lb.o.Name), faultNotCandidate}
		}
		if e.Kind == kindPanic || strings.HasPrefix(e.Message, panicText) { // the latter from plugins built before kindPanic
			// a consumer-side event: CLIENT_ERROR, as a consumer
			// filter plugin's panic (tester73 #6)
			return 0, "Select", &selectError{spi.Errorf(spi.StatusClientError, "pluginrpc: balancer %q panicked in Select: %s",
				lb.o.Name, strings.TrimPrefix(e.Message, panicText)), faultPanic}
		}
		return 0, "Select", &selectError{fromPB(e), faultAnswered}
	}
	if rep.Index == -1 {
		return -1, "", nil // the balancer selected nothing
	}
	if rep.Index < 0 || int(rep.Index) >= len(invokers) {
		return 0, "Select", &selectError{fmt.Errorf("plugin loadbalance Select: index %d out of range [0, %d)", rep.Index, len(invokers)), faultAnswered}
	}
	return int(rep.Index), "", nil
}

func (lb *lbAdapter) fallback(invokers []spi.Invoker, inv *spi.Invocation) spi.Invoker {
	lb.fbOnce.Do(func() {
		if lb.o.Fallback != nil {
			lb.fb, _ = lb.o.Fallback(lb.u)
		}
	})
	if lb.fb != nil {
		return lb.fb.Select(invokers, inv)
	}
	return invokers[rand.IntN(len(invokers))]
}

// panicText begins the message of a panic in a plugin's Select
// (recovered's wording).
const panicText = "panic in plugin loadbalance Select: "

// Faults of a balancer plugin's answer (selectError), which the host's
// fallback warning names (FallbackLog).
const (
	faultAnswered     = "answered"      // an error the plugin returned
	faultPanic        = "panic"         // its Select panicked
	faultNotCandidate = "not_candidate" // it picked an invoker that was not a candidate
)

// selectError is an error a balancer plugin answered, with its fault.
type selectError struct {
	err   error
	fault string
}

func (e *selectError) Error() string { return e.err.Error() }
func (e *selectError) Unwrap() error { return e.err }

// faultOf is err's fault (selectError), "" when the plugin did not answer
// (down, died during the call, timed out).
func faultOf(err error) string {
	var se *selectError
	if errors.As(err, &se) {
		return se.fault
	}
	return ""
}

// breaker is the bypass of one balancer plugin: closed (the plugin
// picks), open until a time (the fallback picks), then half-open (one
// call probes the plugin while the others still bypass it).
type breaker struct {
	mu      sync.Mutex
	open    bool
	until   time.Time
	next    time.Duration // the next bypass
	probing bool
	fails   int // round trips in a row answered with an error while closed
}

// enter reports whether a round trip may go to the plugin, and whether it
// is the probe of a half-open breaker.
func (b *breaker) enter() (probe, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case !b.open:
		return false, true
	case b.probing || time.Now().Before(b.until):
		return false, false
	}
	b.probing = true
	return true, true
}

// leave ends a round trip that says nothing about the plugin.
func (b *breaker) leave(probe bool) {
	if probe {
		b.mu.Lock()
		b.probing = false
		b.mu.Unlock()
	}
}

// trip opens the breaker after a timeout and returns the bypass started:
// 0 when a concurrent call already opened it.
func (b *breaker) trip(probe bool, maxBypass time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	} else if b.open {
		return 0 // a round trip begun before the breaker opened
	}
	d := b.next
	b.open, b.until, b.next, b.fails = true, time.Now().Add(d), min(2*d, maxBypass), 0
	return d
}

// fail records a round trip answered with an error and returns the
// bypass it started (0: none) and how many failed in a row: a probe's
// opens the breaker again; otherwise the threshold-th in a row opens it.
func (b *breaker) fail(probe bool, threshold int, maxBypass time.Duration) (time.Duration, int) {
	b.mu.Lock()
	if !probe {
		if b.open {
			b.mu.Unlock()
			return 0, 0 // a round trip begun before the breaker opened
		}
		b.fails++
		if b.fails < threshold {
			b.mu.Unlock()
			return 0, 0
		}
	}
	n := max(b.fails, 1)
	b.mu.Unlock()
	return b.trip(probe, maxBypass), n
}

// ok closes the breaker after a round trip answered in time; it reports
// whether that ended a bypass.
func (b *breaker) ok(probe bool, first time.Duration) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fails = 0
	if !probe {
		return false
	}
	b.open, b.probing, b.next = false, false, first
	return true
}

var (
	_ spi.LoadBalanceBuilder = (*lbBuilder)(nil)
	_ spi.LoadBalance        = (*lbAdapter)(nil)
	_ spi.ContextLoadBalance = (*lbAdapter)(nil)
)
