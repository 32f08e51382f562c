package failover_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/airnode/airnode/extensions/cluster/failover"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestConformance(t *testing.T) { spitest.TestCluster(t, failover.Builder{}) }

// firstLB picks the first invoker of the list, so tests know the order.
type firstLB struct{}

func (firstLB) Select(l []spi.Invoker, _ *spi.Invocation) spi.Invoker { return l[0] }

func fails(err error) func(context.Context, *spi.Invocation) spi.Result {
	return func(context.Context, *spi.Invocation) spi.Result { return spi.Result{Err: err} }
}

func ok(context.Context, *spi.Invocation) spi.Result { return spi.Result{Value: "ok"} }

// setup returns a cluster built from query and n providers answering with fns.
func setup(t *testing.T, query string, fns ...func(context.Context, *spi.Invocation) spi.Result) (spi.Cluster, *spitest.StubDirectory, []*spitest.StubInvoker) {
	t.Helper()
	ref := spi.MustParse("consumer://10.0.0.9/demo.Echo" + query)
	c, err := failover.Builder{}.Build(ref)
	if err != nil {
		t.Fatal(err)
	}
	var ps []*spitest.StubInvoker
	var l []spi.Invoker
	for i, fn := range fns {
		p := spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo", i+1)), fn)
		ps = append(ps, p)
		l = append(l, p)
	}
	return c, spitest.NewStubDirectory(ref, "memory://", l...), ps
}

func calls(ps []*spitest.StubInvoker) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.Calls()
	}
	return out
}

var echo = func() *spi.Invocation { return &spi.Invocation{Service: "demo.Echo", Method: "Echo"} }

func TestRetriesOnOtherProviders(t *testing.T) {
	inactive := spi.Errorf(spi.StatusChannelInactive, "channel closed")
	c, dir, ps := setup(t, "", fails(inactive), fails(inactive), ok)
	r := c.Invoke(context.Background(), echo(), dir, firstLB{})
	if r.Err != nil || r.Value != "ok" {
		t.Fatalf("got %+v, want the third provider's success", r)
	}
	if got := fmt.Sprint(calls(ps)); got != "[1 1 1]" {
		t.Fatalf("calls %s, want each provider once", got)
	}
}

