package pluginrpc

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/gotype"
	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

// ---------------------------------------------------------------- plugin side

type filterServer struct {
	pb.UnimplementedFilterServer
	b     spi.FilterBuilder
	h     handles[spi.Filter]
	peers peerCache // consumers' certificates the host sent (peer.go)
}

func newFilterServer(b spi.FilterBuilder) *filterServer { return &filterServer{b: b} }

func (s *filterServer) Describe(context.Context, *pb.Empty) (*pb.FilterDescribe, error) {
	a := s.b.Activation()
	d := &pb.FilterDescribe{Name: s.b.Name(), Key: a.Key, Order: int32(a.Order), Keys: keysToPB(s.b), WithoutArgs: withoutArgs(s.b), Chain: readsResult(s.b)}
	for _, side := range a.Sides {
		d.Sides = append(d.Sides, string(side))
	}
	return d, nil
}

func (s *filterServer) Build(_ context.Context, req *pb.BuildRequest) (*pb.BuildReply, error) {
	return s.h.buildOnce("filter Build", req.Url, s.b.Build), nil
}

// passInvoker is the "next" a plugin filter sees when the host calls
// Invoke (a builder whose ResultReader answers false, or an older host):
// invoking it means the filter lets the call pass; the real invoke
// happens in the host after the filter answered.
type passInvoker struct {
	passed bool
	inv    *spi.Invocation
}

func (p *passInvoker) URL() spi.URL { return spi.URL{} }
func (p *passInvoker) Invoke(_ context.Context, inv *spi.Invocation) spi.Result {
	p.passed, p.inv = true, inv
	return spi.Result{}
}
func (p *passInvoker) Available() bool   { return true }
func (p *passInvoker) Stats() *spi.Stats { return nil }
func (p *passInvoker) Close() error      { return nil }

// ResultReader is an optional interface of a plugin's spi.FilterBuilder.
// ReadsResult false says its filters never use what next.Invoke returns
// and return it unchanged (a gate that sets attachments or refuses): the
// host then keeps the one round trip per call of a pass before the call
// (Filter.Invoke), where next.Invoke returns an empty result at once and
// the call runs in the host after the filter answered. A builder without
// the method, or answering true, gets a real next (Filter.Chain): it
// runs the rest of the chain in the host and returns the real result,
// at one more round trip per call that passes. Asked when the host
// starts the plugin process, each process anew (a restart into another
// build of the binary takes that build's answer).
type ResultReader interface {
	ReadsResult() bool
}

// readsResult reports whether b's filters get a real next (ResultReader).
func readsResult(b any) bool {
	r, ok := b.(ResultReader)
	return !ok || r.ReadsResult()
}

// prepare finds the filter of req and the context it runs in; a reply
// when the filter must not run (an unknown handle or peer).
func (s *filterServer) prepare(ctx context.Context, req *pb.FilterRequest) (spi.Filter, context.Context, *pb.FilterReply) {
	f, err := s.h.get(req.Handle)
	if err != nil {
		return nil, nil, &pb.FilterReply{Error: toPB(err)}
	}
	ctx, unknown, err := s.peers.withPeer(ctx, req.Peer)
	if unknown {
		return nil, nil, &pb.FilterReply{UnknownPeer: true}
	}
	if err != nil {
		return nil, nil, &pb.FilterReply{Error: toPB(spi.Errorf(spi.StatusServerError, "filter %q: %v", s.b.Name(), err))}
	}
	return f, ctx, nil
}

// finalReply is the reply of a filter that answered res itself (it did
// not pass, or replaced next's result): its error, or its value as JSON.
func (s *filterServer) finalReply(res spi.Result) *pb.FilterReply {
	rep := &pb.FilterReply{Error: toPB(res.Err), Attachments: res.Attachments}
	if res.Err == nil && res.Value != nil {
		b, err := json.Marshal(res.Value)
		if err != nil {
			rep.Error = toPB(shortCircuitError(s.b.Name(), err.Error()))
			rep.Error.Kind = kindShortCircuit // the host names the plugin as declared
		}
		rep.ValueJson = b
	}
	return rep
}

func (s *filterServer) Invoke(ctx context.Context, req *pb.FilterRequest) (rep *pb.FilterReply, _ error) {
	defer func() {
		if r := recover(); r != nil {
			rep = &pb.FilterReply{Error: recovered("filter Invoke", r)}
		}
	}()
	f, ctx, early := s.prepare(ctx, req)
	if early != nil {
		return early, nil
	}
	next := &passInvoker{}
	inv := fromInvocation(req.Invocation)
	res := f.Invoke(ctx, next, inv)
	if next.passed {
		rep = &pb.FilterReply{Pass: true, Attachments: next.inv.Attachments}
		if res.Err != nil || res.Value != nil || res.Attachments != nil {
			rep.Ignored, rep.IgnoredResult = append(rep.Ignored, ignoredResult), describeResult(res)
		}
		if argsChanged(req.Invocation.GetArgsJson(), next.inv.Args) {
			b, err := changedArgs(s.b.Name(), next.inv.Args)
			if err != nil {
				return &pb.FilterReply{Error: toPB(err)}, nil
			}
			rep.ArgsJson = b
		}
		return rep, nil
	}
	return s.finalReply(res), nil
}

// Chain runs one call through the filter with a real next: the filter's
// next.Invoke sends the host a NextCall and waits for its NextResult
// (chainInvoker); the filter's return is the final reply.
func (s *filterServer) Chain(st pb.Filter_ChainServer) error {
	in, err := st.Recv()
	if err != nil {
		return err
	}
	if in.Request == nil {
		return status.Error(codes.InvalidArgument, "filter Chain: the first message carries no request")
	}
	req := in.Request
	next := &chainInvoker{st: st, argsJSON: req.Invocation.GetArgsJson(), name: s.b.Name()}
	rep := func() (rep *pb.FilterReply) {
		defer func() {
			if r := recover(); r != nil {
				rep = &pb.FilterReply{Error: recovered("filter Invoke", r)}
			}
		}()
		f, ctx, early := s.prepare(st.Context(), req)
		if early != nil {
			return early
		}
		res := f.Invoke(ctx, next, fromInvocation(req.Invocation))
		if next.err != nil {
			return nil // the stream broke: nobody to answer
		}
		if next.calls == 0 {
			return s.finalReply(res)
		}
		switch value, attachments := next.kept(res); {
		case value && attachments:
			return &pb.FilterReply{Pass: true}
		case value: // only the response attachments changed (a header added)
			rep := s.finalReply(res) // value_json and error for an older host
			rep.NextValue = true
			return rep
		}
		return s.finalReply(res)
	}()
	if next.err != nil {
		return next.err
	}
	return st.Send(&pb.ChainOut{Reply: rep})
}

