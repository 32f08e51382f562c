package kernel

import (
	"context"
	"errors"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/airnode/airnode/spi"
)

// tester98 #1: a call with a 5 s ctx on a reference with no timeout key
// failed after 1 s with "timed out after 1s on the provider (the
// consumer's deadline passed while the method ran)", which a gRPC user
// read as its 5 s deadline ignored. Every timeout now says which bound
// ended the attempt: the timeout key (its value, or the default when not
// set, and how to raise it) or the caller's ctx deadline. Real TCP.
func TestCW_TimeoutSaysWhichBoundEndedTheCall(t *testing.T) {
	_, e := provider(t)
	c := consumer(t)
	base := "airnode://" + e.URL().Address() + "/demo.Echo?retries=0"
	for _, tc := range []struct {
		name, query string
		ctx         time.Duration // 0: no deadline
		attach      string        // the call's "timeout" attachment
		want        string        // a regexp the error's message must match
		ctxEnded    bool
	}{
		{name: "default, longer ctx", ctx: 5 * time.Second,
			want: `\(ended by the timeout URL key's default, 1s per attempt \(the reference sets no timeout\), not by the caller's ctx deadline, (5s|4\.\d+s) after this attempt began: set timeout= above the time the method needs, e.g. timeout=5s, or per method methods\.Sleep\.timeout=5s\)$`},
		{name: "key, no ctx deadline", query: "&timeout=300ms",
			want: `\(ended by the URL key timeout=300ms per attempt, the caller's ctx has no deadline: set it above the time the method needs, e.g. timeout=5s, or per method methods\.Sleep\.timeout=5s\)$`},
		{name: "method key, longer ctx", query: "&methods.Sleep.timeout=300", ctx: 8 * time.Second,
			want: `\(ended by the URL key methods\.Sleep\.timeout=300ms per attempt, not by the caller's ctx deadline, (8s|7\.\d+s) after this attempt began: set it above the time the method needs, e.g. methods\.Sleep\.timeout=8s\)$`},
		{name: "ctx sooner", query: "&timeout=5s", ctx: 300 * time.Millisecond, ctxEnded: true,
			want: `\(ended by the caller's ctx deadline, (300|2\d\d)ms after this attempt began; the timeout, 5s per attempt, was later\)`},
		{name: "attachment", attach: "300ms",
			want: `\(ended by this call's "timeout" attachment, 300ms per attempt; the caller's ctx has no deadline\)$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := refer(t, c, base+tc.query)
			ctx := context.Background()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			if tc.attach != "" {
				ctx = spi.WithAttachments(ctx, spi.AttachmentTimeout, tc.attach)
			}
			var ms int
			began := time.Now()
			err := r.Call(ctx, "Sleep", []any{1500}, &ms)
			took := time.Since(began)
			if st := spi.StatusOf(err); st != spi.StatusServerTimeout && st != spi.StatusClientTimeout {
				t.Fatalf("err = %v after %v; want a timeout", err, took)
			}
			if !regexp.MustCompile(tc.want).MatchString(err.Error()) {
				t.Errorf("err = %v\nwant it to match %s", err, tc.want)
			}
			if got := errors.Is(err, context.DeadlineExceeded); got != tc.ctxEnded {
				t.Errorf("errors.Is(err, context.DeadlineExceeded) = %v; want %v", got, tc.ctxEnded)
			}
			if took > 1400*time.Millisecond {
				t.Errorf("took %v; want the bound's (well under the method's 1.5s)", took)
			}
		})
	}
}

// The provider's answer (it may beat the consumer's own timer: tester98
// got it) says "the call's deadline", which the consumer cannot send
// apart, and the consumer adds which bound it was, as to its own timer's.
func TestCW_ProvidersTimeoutAnswerGetsTheBound(t *testing.T) {
	provided := spi.Errorf(spi.StatusServerTimeout, "exchange: call demo.Echo.Sleep timed out after 1s on the provider (the call's deadline passed while the method ran)")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Sleep"}
	err := withTimeoutBound(ctx, provided, inv, &callConf{timeout: time.Second}, time.Second, spi.Mono()-time.Second) // the attempt began 1 s ago
	const want = "exchange: call demo.Echo.Sleep timed out after 1s on the provider (the call's deadline passed while the method ran) (ended by the timeout URL key's default, 1s per attempt (the reference sets no timeout), not by the caller's ctx deadline, "
	if !strings.HasPrefix(err.Error(), spi.StatusServerTimeout.String()+": "+want) || spi.StatusOf(err) != spi.StatusServerTimeout {
		t.Errorf("err = %v; want it to start %q", err, want)
	}
	// a timeout status back long before any bound (a method's own error,
	// tester14 #8's joined one): as it was
	if early := withTimeoutBound(ctx, provided, inv, &callConf{timeout: time.Second}, time.Second, spi.Mono()-100*time.Millisecond); early != provided {
		t.Errorf("a SERVER_TIMEOUT back 100ms into a 1s attempt was changed: %v", early)
	}
	// not a timeout: as it was
	if other := spi.Errorf(spi.StatusServiceError, "boom"); withTimeoutBound(ctx, other, inv, &callConf{}, time.Second, spi.Mono()) != other {
		t.Error("a SERVICE_ERROR was changed")
	}
}

// lenService reports the length of what it gets, as a proto message and
// as a []byte.
type lenService struct{}

func (lenService) Len(ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.Int64Value, error) {
	return wrapperspb.Int64(int64(len(in.GetValue()))), nil
}

func (lenService) Size(ctx context.Context, b []byte) (int, error) { return len(b), nil }

// tester98 #2: a 64 MiB request over the 8 MiB payload limit was encoded
// whole (1.5 s with protobuf, 4 s with json) before the size check
// refused it. Encoding now stops as the body crosses the limit, or before
// when the codec knows the size (protobuf's proto.Size, a []byte's
// length): the call allocates far less than the body would take.
func TestCW_OverLimitRequestIsNotEncodedWhole(t *testing.T) {
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), lenService{}, spi.MustParse("airnode://127.0.0.1:0/t.Len"))
	if err != nil {
		t.Fatal(err)
	}
	c := consumer(t)
	big := make([]byte, 64<<20)
	for _, tc := range []struct {
		codec, method string
		arg, small    any
	}{
		{"protobuf", "Len", wrapperspb.Bytes(big), wrapperspb.Bytes(make([]byte, 1000))},
		{"protobuf", "Size", big, make([]byte, 1000)},
		{"msgpack", "Size", big, make([]byte, 1000)},
		{"json", "Size", big, make([]byte, 1000)},
	} {
		r := refer(t, c, "airnode://"+e.URL().Address()+"/t.Len?retries=0&codec="+tc.codec)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		began := time.Now()
		err := r.Call(ctxT(t), tc.method, []any{tc.arg}, nil)
		took := time.Since(began)
		runtime.ReadMemStats(&after)
		if spi.StatusOf(err) != spi.StatusSerializationError || !strings.Contains(err.Error(), "request body of at least ") ||
			!strings.Contains(err.Error(), " bytes exceeds this consumer's payload limit 8 MiB (URL key payload; encoding stopped there, not sent)") {
			t.Errorf("%s %s(64 MiB): %v; want SERIALIZATION_ERROR, encoding stopped at the limit", tc.codec, tc.method, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Errorf("%s %s(64 MiB): allocated %d MiB in %v; want under 16 (not encoded whole)", tc.codec, tc.method, alloc>>20, took)
		}
		t.Logf("%s %s(64 MiB): refused in %v", tc.codec, tc.method, took)
		if err := r.Call(ctxT(t), tc.method, []any{tc.small}, nil); err != nil {
			t.Errorf("%s %s(1000 bytes): %v", tc.codec, tc.method, err)
		}
	}
}

// slowJSON takes 100 ms to marshal to a 100 KiB JSON string, counting
// its marshals.
type slowJSON struct{ n *atomic.Int32 }

func (s slowJSON) MarshalJSON() ([]byte, error) {
	s.n.Add(1)
	time.Sleep(100 * time.Millisecond)
	return []byte(`"` + strings.Repeat("x", 100<<10) + `"`), nil
}

// tester98 #2: a call that timed out while its request was encoded (a
// CLIENT_TIMEOUT "timed out after 1.423s encoding its 64 MiB request
// (never sent)") was retried by failover, and encoded again, to time
// out again. It is now a failure of the consumer's own: one attempt,
// spi.ErrEncodeTimedOut.
func TestCW_EncodeTimeoutIsNotRetried(t *testing.T) {
	_, e1 := provider(t)
	_, e2 := provider(t)
	r := referConnected(t, "codec=json&timeout=20ms&retries=2", e1, e2)
	n := new(atomic.Int32)
	err := r.Call(ctxT(t), "Echo", []any{slowJSON{n}}, nil)
	if spi.StatusOf(err) != spi.StatusClientTimeout || !errors.Is(err, spi.ErrEncodeTimedOut) || !strings.Contains(err.Error(), "request (never sent)") {
		t.Fatalf("err = %v; want CLIENT_TIMEOUT timed out encoding, spi.ErrEncodeTimedOut", err)
	}
	if got := n.Load(); got != 1 || strings.Contains(err.Error(), "attempts") {
		t.Errorf("encoded %d times, err = %v; want 1 attempt", got, err)
	}
	// the next call with a small argument goes on as usual
	var out string
	if err := r.Call(ctxT(t), "Echo", []any{"x"}, &out); err != nil || out != "x" {
		t.Errorf("Echo(x): %q, %v", out, err)
	}
}
