package spitest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/spi"
)

// FilterOptions adapts TestFilter to a filter's keys. The zero value suits
// a filter that has nothing to do when none of its keys is set.
type FilterOptions struct {
	// Params are added to the URL the suite builds the filter from, on
	// each side, so that the filter has nothing to do: "accesslog": "false",
	// a limit far above the suite's 8 concurrent calls. The suite sets
	// "side" itself.
	Params map[string]string
	// AddsAttachments are the attachment keys the filter may set on the
	// invocation it passes to next, a documented change such as a tracing
	// filter's "x-trace" (Dubbo's tracing filters add their trace and
	// span ids the same way): PassThrough then accepts each listed key
	// added, or its value replaced, and still compares everything else
	// (service, method, arguments, every other attachment). A key the
	// filter removes from the caller's attachments is still a change.
	// Empty: the invocation must reach next unchanged. Response
	// attachments are AddsResponseAttachments'.
	//
	// On the provider side of a filter active on both sides, the suite's
	// calls carry the listed attachments as its consumer side set them
	// in PassThrough (the consumer side runs first), as a consumer's
	// chain sends them: a gate whose provider side requires what its
	// consumer side adds (the tenant example) has nothing to do.
	AddsAttachments []string
	// Attachments are sent with every call the suite makes, on each
	// side, as a caller (or a consumer's filters) sends them: what a
	// provider-side gate requires of a call it lets through (a tenant, a
	// credential), so that it has nothing to do. They win over what
	// AddsAttachments carries to the provider side. The filter must pass
	// them on as it passes the others.
	Attachments map[string]string
	// AddsResponseAttachments are the response attachment keys the filter
	// may set, change or remove on the result it returns, a documented
	// change such as a header naming the node that served the call
	// ("x-served-by"): sdk/README and the kernel give the caller a result
	// returned with response attachments changed, so PassThrough then
	// accepts each listed key in any state and still compares the value,
	// the error and every other response attachment of next's result.
	// Empty: the result must come back unchanged, response attachments
	// included.
	AddsResponseAttachments []string
}

// filterCtxKey marks the context the suite passes to Filter.Invoke.
type filterCtxKey struct{}

// TestFilter runs the filter conformance suite against b, built with the
// options' Params (at most one FilterOptions) on every side its
// Activation names (both when it names none), from
// "airnode://127.0.0.1:20880/demo.Echo?side=<side>". It checks for leaked
// goroutines at the end, so it must not run in parallel with other tests
// of its package. The builder itself is the caller's to close.
//
// Covered: the name; Activation names only the consumer and the provider
// side; Build starts no goroutine. On each side: a filter with nothing to
// do calls next exactly once, with a context derived from the caller's
// (its values visible) and the invocation unchanged (service, method,
// arguments, attachments; FilterOptions.AddsAttachments lists the
// attachments it may set), and returns next's result unchanged (value,
// attachments); an error of next (SERVICE_ERROR, CHANNEL_INACTIVE) comes
// back to the caller (errors.Is), with its status; 8 goroutines × 200
// concurrent Invokes each get their own result or error (run with -race);
// no goroutine outlives the calls (a filter that is an io.Closer is closed
// first). A panic of Build or Invoke fails its subtest with the panic's
// value and stack. Every call carries FilterOptions.Attachments, and on
// the provider side of a filter active on both sides the attachments of
// FilterOptions.AddsAttachments its consumer side set (the consumer side
// runs first); a failure of a filter that answered without calling next
// names those options.
func TestFilter(t *testing.T, b spi.FilterBuilder, opts ...FilterOptions) {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	defer catch(t, "filter builder")
	var o FilterOptions
	switch len(opts) {
	case 0:
	case 1:
		o = opts[0]
	default:
		t.Fatalf("spitest: TestFilter takes at most one FilterOptions, got %d", len(opts))
	}
	if err := checkName(b.Name()); err != nil {
		t.Fatalf("filter builder: %v", err)
	}
	act := b.Activation()
	sides := act.Sides
	for _, s := range sides {
		if s != spi.Consumer && s != spi.Provider {
			t.Fatalf("Activation().Sides = %v: side %q, want %q or %q", sides, s, spi.Consumer, spi.Provider)
		}
	}
	if len(sides) == 0 {
		sides = []spi.Side{spi.Consumer, spi.Provider}
	}
	sides = slices.Clone(sides)
	slices.Sort(sides)          // consumer first: the provider side gets what it added
	var added map[string]string // of o.AddsAttachments, by the consumer side
	for _, side := range sides {
		u := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo").WithParams(o.Params).With("side", string(side))
		before := goleak.IgnoreCurrent()
		f, err := b.Build(u)
		if err != nil {
			t.Fatalf("Build(%s): %v", u, err)
		}
		if f == nil {
			t.Fatalf("Build(%s) returned a nil filter and no error", u)
		}
		if err := goleak.Find(before); err != nil {
			t.Fatalf("Build(%s) started goroutines (Build must be pure): %v", u, err)
		}
		sent := o.Attachments
		if side == spi.Provider && len(added) > 0 {
			sent = maps.Clone(added)
			maps.Copy(sent, o.Attachments)
		}
		t.Run(string(side), func(t *testing.T) {
			run(t, "PassThrough", "filter Invoke", func(t *testing.T) {
				got := testFilterPassThrough(t, f, sent, o.AddsAttachments, o.AddsResponseAttachments)
				if side == spi.Consumer {
					added = addedOf(got, o.AddsAttachments)
				}
			})
			run(t, "ErrorPropagated", "filter Invoke", func(t *testing.T) { testFilterError(t, f, sent) })
			run(t, "Concurrent", "filter Invoke", func(t *testing.T) { testFilterConcurrent(t, f, sent) })
		})
		if c, ok := f.(io.Closer); ok {
			if err := c.Close(); err != nil {
				t.Errorf("filter Close: %v", err)
			}
		}
	}
	run(t, "NoGoroutineLeak", "filter", func(t *testing.T) { goleak.VerifyNone(t, leaks) })
}