// kept reports what of next's last result a filter returned as res:
// value and error as it got them (not replaced, nor a map or slice value
// changed in place), and attachments as it got them (compared with a
// copy, so that one added to next's map in place counts as a change).
// The host keeps its own value and error when value is true (Go types
// kept) and takes res's attachments when attachments is false.
func (c *chainInvoker) kept(res spi.Result) (value, attachments bool) {
	attachments = maps.Equal(res.Attachments, c.lastAttachments)
	if res.Err != c.last.Err || !reflect.DeepEqual(res.Value, c.last.Value) {
		return false, attachments
	}
	switch res.Value.(type) {
	case map[string]any, []any: // the filter may have changed it in place
		var fresh any
		if json.Unmarshal(c.lastJSON, &fresh) != nil || !reflect.DeepEqual(res.Value, fresh) {
			return false, attachments
		}
	}
	return true, attachments
}

// chainInvoker is the "next" of a filter run by Chain: Invoke asks the
// host to run the rest of the chain and returns its result. Calls are
// serialized (the stream carries one at a time).
type chainInvoker struct {
	st       pb.Filter_ChainServer
	argsJSON []byte // the arguments the filter was sent
	name     string // the filter's own Name(), for errors

	mu              sync.Mutex
	calls           int
	last            spi.Result        // of the last call, as the filter got it
	lastJSON        []byte            // last.Value as the host sent it
	lastAttachments map[string]string // a copy of last.Attachments
	err             error             // the stream broke
}

func (c *chainInvoker) URL() spi.URL      { return spi.URL{} }
func (c *chainInvoker) Available() bool   { return true }
func (c *chainInvoker) Stats() *spi.Stats { return nil }
func (c *chainInvoker) Close() error      { return nil }

// Invoke runs the rest of the chain in the host with inv's attachments
// and, when the filter changed them, its arguments (sent as JSON; the
// host decodes them into the call's argument types).
func (c *chainInvoker) Invoke(ctx context.Context, inv *spi.Invocation) spi.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return spi.Result{Err: spi.Errorf(spi.StatusServerError, "next: the host's stream broke: %v", c.err)}
	}
	call := &pb.NextCall{Attachments: inv.Attachments}
	if argsChanged(c.argsJSON, inv.Args) {
		b, err := changedArgs(c.name, inv.Args)
		if err != nil {
			return spi.Result{Err: err} // the host never saw the call
		}
		call.ArgsChanged, call.ArgsJson = true, b
	}
	c.calls++
	if err := c.st.Send(&pb.ChainOut{Next: call}); err != nil {
		c.err = err
		return spi.Result{Err: spi.Errorf(spi.StatusServerError, "next: the host's stream broke: %v", err)}
	}
	in, err := c.st.Recv()
	if err == nil && in.NextResult == nil {
		err = errors.New("the host answered next without a result")
	}
	if err != nil {
		c.err = err
		return spi.Result{Err: spi.Errorf(spi.StatusServerError, "next: the host's stream broke: %v", err)}
	}
	r := in.NextResult
	res := spi.Result{Err: fromPB(r.Error), Attachments: r.Attachments}
	if len(r.ValueJson) > 0 {
		if err := json.Unmarshal(r.ValueJson, &res.Value); err != nil {
			res.Value = nil
		}
	}
	c.last, c.lastJSON, c.lastAttachments = res, r.ValueJson, maps.Clone(r.Attachments)
	return res
}

// What a passing plugin filter did that the pass dropped
// (pb.FilterReply.Ignored).
const (
	ignoredResult    = "result"
	ignoredArguments = "arguments"
)

// describeResult says what a filter returned after next.Invoke, for the
// host's warning: the error's text, else the value's type, else the
// attachments' keys.
func describeResult(res spi.Result) string {
	switch {
	case res.Err != nil:
		var se *spi.Error
		if errors.As(res.Err, &se) {
			return se.Status.String() + ": " + bare(se)
		}
		return "error: " + res.Err.Error()
	case res.Value != nil:
		return fmt.Sprintf("a value of type %T", res.Value)
	default:
		keys := make([]string, 0, len(res.Attachments))
		for k := range res.Attachments {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return "attachments " + strings.Join(keys, ", ")
	}
}

// argsChanged reports whether a passing filter changed the arguments it
// was sent as argsJSON (none when the plugin does not read them) to
// args, which it then sends the host (changedArgs). It decodes argsJSON
// again to compare, in the plugin, so a filter that reads arguments pays
// that on a pass; the host pays nothing for a call whose arguments did
// not change.
func argsChanged(argsJSON []byte, args []any) bool {
	if len(argsJSON) == 0 {
		return len(args) > 0
	}
	return !reflect.DeepEqual(decodeArgs(argsJSON), args)
}

// changedArgs is the JSON of the arguments a filter named name changed
// to (args), for the host, or the SERIALIZATION_ERROR of arguments JSON
// cannot carry (a chan, a func, a NaN), which fails the call in the
// plugin: the host never sees it.
func changedArgs(name string, args []any) ([]byte, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return nil, spi.Errorf(spi.StatusSerializationError, "filter %q changed the call's arguments to values JSON cannot encode, so they cannot cross to the host: %v", name, err)
	}
	return b, nil
}

// shortCircuitText follows the filter's name in the error of a
// short-circuit value that cannot cross the boundary (shortCircuitError).
const shortCircuitText = ": short-circuit value: "

// shortCircuitError is the SERIALIZATION_ERROR of a filter's
// short-circuit value that could not be encoded or decoded, why saying
// what failed; name is the plugin's own Name() in the plugin, which the
// host replaces with the declared name.
func shortCircuitError(name, why string) error {
	return spi.Errorf(spi.StatusSerializationError, "filter %q"+shortCircuitText+"%s", name, why)
}

// ---------------------------------------------------------------- host side