func TestRetryableErrors(t *testing.T) {
	dial := fmt.Errorf("connect: %w", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")})
	cases := []struct {
		name  string
		err   error
		query string
		calls int64 // total attempts with 3 failing providers
	}{
		{"channel inactive", spi.Errorf(spi.StatusChannelInactive, "x"), "", 3},
		{"channel inactive after the request was sent", spi.Errorf(spi.StatusChannelInactive, "x: %w", spi.ErrRequestSent), "", 1},
		{"channel inactive after the request was sent, idempotent", spi.Errorf(spi.StatusChannelInactive, "x: %w", spi.ErrRequestSent), "?idempotent=true", 3},
		{"client timeout", spi.Errorf(spi.StatusClientTimeout, "x"), "", 3},
		{"dial error", dial, "", 3},
		{"dial error in CLIENT_ERROR", spi.Errorf(spi.StatusClientError, "dial: %w", dial), "", 3},
		{"threadpool exhausted", spi.Errorf(spi.StatusServerThreadpoolExhausted, "x"), "", 3},
		{"service error", spi.Errorf(spi.StatusServiceError, "x"), "", 1},
		{"server error", spi.Errorf(spi.StatusServerError, "x"), "", 1},
		{"server error, idempotent", spi.Errorf(spi.StatusServerError, "x"), "?idempotent=true", 3},
		{"server error, other method idempotent", spi.Errorf(spi.StatusServerError, "x"), "?methods.Sleep.idempotent=true", 1},
		{"bad request", spi.Errorf(spi.StatusBadRequest, "x"), "", 1},
		{"plain error", errors.New("x"), "", 1},
		{"server timeout", spi.Errorf(spi.StatusServerTimeout, "x"), "", 1},
		{"server timeout, idempotent method", spi.Errorf(spi.StatusServerTimeout, "x"), "?methods.Echo.idempotent=true", 3},
		{"server timeout, idempotent service", spi.Errorf(spi.StatusServerTimeout, "x"), "?idempotent=true", 3},
		{"server timeout, other method idempotent", spi.Errorf(spi.StatusServerTimeout, "x"), "?methods.Sleep.idempotent=true", 1},
		{"retries=0", spi.Errorf(spi.StatusChannelInactive, "x"), "?retries=0", 1},
		{"retries=5 (3 providers: all, then again)", spi.Errorf(spi.StatusChannelInactive, "x"), "?retries=5", 6},
		{"method retries", spi.Errorf(spi.StatusChannelInactive, "x"), "?retries=0&methods.Echo.retries=1", 2},
		{"Dubbo method retries", spi.Errorf(spi.StatusChannelInactive, "x"), "?methods=Echo,Sleep&Echo.retries=0", 1},
	}
	for _, tc := range cases {
		c, dir, ps := setup(t, tc.query, fails(tc.err), fails(tc.err), fails(tc.err))
		r := c.Invoke(context.Background(), echo(), dir, firstLB{})
		var n int64
		for _, x := range calls(ps) {
			n += x
		}
		if n != tc.calls {
			t.Errorf("%s: %d attempts, want %d", tc.name, n, tc.calls)
		}
		if spi.StatusOf(r.Err) != spi.StatusOf(tc.err) {
			t.Errorf("%s: status %v, want %v (%v)", tc.name, spi.StatusOf(r.Err), spi.StatusOf(tc.err), r.Err)
		}
		if n > 1 && !strings.Contains(r.Err.Error(), "10.0.0.1:20880") {
			t.Errorf("%s: error %q does not list the providers tried", tc.name, r.Err)
		}
	}
}

func TestContextDoneStopsRetrying(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancelThenFail := func(context.Context, *spi.Invocation) spi.Result {
		cancel()
		return spi.Result{Err: spi.Errorf(spi.StatusChannelInactive, "closed")}
	}
	c, dir, ps := setup(t, "", cancelThenFail, ok, ok)
	r := c.Invoke(ctx, echo(), dir, firstLB{})
	if spi.StatusOf(r.Err) != spi.StatusChannelInactive || fmt.Sprint(calls(ps)) != "[1 0 0]" {
		t.Fatalf("got %v with calls %v; want one attempt", r.Err, calls(ps))
	}
}

func TestProviderGoneBetweenAttempts(t *testing.T) {
	var dir *spitest.StubDirectory
	gone := func(context.Context, *spi.Invocation) spi.Result {
		dir.Set()
		return spi.Result{Err: spi.Errorf(spi.StatusChannelInactive, "closed")}
	}
	c, d, _ := setup(t, "", gone)
	dir = d
	if r := c.Invoke(context.Background(), echo(), dir, firstLB{}); spi.StatusOf(r.Err) != spi.StatusChannelInactive {
		t.Fatalf("got %v, want the CHANNEL_INACTIVE of the only attempt", r.Err)
	}
}

func TestBuildErrors(t *testing.T) {
	for q, key := range map[string]string{
		"retries=-1":                      "retries",
		"retries=two":                     "retries",
		"retries=101":                     "retries",
		"methods.Echo.retries=x":          "methods.Echo.retries",
		"methods=Echo&Echo.retries=-2":    "Echo.retries",
		"methods.Echo.idempotent=perhaps": "methods.Echo.idempotent",
	} {
		_, err := failover.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo?" + q))
		var pe *spi.ParamError
		if !errors.As(err, &pe) || pe.Key != key {
			t.Errorf("%s: got %v, want a ParamError for key %s", q, err, key)
		}
	}
}

// A provider's "not here" answer is retried on other providers only: with
// one provider the call fails after one attempt, not three on the same one.
func TestRefusedNotRetriedOnSameProvider(t *testing.T) {
	var calls atomic.Int64
	a := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:1/demo.Echo"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		calls.Add(1)
		return spi.Result{Err: spi.Errorf(spi.StatusServiceNotFound, "service %q is not exported", inv.Service)}
	})
	dir := spitest.NewStubDirectory(spi.MustParse("airnode://127.0.0.1/demo.Echo"), "test", a)
	c, err := failover.Builder{}.Build(dir.URL())
	if err != nil {
		t.Fatal(err)
	}
	res := c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Echo"}, dir, firstLB{})
	if !errors.Is(res.Err, spi.ErrServiceNotFound) {
		t.Fatalf("err = %v, want SERVICE_NOT_FOUND", res.Err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("provider called %d times, want 1", n)
	}
}