// filterNext is the invoker below the filter: it records what reached it
// and answers with fn's result.
type filterNext struct {
	*StubInvoker
	mu   sync.Mutex
	ctxs []context.Context
	invs []spi.Invocation
}

func newFilterNext(fn func(context.Context, *spi.Invocation) spi.Result) *filterNext {
	n := &filterNext{}
	n.StubInvoker = NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?side=provider"),
		func(ctx context.Context, inv *spi.Invocation) spi.Result {
			n.mu.Lock()
			n.ctxs = append(n.ctxs, ctx)
			n.invs = append(n.invs, filterCopy(inv))
			n.mu.Unlock()
			return fn(ctx, inv)
		})
	return n
}

// filterCopy copies inv's fields the suite compares.
func filterCopy(inv *spi.Invocation) spi.Invocation {
	return spi.Invocation{Service: inv.Service, Method: inv.Method, Args: slices.Clone(inv.Args), Attachments: maps.Clone(inv.Attachments)}
}

// filterCall runs f.Invoke and fails t unless it returns within
// HeartbeatWait.
func filterCall(t *testing.T, f spi.Filter, ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	t.Helper()
	var r spi.Result
	done := async("filter Invoke", func() { r = f.Invoke(ctx, next, inv) })
	within(t, done, HeartbeatWait, "Invoke of a call whose next returns at once")
	return r
}

// addedOf returns the attachments of adds that got (the invocation next
// got) carries, nil for none.
func addedOf(got map[string]string, adds []string) map[string]string {
	var out map[string]string
	for _, k := range adds {
		if v, ok := got[k]; ok {
			if out == nil {
				out = make(map[string]string, len(adds))
			}
			out[k] = v
		}
	}
	return out
}

// withSent returns attachments with sent's added (a new map; nil when
// both are empty).
func withSent(attachments, sent map[string]string) map[string]string {
	if len(attachments)+len(sent) == 0 {
		return nil
	}
	out := maps.Clone(attachments)
	if out == nil {
		out = make(map[string]string, len(sent))
	}
	maps.Copy(out, sent)
	return out
}

// refused explains a failure of a filter that answered r without calling
// next (calls 0): a gate refusing a call that lacks an attachment
// passes when the suite's calls carry it. "" otherwise.
func refused(r spi.Result, calls int64) string {
	if calls > 0 || r.Err == nil {
		return ""
	}
	return "; the filter answered without calling next: a gate that refuses calls lacking an attachment has nothing to do when the suite's calls carry it: " +
		"FilterOptions.Attachments (airnode plugin check --filter-attachment KEY=VALUE), or, for one its consumer side sets, " +
		"FilterOptions.AddsAttachments naming it (--filter-adds-attachment KEY)"
}

// testFilterPassThrough checks one call carrying sent's attachments and
// returns the attachments next got (nil when it was not called). adds
// and respAdds are FilterOptions.AddsAttachments and
// AddsResponseAttachments.
func testFilterPassThrough(t *testing.T, f spi.Filter, sent map[string]string, adds, respAdds []string) map[string]string {
	nextAtt := map[string]string{"k": "v"}
	next := newFilterNext(func(context.Context, *spi.Invocation) spi.Result {
		return spi.Result{Value: "pong", Attachments: maps.Clone(nextAtt)}
	})
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"x", int64(42)}, Attachments: withSent(map[string]string{"trace": "T-1"}, sent)}
	want := filterCopy(inv)
	ctx := context.WithValue(context.Background(), filterCtxKey{}, "spitest")
	r := filterCall(t, f, ctx, next, inv)
	switch changed := changedKeys(r.Attachments, nextAtt, respAdds); {
	case r.Err != nil || r.Value != "pong":
		t.Errorf("Invoke returned %+v; want next's result unchanged: value \"pong\", attachments map[k:v]%s%s", r, declaredNote(respAdds), refused(r, next.Calls()))
	case len(changed) > 0:
		t.Errorf("Invoke returned the response attachments %v; want next's, map[k:v]%s: it %s; "+
			"a filter that sets, changes or removes response attachments by design declares each key: "+
			"FilterOptions.AddsResponseAttachments (airnode plugin check --filter-adds-response-attachment KEY); "+
			"FilterOptions.AddsAttachments (--filter-adds-attachment) declares the attachments of the invocation it passes to next, not of the result",
			r.Attachments, declaredNote(respAdds), strings.Join(changed, ", "))
	}
	next.mu.Lock()
	defer next.mu.Unlock()
	if len(next.invs) != 1 {
		t.Fatalf("next was called %d times; want once", len(next.invs))
	}
	if v := next.ctxs[0].Value(filterCtxKey{}); v != "spitest" {
		t.Errorf("next got a context without the caller's values (Value = %v); want one derived from the caller's", v)
	}
	got := next.invs[0]
	if len(adds) > 0 {
		got = withoutAdded(got, want, adds)
	}
	if !reflect.DeepEqual(got, want) {
		if len(adds) > 0 {
			t.Errorf("next got the invocation %+v; want it unchanged but for the attachments %q (FilterOptions.AddsAttachments): %+v", next.invs[0], adds, want)
		} else {
			t.Errorf("next got the invocation %+v; want it unchanged: %+v (a filter that sets an attachment of the invocation by design declares its key: "+
				"FilterOptions.AddsAttachments, airnode plugin check --filter-adds-attachment KEY)", got, want)
		}
	}
	return next.invs[0].Attachments
}