// FilterOptions configure a plugin-backed filter builder.
type FilterOptions struct {
	Name string
	// Activation is the filter's activation as the plugin described it
	// at its start; a Source that is a DescribedSource overrides it with
	// the running process's (filterBuilder.Activation).
	Activation spi.Activation
	Source     Source
	// Timeout bounds one filter round trip of a call without a deadline
	// (on the consumer: without a timeout attachment or URL key timeout);
	// a call with one gives the plugin what is left of it, a consumer's
	// call with a timeout gives it that timeout. Default 1s.
	Timeout time.Duration
	// BuildTimeout bounds Build's round trip, which builds the filter in
	// the plugin when a service is exported or referred. Default
	// DefaultFilterBuildTimeout (3s).
	BuildTimeout time.Duration
	// Keys are the URL keys the plugin declared (Description.Keys); the
	// builder reports them as its spi.KeyDescriber. nil: none declared.
	// A Source that is a DescribedSource overrides them with the running
	// process's.
	Keys []spi.KeyDoc
	// WithoutArgs: the plugin said it does not read the call's arguments
	// (Description.WithoutArgs): filter requests carry none.
	WithoutArgs bool
	// Chain: the plugin serves Filter.Chain (Description.Chain), so its
	// filters get a real next: calls go through Chain, the plugin's
	// next.Invoke running the rest of the chain here. false (a plugin
	// built with an older sdk, or a builder whose ResultReader answers
	// false): through Invoke, a pass before the call, the rest of the
	// chain running after the plugin answered. A Source that is a
	// DescribedSource overrides Chain and WithoutArgs with what the
	// running process described (a restart into an older or newer
	// build); these are used when it gives no Description.
	Chain bool
	// Required: the plugin is declared required (plugins.yaml required:
	// true). A consumer's call through the filter while the plugin is
	// down (not running, or its process gone before it answered) fails
	// CLIENT_ERROR as without it, the message saying the filter is
	// required and the call was not sent. The provider side is the same
	// either way (SERVICE_NOT_FOUND, not run: a provider always fails
	// closed). Either side first waits for a restart (NewFilterBuilder).
	Required bool
	// Log receives the warning about reserved attachments (default
	// slog.Default()).
	Log *slog.Logger
	// OnDeadline, when set, is called (on the calling goroutine, so it
	// must not block) for each provider-side call whose deadline passed
	// before the plugin's filter answered: the host counts them into a
	// rate-bounded warning naming the plugin. A consumer's is not
	// reported: its CLIENT_TIMEOUT names the plugin to the caller
	// already. Nil: nothing is called.
	OnDeadline func(method string)
}

// NewFilterBuilder returns a spi.FilterBuilder whose filters run in the
// plugin process. With FilterOptions.Chain a filter wraps the call: the
// plugin sees the invocation and either short-circuits with a status or
// a value, or calls next.Invoke, which runs the rest of the chain here
// (next, with the attachments it set) and returns the real result to the
// plugin; the plugin's final result is the caller's (next's own value
// and error, Go types kept, when it returned them unchanged, with the
// response attachments it returned). The stream breaking after
// next ran returns next's result: the call ran. Without Chain the plugin
// passes (possibly changing attachments) before the rest of the chain
// runs, or short-circuits; a result it returns after next.Invoke is
// ignored and warned of once. Either way the arguments the plugin's
// filter passes to next.Invoke, when it changed them, are the ones the
// rest of the chain runs with, converted from JSON into the call's
// argument types (filterAdapter.args); arguments that do not convert
// fail the call with CLIENT_ERROR (consumer side) or BAD_REQUEST
// (provider side) naming the argument and the type. A plugin built
// before it sent them has its changes dropped, with a warning once.
// A call that finds the plugin's process gone — down (restarting), its
// socket refusing the connection, or dead before its filter called next
// — waits for the host's restart (Source.Changed; while the host's error
// is RestartPending) and goes through the new process: a consumer's
// within its deadline or timeout (the round trip's bound), a provider's
// within half of what is left of its deadline. When no process comes in
// time, or the host gave up on the plugin, the call fails without the
// rest of the chain: CLIENT_ERROR on a consumer (the call not sent, in
// the host's words: `filter "acme.auth": pluginhost: filter plugin
// "acme.auth" is unavailable (restarting: ...); waited 1s for its
// restart`), SERVICE_NOT_FOUND "... (the call did not run)" on a
// provider, the not-run answer a failover consumer retries on another
// provider whatever the method. A filter that died after it called next
// is not waited for (next's result stands, the call ran). A round
// trip takes what is left of the call's deadline; a consumer's call
// without one (the consumer's deadline is set below the filters, by the
// exchange) takes the call's timeout (its "timeout" attachment, else the
// URL key timeout, per method first), and FilterOptions.Timeout is the
// bound of a call with neither (with Chain, of the whole stream, next
// included). That bound passing in the plugin is
// CLIENT_TIMEOUT or SERVER_TIMEOUT, the message naming it.
//
// A filter that passes cannot change the attachments the kernel reserves
// (spi.ReservedAttachment: remote, timeout, token): what it set, changed
// or removed of them is dropped and the kernel's values stay (the
// provider's "remote" is the real peer), and the first time per key the
// host logs a warning naming the filter and the key. The call goes on:
// the caller did not send them (`airnode call -a` and
// spi.WithAttachments refuse them with CLIENT_ERROR because there the
// caller did).
func NewFilterBuilder(o FilterOptions) spi.FilterBuilder {
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.BuildTimeout <= 0 {
		o.BuildTimeout = DefaultFilterBuildTimeout
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &filterBuilder{o: o}
}

type filterBuilder struct {
	o FilterOptions

	warnMu sync.Mutex
	warned map[string]bool // reserved attachment keys already warned of, lower case; "?result", "?arguments" (warnIgnored)

	peers peerSent // consumers' certificates given to the plugin (peer.go)
}

func (b *filterBuilder) Name() string { return b.o.Name }

// Activation is the activation the running plugin process declared
// (DescribedSource; while the plugin is down, the last process's), else
// FilterOptions.Activation. The kernel reads it at each Refer and Export
// to choose a chain's filters, so a restart or handover into a build
// declaring another activation changes the chains built after it; the
// chains built before keep their filters (the host warns, naming both).
func (b *filterBuilder) Activation() spi.Activation {
	if _, _, d, _ := described(b.o.Source); d != nil {
		return d.Activation
	}
	return b.o.Activation
}

// Keys returns the keys the running plugin process declared
// (DescribedSource; while the plugin is down, the last process's), else
// FilterOptions.Keys.
func (b *filterBuilder) Keys() []spi.KeyDoc { return declaredKeys(b.o.Source, b.o.Keys) }

// DefaultFilterBuildTimeout bounds a filter plugin's Build round trip
// (FilterOptions.BuildTimeout).
const DefaultFilterBuildTimeout = 3 * time.Second

// Build checks the values u gives the keys the plugin declared
// (checkDeclared), then builds the filter in the plugin, when the plugin is up, within
// FilterOptions.BuildTimeout: the kernel builds a service's filter chain
// before it listens (Export) or refers (Refer), so a URL the plugin's
// Build refuses (a bad value of one of its keys) fails them with the
// plugin's error, and a Build that does not answer in time fails them with
// "the plugin did not answer Build within 3s", instead of every call
// failing. Like a balancer plugin's Build, it is not pure: it makes that
// one local round trip. While the plugin is down (restarting) the filter
// is built in the plugin on its first call after it is back, as after a
// restart.
func (b *filterBuilder) Build(u spi.URL) (spi.Filter, error) {
	if err := checkDeclared(b.Keys(), u); err != nil {
		return nil, err
	}
	st := spi.StatusClientError
	if v, _ := u.Param(spi.KeySide); v == string(spi.Provider) {
		st = spi.StatusServerError
	}
	f := &filterAdapter{o: &b.o, b: b, u: u, us: u.String(), status: st}
	if b.o.Source == nil {
		return f, nil
	}
	c, gen, err := b.o.Source.Current()
	if err != nil {
		return f, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.o.BuildTimeout)
	defer cancel()
	if _, err := f.handle(ctx, c, gen); err != nil {
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) { // gRPC's timer may fire first
			return nil, fmt.Errorf("the plugin did not answer Build within %v: its Build hangs or waits on something slow (it runs when a service is exported or referred) (%w)",
				b.o.BuildTimeout, context.DeadlineExceeded)
		}
		return nil, err
	}
	return f, nil
}