// Dubbo's "<m>.retries" and "<m>.idempotent" apply to method m when the
// consumer URL has no "methods" (a consumer's URL seldom lists them), as
// spi.URL.MethodParam and the kernel read "<m>.timeout"; they do not leak to
// other methods, and "heartbeat.retries" stays the heartbeat's key.
func TestDubboMethodKeysWithoutMethodsList(t *testing.T) {
	inactive := spi.Errorf(spi.StatusChannelInactive, "x")
	timeout := spi.Errorf(spi.StatusServerTimeout, "x")
	cases := []struct {
		name   string
		query  string
		err    error
		method string
		calls  int64 // total attempts with 3 failing providers
	}{
		{"Slow.retries=0, Slow", "?timeout=300&idempotent=true&Slow.retries=0", inactive, "Slow", 1},
		{"Slow.retries=0, Echo keeps the service's", "?timeout=300&idempotent=true&Slow.retries=0", inactive, "Echo", 3},
		{"Slow.retries=1 over retries=0", "?retries=0&Slow.retries=1", inactive, "Slow", 2},
		{"Slow.idempotent, Slow's SERVER_TIMEOUT", "?timeout=300&Slow.idempotent=true", timeout, "Slow", 3},
		{"Slow.idempotent, Echo's SERVER_TIMEOUT", "?timeout=300&Slow.idempotent=true", timeout, "Echo", 1},
		{"methods= leaves Slow out", "?methods=Echo&Slow.retries=0", inactive, "Slow", 3},
		{"heartbeat.retries is no method's", "?heartbeat.retries=5&retries=0", inactive, "Echo", 1},
	}
	for _, tc := range cases {
		c, dir, ps := setup(t, tc.query, fails(tc.err), fails(tc.err), fails(tc.err))
		r := c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: tc.method}, dir, firstLB{})
		var n int64
		for _, x := range calls(ps) {
			n += x
		}
		if n != tc.calls {
			t.Errorf("%s: %s %d attempts, want %d", tc.name, tc.method, n, tc.calls)
		}
		if spi.StatusOf(r.Err) != spi.StatusOf(tc.err) {
			t.Errorf("%s: status %v, want %v", tc.name, spi.StatusOf(r.Err), spi.StatusOf(tc.err))
		}
	}
	// Build validates "<m>.retries" without "methods" too, with failover's
	// bounds, and leaves "heartbeat.retries" (bounds 1..1000) to the heartbeat.
	_, err := failover.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo?Slow.retries=500"))
	var pe *spi.ParamError
	if !errors.As(err, &pe) || pe.Key != "Slow.retries" {
		t.Errorf("Slow.retries=500: got %v, want a ParamError for key Slow.retries", err)
	}
	if _, err := (failover.Builder{}).Build(spi.MustParse("consumer://10.0.0.9/demo.Echo?heartbeat.retries=500")); err != nil {
		t.Errorf("heartbeat.retries=500: %v, want no error (not failover's key)", err)
	}
}