// changedKeys describes how got differs from want but for the keys of
// allowed, sorted: "added X", "changed X", "removed X"; nil when equal.
func changedKeys(got, want map[string]string, allowed []string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if slices.Contains(allowed, k) {
			continue
		}
		if w, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("added %q", k))
		} else if got[k] != w {
			out = append(out, fmt.Sprintf("changed %q", k))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if _, ok := got[k]; !ok && !slices.Contains(allowed, k) {
			out = append(out, fmt.Sprintf("removed %q", k))
		}
	}
	return out
}

// declaredNote names the response attachments respAdds accepts, for a
// failure message; "" for none.
func declaredNote(respAdds []string) string {
	if len(respAdds) == 0 {
		return ""
	}
	return fmt.Sprintf(" but for the response attachments %q (FilterOptions.AddsResponseAttachments)", respAdds)
}

// withoutAdded returns got with each attachment in adds set as in want:
// removed when want has none, want's value otherwise; so that a filter
// setting those keys compares equal to want. A nil attachments map left
// empty is nil again, as want's.
func withoutAdded(got, want spi.Invocation, adds []string) spi.Invocation {
	att := maps.Clone(got.Attachments)
	for _, k := range adds {
		if v, ok := want.Attachments[k]; ok {
			if _, had := att[k]; had {
				att[k] = v
			}
		} else {
			delete(att, k)
		}
	}
	if len(att) == 0 && want.Attachments == nil {
		att = nil
	}
	got.Attachments = att
	return got
}

func testFilterError(t *testing.T, f spi.Filter, sent map[string]string) {
	hint := ""
	for _, st := range []spi.Status{spi.StatusServiceError, spi.StatusChannelInactive} {
		e := spi.Errorf(st, "spitest: next failed")
		next := newFilterNext(func(context.Context, *spi.Invocation) spi.Result { return spi.Result{Err: e} })
		inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"x"}, Attachments: withSent(nil, sent)}
		r := filterCall(t, f, context.Background(), next, inv)
		if !errors.Is(r.Err, e) || spi.StatusOf(r.Err) != st {
			if hint == "" { // once
				hint = refused(r, next.Calls())
				t.Errorf("next failed with %v; Invoke returned %v (status %v); want that error%s", e, r.Err, spi.StatusOf(r.Err), hint)
			} else {
				t.Errorf("next failed with %v; Invoke returned %v (status %v); want that error", e, r.Err, spi.StatusOf(r.Err))
			}
		}
		if n := next.Calls(); n != 1 {
			t.Errorf("next failing with %v was called %d times; want once", st, n)
		}
	}
}

func testFilterConcurrent(t *testing.T, f spi.Filter, sent map[string]string) {
	fail := spi.Errorf(spi.StatusServiceError, "spitest: odd argument")
	next := newFilterNext(func(_ context.Context, inv *spi.Invocation) spi.Result {
		if n, _ := inv.Args[0].(int); n%2 == 1 {
			return spi.Result{Err: fail}
		}
		return spi.Result{Value: inv.Args[0]}
	})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			defer catch(t, "filter Invoke")
			for i := range 200 {
				n := g*1000 + i
				inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{n}, Attachments: withSent(nil, sent)}
				r := f.Invoke(context.Background(), next, inv)
				switch {
				case n%2 == 1 && !errors.Is(r.Err, fail):
					errs <- fmt.Errorf("call %d: got %+v, want next's error", n, r)
					return
				case n%2 == 0 && (r.Err != nil || r.Value != n):
					errs <- fmt.Errorf("call %d: got %+v, want its own value %d", n, r, n)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(HeartbeatWait):
		t.Fatalf("8 goroutines × 200 Invokes: not done within %v", HeartbeatWait)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := next.Calls(); n < 8*200 && t.Failed() {
		t.Errorf("next was called %d times for the 1600 calls%s", n, refused(spi.Result{Err: fail}, 0))
	}
}