type filterAdapter struct {
	o      *FilterOptions
	b      *filterBuilder
	u      spi.URL // the URL it was built for: a consumer's call timeout
	us     string
	status spi.Status // of a failure of the plugin itself

	mu      sync.Mutex
	gen, id uint64
}

func (f *filterAdapter) handle(ctx context.Context, c *Client, gen uint64) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gen == gen && f.id != 0 {
		return f.id, nil
	}
	rep, err := c.Filter.Build(ctx, &pb.BuildRequest{Url: f.us})
	if err != nil {
		if notSent(err) || ctx.Err() == nil && died(ctx, err) {
			return 0, &pluginGone{gen: gen, err: rpcError("filter Build", err)}
		}
		return 0, rpcError("filter Build", err)
	}
	if rep.Error != nil {
		return 0, fromPB(rep.Error)
	}
	f.gen, f.id = gen, rep.Handle
	return f.id, nil
}

// fail is the result of a failure of the plugin itself (down, died,
// unreachable): f.status naming the filter, err's own status name left
// out (one status name per message; err stays the Cause).
func (f *filterAdapter) fail(err error) spi.Result {
	return spi.Result{Err: &spi.Error{Status: f.status, Message: fmt.Sprintf("filter %q: %s", f.o.Name, bare(err)), Cause: err}}
}

// down is fail for a plugin that is not there to run the filter (not
// running, or its process gone before the call reached it); on a
// consumer whose plugin is required (FilterOptions.Required) the
// message says so (downText).
func (f *filterAdapter) down(err error) spi.Result {
	return spi.Result{Err: &spi.Error{Status: f.status, Message: f.downText(bare(err)), Cause: err}}
}

// downText is the message of a call that failed because the plugin was
// down, why saying how: `filter "acme.auth": why`, or on a consumer whose
// plugin is required `filter "acme.auth" is required (plugins.yaml:
// required: true), so the call was not sent without it: why`.
func (f *filterAdapter) downText(why string) string {
	if f.o.Required && f.status == spi.StatusClientError {
		return fmt.Sprintf("filter %q is required (plugins.yaml: required: true), so the call was not sent without it: %s", f.o.Name, why)
	}
	return fmt.Sprintf("filter %q: %s", f.o.Name, why)
}

// roundTrip returns the context of one call to the plugin: the call's own
// deadline when it has one (the plugin's filter may take what the call
// allows, as a service plugin's method does), else, on the consumer, the
// call's timeout (its "timeout" attachment, else the URL key timeout of
// inv's method: a consumer's call gets its deadline only from the
// exchange, below the filters), else the Timeout bound. bound is the
// timeout set here, 0 when ctx's deadline is used.
//
// On a provider, whose ctx ends at the consumer's deadline, the returned
// early gives up on the plugin's filter a little before that deadline
// (earlyMargin) while its next has not been called, cancelling the
// round trip with a *gaveUpEarly cause: the provider's SERVER_TIMEOUT
// naming the filter then reaches the consumer before the consumer's own
// timer fires, which would say only that the call timed out (tester88
// #3). Once next is called (early.next) the round trip keeps the whole
// deadline, so the method's time is not cut. nil on a consumer, and when
// ctx has no deadline.
func (f *filterAdapter) roundTrip(ctx context.Context, inv *spi.Invocation) (_ context.Context, _ context.CancelFunc, bound time.Duration, early *earlyGiveUp) {
	if d, ok := ctx.Deadline(); ok {
		if f.status == spi.StatusServerError {
			if left := time.Until(d); left > 0 {
				return withEarlyGiveUp(ctx, left)
			}
		}
		c, cancel := context.WithCancel(ctx)
		return c, cancel, 0, nil
	}
	bound = f.o.Timeout
	if f.status == spi.StatusClientError {
		bound = f.callTimeout(inv)
	}
	c, cancel := context.WithTimeout(ctx, bound)
	return c, cancel, bound, nil
}

// earlyMargin is how long before the consumer's deadline a provider gives
// up on a plugin's filter that has not called next (roundTrip): a tenth
// of what is left of the call's deadline when the filter starts, at most
// maxEarlyMargin (50ms of a 1s call, 30ms of a 300ms one).
// Whole milliseconds: under 10ms left, no margin (no early give-up).
func earlyMargin(left time.Duration) time.Duration {
	return min(left/10, maxEarlyMargin).Truncate(time.Millisecond)
}

// maxEarlyMargin bounds earlyMargin: ample for the provider's answer to
// cross a loopback or LAN connection and be read before the consumer's
// timer fires.
const maxEarlyMargin = 50 * time.Millisecond

// earlyGiveUp is the provider's early give-up on one round trip to a
// plugin's filter (roundTrip): a timer that cancels the round trip
// earlyMargin before the consumer's deadline unless next was called
// first. One timer per provider call through a plugin filter, stopped
// when the round trip ends.
type earlyGiveUp struct {
	margin time.Duration
	state  atomic.Int32 // earlyRunning, earlyNext or earlyGaveUp
	timer  *time.Timer
}

const (
	earlyRunning int32 = iota // the filter runs and has not called next
	earlyNext                 // its next was called: the whole deadline applies
	earlyGaveUp               // given up: the round trip is cancelled
)

// withEarlyGiveUp is roundTrip's context on a provider with left of the
// consumer's deadline.
func withEarlyGiveUp(ctx context.Context, left time.Duration) (context.Context, context.CancelFunc, time.Duration, *earlyGiveUp) {
	c, cancelCause := context.WithCancelCause(ctx)
	e := &earlyGiveUp{margin: earlyMargin(left)}
	if e.margin <= 0 {
		return c, func() { cancelCause(nil) }, 0, nil
	}
	e.timer = time.AfterFunc(left-e.margin, func() {
		if e.state.CompareAndSwap(earlyRunning, earlyGaveUp) {
			cancelCause(&gaveUpEarly{margin: e.margin})
		}
	})
	return c, func() { e.timer.Stop(); cancelCause(nil) }, 0, e
}

// next reports whether the filter's next may run, and from then on keeps
// the round trip to the whole deadline: false when the provider already
// gave up on the filter. True for a nil e.
func (e *earlyGiveUp) next() bool {
	if e == nil {
		return true
	}
	if e.state.CompareAndSwap(earlyRunning, earlyNext) {
		e.timer.Stop()
	}
	return e.state.Load() == earlyNext
}

// gaveUpEarly is the cancellation cause of a round trip the provider
// gave up on margin before the consumer's deadline (earlyGiveUp).
type gaveUpEarly struct{ margin time.Duration }