// A connection-level failure that the same provider would give again at
// once (a refused dial, a certificate that failed verification) is not
// retried on that provider, as Dubbo reselects among the invokers not
// tried first; another provider still takes the retry. With one provider
// the call fails after one attempt, and the message says so
// ("failed after 1 attempt on [10.0.0.1:20880]"), not three on the same
// address.
func TestErrorThatRepeatsNotRetriedOnSameProvider(t *testing.T) {
	refusedDial := spi.Errorf(spi.StatusChannelInactive, "cannot connect to provider 10.0.0.1:20880: %w",
		&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})
	unknownCA := spi.Errorf(spi.StatusChannelInactive, "cannot connect to provider 10.0.0.1:20880: tlsconf: handshake: %w",
		&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}})
	bareX509 := spi.Errorf(spi.StatusChannelInactive, "handshake: %w", x509.HostnameError{Host: "h", Certificate: &x509.Certificate{}})
	timeout := spi.Errorf(spi.StatusClientTimeout, "not written")
	goAway := &spi.Error{Status: spi.StatusChannelInactive, Cause: spi.ErrGoAway,
		Message: "exchange: provider 10.0.0.1:20880 is closing the channel and did not run the request (its go-away): safe to retry"}
	cases := []struct {
		name  string
		fns   []func(context.Context, *spi.Invocation) spi.Result
		calls string // per provider
		msg   string // the error's text starts with it ("\n  attempt 1, ..." after the first line of several attempts, tester75 #2); "" success
	}{
		{"refused dial, one provider", []func(context.Context, *spi.Invocation) spi.Result{fails(refusedDial)}, "[1]",
			"CHANNEL_INACTIVE: failover: demo.Echo.Echo failed after 1 attempt on [10.0.0.1:20880]: CHANNEL_INACTIVE: cannot connect"},
		{"unknown authority, one provider", []func(context.Context, *spi.Invocation) spi.Result{fails(unknownCA)}, "[1]",
			"CHANNEL_INACTIVE: failover: demo.Echo.Echo failed after 1 attempt on [10.0.0.1:20880]: "},
		{"host name mismatch, one provider", []func(context.Context, *spi.Invocation) spi.Result{fails(bareX509)}, "[1]",
			"CHANNEL_INACTIVE: failover: demo.Echo.Echo failed after 1 attempt on [10.0.0.1:20880]: "},
		{"refused dial, three providers", []func(context.Context, *spi.Invocation) spi.Result{fails(refusedDial), fails(refusedDial), fails(refusedDial)}, "[1 1 1]",
			"CHANNEL_INACTIVE: failover: demo.Echo.Echo failed after 3 attempts on [10.0.0.1:20880, 10.0.0.2:20880, 10.0.0.3:20880]:\n  attempt 1, 10.0.0.1:20880: "},
		{"refused dial, two providers", []func(context.Context, *spi.Invocation) spi.Result{fails(refusedDial), fails(refusedDial)}, "[1 1]",
			"CHANNEL_INACTIVE: failover: demo.Echo.Echo failed after 2 attempts on [10.0.0.1:20880, 10.0.0.2:20880]:\n  attempt 1, 10.0.0.1:20880: "},
		{"refused dial, then a provider that answers", []func(context.Context, *spi.Invocation) spi.Result{fails(refusedDial), ok}, "[1 1]", ""},
		{"refused dial, then one whose error may change", []func(context.Context, *spi.Invocation) spi.Result{fails(refusedDial), fails(timeout)}, "[1 2]",
			"CLIENT_TIMEOUT: failover: demo.Echo.Echo failed after 3 attempts on [10.0.0.1:20880, 10.0.0.2:20880 (2 times)]:\n  attempt 1, 10.0.0.1:20880: "},
		{"go-away, one provider", []func(context.Context, *spi.Invocation) spi.Result{fails(goAway)}, "[1]",
			"CHANNEL_INACTIVE: failover: demo.Echo.Echo failed after 1 attempt on [10.0.0.1:20880]: CHANNEL_INACTIVE: exchange: provider 10.0.0.1:20880 is closing"},
		{"go-away, then a provider that answers", []func(context.Context, *spi.Invocation) spi.Result{fails(goAway), ok}, "[1 1]", ""},
		{"go-away, then one whose error may change", []func(context.Context, *spi.Invocation) spi.Result{fails(goAway), fails(timeout)}, "[1 2]",
			"CLIENT_TIMEOUT: failover: demo.Echo.Echo failed after 3 attempts on [10.0.0.1:20880, 10.0.0.2:20880 (2 times)]:\n  attempt 1, 10.0.0.1:20880: "},
		{"an error that may change, one provider (unchanged)", []func(context.Context, *spi.Invocation) spi.Result{fails(timeout)}, "[3]",
			"CLIENT_TIMEOUT: failover: demo.Echo.Echo failed after 3 attempts on [10.0.0.1:20880 (3 times)]:\n  attempt 1, 10.0.0.1:20880: "},
	}
	for _, tc := range cases {
		c, dir, ps := setup(t, "", tc.fns...)
		r := c.Invoke(context.Background(), echo(), dir, firstLB{})
		if got := fmt.Sprint(calls(ps)); got != tc.calls {
			t.Errorf("%s: calls %s, want %s", tc.name, got, tc.calls)
		}
		switch {
		case tc.msg == "" && r.Err != nil:
			t.Errorf("%s: %v, want success", tc.name, r.Err)
		case tc.msg != "" && (r.Err == nil || !strings.HasPrefix(r.Err.Error(), tc.msg)):
			t.Errorf("%s: error %v\nwant it to start %q", tc.name, r.Err, tc.msg)
		}
	}
	// retries=0: one attempt, the provider's error as it was
	c, dir, _ := setup(t, "?retries=0", fails(refusedDial))
	if r := c.Invoke(context.Background(), echo(), dir, firstLB{}); r.Err != refusedDial {
		t.Errorf("retries=0: %v, want the provider's error unwrapped", r.Err)
	}
}