func (e *gaveUpEarly) Error() string {
	return fmt.Sprintf("the provider gave up on the plugin's filter %v before the consumer's deadline", e.margin)
}

// earlyCause returns the *gaveUpEarly that cancelled rctx, nil when none
// did.
func earlyCause(rctx context.Context) *gaveUpEarly {
	var g *gaveUpEarly
	if errors.As(context.Cause(rctx), &g) {
		return g
	}
	return nil
}

// callTimeout is a consumer's call's timeout as the kernel reads it for
// an attempt: the caller's "timeout" attachment (a Go duration or bare
// milliseconds), else the URL key timeout of inv's method, else
// FilterOptions.Timeout. A bad value is left to the kernel, which refuses
// it after the filters: here it is FilterOptions.Timeout.
func (f *filterAdapter) callTimeout(inv *spi.Invocation) time.Duration {
	if v, ok := inv.Attachments[spi.AttachmentTimeout]; ok {
		if d, err := spi.ParseDuration(v); err == nil && d > 0 {
			return d
		}
		return f.o.Timeout
	}
	if d, err := f.u.MethodDuration(inv.Method, "timeout", f.o.Timeout); err == nil && d > 0 {
		return d
	}
	return f.o.Timeout
}

// failCall is fail for an error of a round trip made under rctx, a
// context of roundTrip with its bound: the call's deadline or timeout
// passing in the plugin is that side's timeout (SERVER_TIMEOUT on the
// provider, CLIENT_TIMEOUT on the consumer), not a failure of the plugin;
// on a provider it is reported to FilterOptions.OnDeadline (the plugin
// did not answer).
func (f *filterAdapter) failCall(rctx context.Context, bound time.Duration, method string, err error) spi.Result {
	if f.expired(rctx, err) {
		if f.o.OnDeadline != nil && f.status == spi.StatusServerError {
			f.o.OnDeadline(method)
		}
		return f.timedOut(rctx, bound, err, false)
	}
	return f.fail(err)
}