func TestRepeats(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{syscall.ECONNREFUSED, true},
		{fmt.Errorf("dial: %w", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), true},
		{spi.Errorf(spi.StatusChannelInactive, "x: %w: %w", spi.ErrRequestSent, syscall.ECONNREFUSED), false},
		{&tls.CertificateVerificationError{Err: errors.New("expired")}, true},
		{x509.UnknownAuthorityError{}, true},
		{x509.CertificateInvalidError{Reason: x509.Expired}, true},
		{errors.New("connection refused"), false}, // text is not matched
		{fmt.Errorf("dial: %w", syscall.ECONNRESET), false},
		{spi.Errorf(spi.StatusChannelInactive, "provider 10.0.0.1:20880: channel closed, reconnecting"), false},
		{spi.Errorf(spi.StatusClientTimeout, "x"), false},
		{&spi.Error{Status: spi.StatusChannelInactive, Message: "go-away", Cause: spi.ErrGoAway}, true},
		{fmt.Errorf("wrapped: %w", &spi.Error{Status: spi.StatusChannelInactive, Message: "go-away", Cause: spi.ErrGoAway}), true},
		{&spi.Error{Status: spi.StatusServerError, Message: "shut down ... abandoned", Cause: spi.ErrProviderShutdown}, true},
		{&spi.Error{Status: spi.StatusServerError, Message: "shut down ... abandoned"}, false}, // text is not matched
	} {
		if got := failover.Repeats(tc.err); got != tc.want {
			t.Errorf("Repeats(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// A call its provider abandoned at its shutdown timeout (SERVER_ERROR
// "shut down ... abandoned", spi.ErrProviderShutdown: tester nu78
// finding 1) is retried, when idempotent, on another provider only:
// asked again at once, the provider that is shutting down runs nothing.
// With one provider the call fails after that one attempt; before, it
// took all three on the same provider.
func TestAbandonedAtShutdownNotRetriedOnSameProvider(t *testing.T) {
	abandoned := &spi.Error{Status: spi.StatusServerError, Cause: spi.ErrProviderShutdown,
		Message: "provider 10.0.0.1:20880 shut down: its shutdown timeout passed while demo.Echo.Echo was running; the call was abandoned (the method returned: context canceled)"}
	c, dir, ps := setup(t, "?idempotent=true", fails(abandoned))
	r := c.Invoke(context.Background(), echo(), dir, firstLB{})
	if got := fmt.Sprint(calls(ps)); got != "[1]" {
		t.Errorf("one provider: calls %s, want [1]", got)
	}
	want := "SERVER_ERROR: failover: demo.Echo.Echo failed after 1 attempt on [10.0.0.1:20880]: SERVER_ERROR: provider 10.0.0.1:20880 shut down"
	if r.Err == nil || !strings.HasPrefix(r.Err.Error(), want) || !errors.Is(r.Err, spi.ErrProviderShutdown) {
		t.Errorf("one provider: %v\nwant it to start %q, with spi.ErrProviderShutdown", r.Err, want)
	}
	c, dir, ps = setup(t, "?idempotent=true", fails(abandoned), ok)
	if r := c.Invoke(context.Background(), echo(), dir, firstLB{}); r.Err != nil {
		t.Errorf("two providers: %v, want the other's answer", r.Err)
	}
	if got := fmt.Sprint(calls(ps)); got != "[1 1]" {
		t.Errorf("two providers: calls %s, want [1 1]", got)
	}
}