// expired reports whether the round trip under rctx ended at its
// deadline (gRPC's timer for it may fire a moment before rctx's), or was
// given up just before it (earlyGiveUp).
func (f *filterAdapter) expired(rctx context.Context, err error) bool {
	return errors.Is(rctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || earlyCause(rctx) != nil
}

// timedOut is the result of a call whose deadline (bound 0) or timeout
// bound passed while the plugin's filter ran; err is the cause. Unless
// called (the filter's next had run: the plugin called back into the
// host over Filter.Chain), its message ends "the call went no further"
// and its cause says that the deadline passed in the filter before the
// method was called (notCalled); when called, the message says that next
// had been called, so the method may have run (on a consumer, the
// request may have been sent). A round trip under rctx that the provider
// gave up on early (earlyGiveUp, never after next) says so, and its
// cause too (notCalled.GaveUpBefore).
func (f *filterAdapter) timedOut(rctx context.Context, bound time.Duration, err error, called bool) spi.Result {
	st := spi.StatusClientTimeout
	if f.status == spi.StatusServerError {
		st = spi.StatusServerTimeout
	}
	further := "the call went no further"
	if called {
		further = "the plugin's filter had called next, so the method may have run"
	}
	early := earlyCause(rctx)
	var msg string
	switch {
	case early != nil && !called:
		msg = fmt.Sprintf("filter %q: the plugin's filter still ran %v before the consumer's deadline, so the provider gave up on it then, for this answer to reach the consumer before its own timer; %s", f.o.Name, early.margin, further)
	case bound > 0:
		msg = fmt.Sprintf("filter %q: the call's timeout of %v (URL key timeout, or the caller's timeout attachment) passed while the plugin's filter ran; %s", f.o.Name, bound, further)
	default:
		msg = fmt.Sprintf("filter %q: the call's deadline passed while the plugin's filter ran (it had what was left of it); %s", f.o.Name, further)
	}
	cause := errors.Join(context.DeadlineExceeded, err)
	if !called {
		nc := &notCalled{filter: f.o.Name, err: cause}
		if early != nil {
			nc.early = early.margin
		}
		cause = nc
	}
	return spi.Result{Err: &spi.Error{Status: st, Message: msg, Cause: cause}}
}

// notCalled is the cause of a call whose deadline passed while a plugin's
// filter ran, before the method was called. The provider's exchange
// words the consumer's SERVER_TIMEOUT with it (DeadlineBeforeMethod)
// rather than as a method that ran out of time.
type notCalled struct {
	filter string // as declared
	err    error
	early  time.Duration // > 0: given up that long before the deadline (earlyGiveUp)
}

// GaveUpBefore is how long before the consumer's deadline the provider
// gave up on the filter so that its answer arrives first (earlyGiveUp);
// 0 when the deadline itself passed. The provider's exchange words its
// SERVER_TIMEOUT with it.
func (e *notCalled) GaveUpBefore() time.Duration { return e.early }

func (e *notCalled) Error() string { return e.err.Error() }
func (e *notCalled) Unwrap() error { return e.err }

// DeadlineBeforeMethod names where the call's deadline passed, before
// the method was called: `filter "acme.stamp"`.
func (e *notCalled) DeadlineBeforeMethod() string { return fmt.Sprintf("filter %q", e.filter) }

// current is the Source's live client and generation, with whether that
// process serves Filter.Chain and reads no arguments: as it described
// itself at its start (DescribedSource), else FilterOptions' Chain and
// WithoutArgs.
func (f *filterAdapter) current() (c *Client, gen uint64, chain, withoutArgs bool, err error) {
	c, gen, d, err := described(f.o.Source)
	if d != nil {
		return c, gen, d.Chain, d.WithoutArgs, err
	}
	return c, gen, f.o.Chain, f.o.WithoutArgs, err
}

// Invoke runs the call through the plugin's filter. A plugin process
// that is not there to run it — down, or gone before the filter called
// next (pluginGone) — does not fail the call while the host is
// restarting it: the call waits for the new process (awaitRestart),
// within restartWait's bound, and goes through it; only when no process
// comes in time does it fail (notBack).
func (f *filterAdapter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	rctx, cancel, bound, early := f.roundTrip(ctx, inv)
	defer cancel()
	var (
		wctx    context.Context
		started time.Time
	)
	for {
		res := f.invokeOnce(ctx, rctx, cancel, bound, early, next, inv)
		var gone *pluginGone
		if !errors.As(res.Err, &gone) {
			return res
		}
		if wctx == nil {
			var wcancel context.CancelFunc
			wctx, wcancel = f.restartWait(ctx, rctx)
			defer wcancel()
			started = time.Now()
		}
		if !f.awaitRestart(wctx, gone.gen) {
			return f.notBack(res, time.Since(started))
		}
	}
}

// pluginGone is in the cause of a result of invokeOnce whose plugin
// process was not there to run the filter: down (Source.Current's error),
// its socket refusing the connection, or the process dying before the
// filter called next. The call did not go past the filter, so it may go
// through the process the host restarts. gen is the generation that was
// gone (0: none was running).
type pluginGone struct {
	gen uint64
	err error
	// saysNotRun: the result's message says already that the call did
	// not run (the process died during the filter), which notBack then
	// does not add
	saysNotRun bool
}

// Error is err's text without its status name (bare): the message it
// goes into has its own.
func (g *pluginGone) Error() string { return bare(g.err) }
func (g *pluginGone) Unwrap() error { return g.err }

// restartWait bounds a call's wait for its filter plugin's restart: on a
// consumer, what the round trip allows (rctx: the call's timeout or
// deadline); on a provider, half of what is left of the consumer's
// deadline, so that a call whose plugin does not come back in time is
// answered not run (notBack) while the consumer still has the other half
// to retry it on another provider (as a balancer plugin's Select has half
// of the call); rctx without a deadline.
func (f *filterAdapter) restartWait(ctx, rctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && f.status == spi.StatusServerError {
		return context.WithTimeout(rctx, time.Until(d)/2)
	}
	return context.WithCancel(rctx)
}

// awaitRestart waits, within ctx, until the plugin runs a process of
// another generation than gen, and reports whether it does. It returns
// false at once when the host gave up on the plugin (failed, stopped:
// not RestartPending) or its Source never changes (StaticSource). While
// the host has not yet seen the process of gen exit (Current still gives
// it), it waits for the host's state change.
func (f *filterAdapter) awaitRestart(ctx context.Context, gen uint64) bool {
	for {
		changed := f.o.Source.Changed()
		_, g, err := f.o.Source.Current()
		switch {
		case err == nil && g != gen:
			return true
		case err != nil && !restartPending(err), changed == nil:
			return false
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// notBack is the result of a call whose filter's plugin process was gone
// (res, with a *pluginGone cause) and did not come back within the wait
// (waited): the host's own word for the plugin when it has one (`pluginhost:
// filter plugin "acme.auth" is unavailable (restarting: signal: killed;
// restart in 100ms)`), else res's. On a consumer it is CLIENT_ERROR (the
// call was not sent; downText); on a provider SERVICE_NOT_FOUND "(the
// call did not run)", the provider's not-run answer, which a failover
// consumer retries on another provider whatever the method (the
// filter never called next: the method did not start).
func (f *filterAdapter) notBack(res spi.Result, waited time.Duration) spi.Result {
	var gone *pluginGone
	errors.As(res.Err, &gone)
	cause, why, saysNotRun := res.Err, bare(res.Err), gone.saysNotRun
	if _, _, err := f.o.Source.Current(); err != nil {
		cause, why, saysNotRun = err, f.downText(bare(err)), false
	}
	if waited = waited.Round(time.Millisecond); waited > 0 {
		why += fmt.Sprintf("; waited %v for its restart", waited)
	}
	if f.status == spi.StatusServerError {
		if !saysNotRun {
			why += " (the call did not run)"
		}
		return spi.Result{Err: &spi.Error{Status: spi.StatusServiceNotFound, Message: why, Cause: cause}}
	}
	return spi.Result{Err: &spi.Error{Status: f.status, Message: why, Cause: cause}}
}

// invokeOnce runs the call through the plugin's current process: a
// result whose cause is a *pluginGone when that process was not there to
// run the filter (Invoke then waits for the next one). cancel is rctx's,
// called once the filter passed the call, before the rest of the chain
// runs.
func (f *filterAdapter) invokeOnce(ctx, rctx context.Context, cancel context.CancelFunc, bound time.Duration, early *earlyGiveUp, next spi.Invoker, inv *spi.Invocation) spi.Result {
	c, gen, chain, withoutArgs, err := f.current()
	if err != nil {
		return f.down(&pluginGone{gen: gen, err: err})
	}
	id, err := f.handle(rctx, c, gen)
	if err != nil {
		var gone *pluginGone
		if errors.As(err, &gone) {
			return f.down(err)
		}
		return f.failCall(rctx, bound, inv.Method, err)
	}
	req := &pb.FilterRequest{Handle: id, Invocation: toInvocation(inv, !withoutArgs)}
	var cert *x509.Certificate
	if f.status == spi.StatusServerError { // a consumer has no peer certificate
		if cert = spi.PeerCertificate(ctx); cert != nil {
			req.Peer = f.b.peers.request(cert, gen, false)
		}
	}
	if chain {
		return f.chain(ctx, rctx, bound, early, c, gen, req, cert, next, inv)
	}
	rep, err := c.Filter.Invoke(rctx, req)
	if err == nil && rep.UnknownPeer && cert != nil && len(req.Peer.Der) == 0 {
		// the plugin dropped the certificate (peerCache's bound): send it again
		req.Peer = f.b.peers.request(cert, gen, true)
		rep, err = c.Filter.Invoke(rctx, req)
	}
	if err == nil && req.Peer != nil && !rep.UnknownPeer {
		f.b.peers.delivered(req.Peer, gen)
	}
	if err != nil {
		return f.rpcFailed(ctx, rctx, bound, gen, inv.Method, "filter Invoke", err)
	}
	// the round trip is over: its early give-up must not cut the call's own run
	cancel()
	if rep.UnknownPeer { // not after a request with the DER; never a pass without a decision
		return f.fail(errors.New("the plugin did not take the consumer's certificate it was sent"))
	}
	if rep.Pass {
		if len(rep.Ignored) > 0 {
			f.b.warnIgnored(rep.Ignored, rep.IgnoredResult)
		}
		f.attachments(inv, rep.Attachments)
		if len(rep.ArgsJson) > 0 {
			args, err := f.args(inv, inv.Args, req.Invocation.GetArgsJson(), rep.ArgsJson)
			if err != nil {
				return spi.Result{Err: err}
			}
			inv.Args = args
		}
		return next.Invoke(ctx, inv)
	}
	return f.answer(rctx, bound, rep, false)
}

// rpcFailed is the result of a round trip (what: "filter Invoke") to the
// process of generation gen that failed with err before the call ran:
// one whose process was gone has a *pluginGone cause.
func (f *filterAdapter) rpcFailed(ctx, rctx context.Context, bound time.Duration, gen uint64, method, what string, err error) spi.Result {
	if earlyCause(rctx) != nil { // cancelled by the provider itself: not a plugin that died
		return f.failCall(rctx, bound, method, rpcError(what, err))
	}
	if !notSent(err) && died(ctx, err) {
		return spi.Result{Err: &spi.Error{Status: f.status, Message: f.downText(fmt.Sprintf(
			"the plugin process died or its connection broke while the filter ran, so the call did not run (%s); the host restarts the plugin (its log says when) unless its restart is never",
			status.Convert(err).Message())), Cause: &pluginGone{gen: gen, err: rpcError(what, err), saysNotRun: true}}}
	}
	if notSent(err) && !f.expired(rctx, err) {
		return f.down(&pluginGone{gen: gen, err: rpcError(what, err)})
	}
	return f.failCall(rctx, bound, method, rpcError(what, err))
}

// attachments sets inv's attachments to what a passing filter answered,
// the reserved ones kept (keepReserved).
func (f *filterAdapter) attachments(inv *spi.Invocation, after map[string]string) {
	inv.Attachments = f.b.keepReserved(inv.Attachments, after)
	if len(inv.Attachments) == 0 {
		inv.Attachments = nil
	}
}

// chain runs the call through the plugin's filter over Filter.Chain
// (FilterOptions.Chain): each next the plugin asks for runs the rest of
// the chain here and its result goes back; the plugin's final reply is
// the caller's result (next's own value and error when it returned them
// unchanged, with the attachments it returned). The
// stream breaking after next ran returns next's result: the call ran.
// early is roundTrip's: a next asked for after the provider gave up on
// the filter does not run.
func (f *filterAdapter) chain(ctx, rctx context.Context, bound time.Duration, early *earlyGiveUp, c *Client, gen uint64, req *pb.FilterRequest, cert *x509.Certificate, next spi.Invoker, inv *spi.Invocation) spi.Result {
	open := func() (pb.Filter_ChainClient, *pb.ChainOut, error) {
		st, err := c.Filter.Chain(rctx)
		if err != nil {
			return nil, nil, err
		}
		if err := st.Send(&pb.ChainIn{Request: req}); err != nil {
			_, err = st.Recv() // the stream's status says why
			return nil, nil, err
		}
		out, err := st.Recv()
		return st, out, err
	}
	st, out, err := open()
	if err == nil && out.Reply != nil && out.Reply.UnknownPeer && cert != nil && len(req.Peer.Der) == 0 {
		req.Peer = f.b.peers.request(cert, gen, true)
		st, out, err = open()
	}
	if err == nil && req.Peer != nil && (out.Reply == nil || !out.Reply.UnknownPeer) {
		f.b.peers.delivered(req.Peer, gen)
	}
	var res spi.Result
	ran := false // res is the result the plugin's next got
	callerArgs := inv.Args
	for err == nil && out.Next != nil {
		if !early.next() {
			err = context.Cause(rctx) // given up a moment before: rpcFailed words it
			break
		}
		f.attachments(inv, out.Next.Attachments)
		var argErr error
		switch {
		case len(out.Next.ArgsJson) > 0:
			inv.Args, argErr = f.args(inv, callerArgs, req.Invocation.GetArgsJson(), out.Next.ArgsJson)
		case out.Next.ArgsChanged: // a plugin built before args_json
			f.b.warnIgnored([]string{ignoredArguments}, "")
			fallthrough
		default:
			inv.Args = callerArgs // a retry may undo a change
		}
		if argErr != nil {
			inv.Args = callerArgs
			res = spi.Result{Err: argErr}
		} else {
			res = next.Invoke(ctx, inv)
		}
		ran = true
		if err = st.Send(&pb.ChainIn{NextResult: nextResult(res)}); err == nil {
			out, err = st.Recv()
		}
	}
	switch {
	case err != nil && ran:
		return res
	case err != nil:
		return f.rpcFailed(ctx, rctx, bound, gen, inv.Method, "filter Chain", err)
	case out.Reply == nil:
		return f.fail(errors.New("the plugin answered neither next nor a reply"))
	case out.Reply.UnknownPeer:
		return f.fail(errors.New("the plugin did not take the consumer's certificate it was sent"))
	case out.Reply.Pass && ran:
		return res
	case out.Reply.NextValue && ran:
		// next's value and error, Go types kept, with the attachments
		// the filter changed (a response attachment added)
		res.Attachments = out.Reply.Attachments
		return res
	case out.Reply.Pass:
		return f.fail(errors.New("the plugin passed the call without calling next"))
	}
	return f.answer(rctx, bound, out.Reply, ran)
}

// args returns the arguments a plugin's filter changed the call's to,
// got (a JSON array), converted into the call's argument types, or the
// error that fails the call: CLIENT_ERROR on a consumer, BAD_REQUEST on
// a provider, naming the argument and the type it does not decode into.
// An element equal to the one the host sent (sent, the JSON of caller,
// the arguments as the caller gave them) keeps the caller's value as is.
// Another is decoded, as encoding/json decodes:
//
//   - on a provider of a service exported from Go methods, into the
//     method's parameter type (spi.Invocation.ArgTypes); a changed
//     number of arguments is an error;
//   - on a consumer, into the type of the caller's value at that index,
//     so that the codec sends what the caller's type would (a struct
//     stays that struct, an int an int);
//   - generically otherwise (maps, slices, strings, bool, int64 for an
//     integer, float64; the provider decodes them into its parameter
//     types, answering BAD_REQUEST naming the argument when it cannot):
//     on a provider without parameter types (a plugin's service), for a
//     generic call (spi.GenericInvocation: airnode call), for a nil
//     argument, an argument the filter added, or a caller's value that is
//     itself generic (a map[string]any, an []any).
func (f *filterAdapter) args(inv *spi.Invocation, caller []any, sent, got []byte) ([]any, error) {
	fail := func(format string, a ...any) error {
		st := spi.StatusClientError
		if f.status == spi.StatusServerError {
			st = spi.StatusBadRequest
		}
		return spi.Errorf(st, "filter %q changed the arguments of %s.%s: "+format, append([]any{f.o.Name, inv.Service, inv.Method}, a...)...)
	}
	var elems, before []json.RawMessage
	if err := json.Unmarshal(got, &elems); err != nil {
		return nil, fail("the plugin sent no JSON array (%v)", err)
	}
	if len(sent) > 0 {
		_ = json.Unmarshal(sent, &before) // the host's own encoding
	}
	types := inv.ArgTypes
	if f.status == spi.StatusServerError && types != nil && len(elems) != len(types) {
		return nil, fail("%d %s, the method takes %d", len(elems), plural(len(elems), "argument"), len(types))
	}
	generic := spi.GenericInvocation(inv.Attachments)
	out := make([]any, len(elems))
	for i, raw := range elems {
		if i < len(before) && i < len(caller) && bytes.Equal(raw, before[i]) {
			out[i] = caller[i]
			continue
		}
		var t reflect.Type
		switch {
		case f.status == spi.StatusServerError:
			if types != nil {
				t = types[i]
			}
		case !generic && i < len(caller) && caller[i] != nil:
			t = reflect.TypeOf(caller[i])
			if t == reflect.TypeFor[map[string]any]() || t == reflect.TypeFor[[]any]() {
				t = nil
			}
		}
		v, err := decodeArg(raw, t)
		if err != nil {
			want := "a JSON value"
			if t != nil {
				want = gotype.String(t)
			}
			return nil, fail("argument %d is %s, which does not decode into %s: %v", i, clip(raw), want, err)
		}
		out[i] = v
	}
	return out, nil
}

// decodeArg decodes raw into a new value of type t, or generically when t
// is nil or an interface type (numbers: int64 when integral, else
// float64, as the codecs' generic decoders give them).
func decodeArg(raw json.RawMessage, t reflect.Type) (any, error) {
	if t == nil || t.Kind() == reflect.Interface {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		return numbers(v), nil
	}
	p := reflect.New(t)
	if err := json.Unmarshal(raw, p.Interface()); err != nil {
		return nil, err
	}
	return p.Elem().Interface(), nil
}

// numbers replaces each json.Number in v (UseNumber) by an int64, or a
// float64 when it is not an integer that fits.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}

// clip is raw for a message: at most 64 bytes of it.
func clip(raw []byte) string {
	if len(raw) > 64 {
		return string(raw[:61]) + "..."
	}
	return string(raw)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// nextResult is res, the result of the rest of the chain, for the plugin.
func nextResult(res spi.Result) *pb.NextResult {
	r := &pb.NextResult{Error: toPB(res.Err), Attachments: res.Attachments}
	if res.Err == nil && res.Value != nil {
		b, err := json.Marshal(res.Value)
		if err != nil {
			r.ValueError = err.Error()
		} else {
			r.ValueJson = b
		}
	}
	return r
}

// answer is the result of a filter's own reply rep (not a pass): its
// error, or its value, decoded; ran: the filter's next had run.
func (f *filterAdapter) answer(rctx context.Context, bound time.Duration, rep *pb.FilterReply, ran bool) spi.Result {
	const panicked = "panic in plugin filter Invoke: " // recovered's wording, also from plugins built before kindPanic
	if e := rep.Error; e != nil && (e.Kind == kindPanic || spi.Status(e.Status) == spi.StatusServerError && strings.HasPrefix(e.Message, panicked)) {
		// name the plugin, as an in-process service's panic names the
		// method; the side's status (CLIENT_ERROR in a consumer's chain,
		// SERVER_ERROR in a provider's), as for any failure of the plugin
		return spi.Result{Err: spi.Errorf(f.status, "panic in filter plugin %q (its Invoke): %s",
			f.o.Name, strings.TrimPrefix(e.Message, panicked))}
	}
	if err := fromPB(rep.Error); err != nil && f.expired(rctx, err) {
		// The plugin's filter gave up at the call's deadline (its copy of
		// it may pass a moment before ours).
		return f.timedOut(rctx, bound, err, ran)
	}
	if e := rep.Error; e != nil && (e.Kind == kindShortCircuit || spi.Status(e.Status) == spi.StatusSerializationError && strings.Contains(e.Message, shortCircuitText)) {
		// the plugin could not encode its value; it named itself by its
		// own Name() (plugins built before kindShortCircuit: "plugin filter")
		_, why, _ := strings.Cut(e.Message, shortCircuitText)
		return spi.Result{Err: shortCircuitError(f.o.Name, why)}
	}
	res := spi.Result{Err: fromPB(rep.Error), Attachments: rep.Attachments}
	if f.status == spi.StatusServerError && errors.Is(res.Err, spi.ErrAccessDenied) {
		// refused before the service, as the token filter refuses: the
		// metrics filter counts no call of the method, this counts it
		counters.Access.PluginFilterRejections.Inc()
	}
	if res.Err == nil && len(rep.ValueJson) > 0 {
		if err := json.Unmarshal(rep.ValueJson, &res.Value); err != nil {
			res.Err = shortCircuitError(f.o.Name, err.Error())
		}
	}
	return res
}

// keepReserved returns after, the attachments a passing plugin filter
// answered, with every reserved key (spi.ReservedAttachment, any case) as
// it was in before (the kernel's value, or absent), warning once per key
// of a change dropped. after is the reply's own map; before is not
// modified.
func (b *filterBuilder) keepReserved(before, after map[string]string) map[string]string {
	for k, av := range after {
		if !spi.ReservedAttachment(k) {
			continue
		}
		bv, ok := before[k]
		switch {
		case ok && bv == av:
			continue
		case ok:
			after[k] = bv
		default:
			delete(after, k)
		}
		b.warnReserved(k)
	}
	for k, bv := range before {
		if _, kept := after[k]; kept || !spi.ReservedAttachment(k) {
			continue
		}
		if after == nil {
			after = make(map[string]string, 1)
		}
		after[k] = bv // the plugin removed it
		b.warnReserved(k)
	}
	return after
}

// warnIgnored logs, the first time per plugin (this builder) and per
// kind, what a passing plugin filter did that the pass dropped
// (pb.FilterReply.Ignored: "result", "arguments"); result describes the
// result it returned after next.Invoke. The call goes on as the pass
// says. Once per kind bounds it more tightly than a rate: a filter that
// does it does it on every call.
func (b *filterBuilder) warnIgnored(kinds []string, result string) {
	for _, kind := range kinds {
		b.warnMu.Lock()
		seen := b.warned["?"+kind]
		if !seen {
			if b.warned == nil {
				b.warned = make(map[string]bool, 3)
			}
			b.warned["?"+kind] = true
		}
		b.warnMu.Unlock()
		if seen {
			continue
		}
		switch kind {
		case ignoredResult:
			b.o.Log.Warn("plugin filter returned a result of its own after calling next.Invoke; ignored: the call went on in the host and its caller gets the real result "+
				"(in a filter plugin next.Invoke only passes the call: it returns an empty result at once, before the call runs; logged once per plugin)",
				"filter", b.o.Name, "returned", result)
		case ignoredArguments:
			b.o.Log.Warn("plugin filter changed the call's arguments; ignored: the call goes on with the caller's arguments "+
				"(the plugin was built with an sdk that does not send changed arguments; rebuild it with this one to have them applied; logged once per plugin)",
				"filter", b.o.Name)
		default: // a newer plugin's
			b.o.Log.Warn("plugin filter did something a pass cannot carry; ignored (logged once per plugin)", "filter", b.o.Name, "ignored", kind)
		}
	}
}

func (b *filterBuilder) warnReserved(key string) {
	folded := strings.ToLower(key)
	b.warnMu.Lock()
	seen := b.warned[folded]
	if !seen {
		if b.warned == nil {
			b.warned = make(map[string]bool, 3)
		}
		b.warned[folded] = true
	}
	b.warnMu.Unlock()
	if seen {
		return
	}
	attrs := []any{"filter", b.o.Name, "key", folded}
	if key != folded {
		attrs = append(attrs, "as", key)
	}
	b.o.Log.Warn("plugin filter changed an attachment the kernel reserves; dropped, the kernel's value stays (logged once per key, any case)",
		append(attrs, "reserved", spi.ReservedAttachments())...)
}

var (
	_ spi.FilterBuilder = (*filterBuilder)(nil)
	_ spi.Filter        = (*filterAdapter)(nil)
)
