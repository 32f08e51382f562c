package kernel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// aeSlow is a service whose Slow waits ms milliseconds or until its
// context ends (it honours its context), counting its starts; on a
// node whose quick is set it answers at once.
type aeSlow struct {
	name    string
	quick   bool
	started *atomic.Int32
	start   chan struct{} // one per start, not blocking
}

func (s aeSlow) Slow(ctx context.Context, ms int) (string, error) {
	s.started.Add(1)
	select {
	case s.start <- struct{}{}:
	default:
	}
	if s.quick {
		return s.name, nil
	}
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return s.name, nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

func newAESlow(name string, quick bool) aeSlow {
	return aeSlow{name: name, quick: quick, started: new(atomic.Int32), start: make(chan struct{}, 16)}
}

// aeExport exports svc (an aeSlow, or a service embedding one) as ae.S
// on a free loopback port of a node of its own with the shutdown timeout
// given.
func aeExport(t *testing.T, svc any, timeout time.Duration, query string) (*Node, *Exporter) {
	t.Helper()
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0), WithShutdownTimeout(timeout))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.Export(ctxT(t), svc, spi.MustParse("airnode://127.0.0.1:0/ae.S"+query))
	if err != nil {
		t.Fatal(err)
	}
	return n, e
}

// aeWait waits (5 s at most) for a start of svc's method.
func aeWait(t *testing.T, svc aeSlow, what string) {
	t.Helper()
	select {
	case <-svc.start:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: the method did not start within 5s", what)
	}
}

// An idempotent call running on its only provider when that provider's
// shutdown timeout passes (tester nu78 finding 1): the provider abandons
// it and answers SERVER_ERROR "shut down ... abandoned", and that is the
// call's failure after its one attempt. Before, the kernel abandoned the
// call first and sent the go-away only after its 200 ms abandon grace,
// so failover's two retries, sent straight back to the provider (the
// answer said nothing failover acts on), were read before the go-away
// and started the method twice more during the shutdown, each abandoned
// at once: "failed after 3 attempts on [A (3 times)]", the method run 3
// times, the AbandonedError counting 1.
func TestAEShutdownAbandonsAnIdempotentCallOnceOnItsOnlyProvider(t *testing.T) {
	svc := newAESlow("a", false)
	p, e := aeExport(t, svc, 500*time.Millisecond, "")
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/ae.S?timeout=10s&idempotent=true&retries=2")
	done := make(chan error, 1)
	go func() {
		var s string
		done <- r.Call(ctxT(t), "Slow", []any{8000}, &s)
	}()
	aeWait(t, svc, "the call")
	start := time.Now()
	serr := p.Shutdown(ctxT(t))
	var err error
	select {
	case err = <-done:
	case <-time.After(8 * time.Second):
		t.Fatal("the call did not end within 8s of the provider's shutdown")
	}
	took := time.Since(start)
	var ab *AbandonedError
	if !errors.As(serr, &ab) || ab.Calls != 1 {
		t.Errorf("Shutdown = %v; want an AbandonedError counting the one call", serr)
	}
	if n := svc.started.Load(); n != 1 {
		t.Errorf("the method started %d times; want once: the retries must not run on a provider past its shutdown timeout", n)
	}
	if spi.StatusOf(err) != spi.StatusServerError || !strings.Contains(err.Error(), "the call was abandoned") {
		t.Fatalf("call = %v; want SERVER_ERROR ... the call was abandoned", err)
	}
	if !errors.Is(err, spi.ErrProviderShutdown) {
		t.Errorf("call = %v; want spi.ErrProviderShutdown in its chain", err)
	}
	if strings.Contains(err.Error(), "attempts") {
		t.Errorf("call = %v; want one attempt: failover must not ask a provider that said it is shutting down again", err)
	}
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
}

// With a second provider, the call the first one abandoned at its
// shutdown timeout is retried on the other, once, and succeeds; the
// first starts it once.
func TestAEShutdownAbandonedIdempotentCallIsRetriedOnTheOtherProvider(t *testing.T) {
	a, b := newAESlow("a", false), newAESlow("b", true)
	pa, ea := aeExport(t, a, 500*time.Millisecond, "")
	_, eb := aeExport(t, b, 10*time.Second, "")
	r := refer(t, consumer(t), "airnode://"+ea.URL().Address()+","+eb.URL().Address()+"/ae.S?timeout=10s&idempotent=true&retries=2")
	// Both connected first: under load a's connection came up after 50 calls
	// had all gone to b.
	eventually(t, "both providers connected", func() bool { return len(r.Providers()) == 2 })
	// Call until one lands on a (the balancer is random): b answers at once.
	var done chan error
	var got string
	for i := 0; ; i++ {
		if i == 50 {
			t.Fatal("50 calls, none went to the first provider")
		}
		done = make(chan error, 1)
		got = ""
		go func() { done <- r.Call(ctxT(t), "Slow", []any{8000}, &got) }()
		select {
		case <-a.start:
		case err := <-done:
			if err != nil {
				t.Fatalf("call on b: %v", err)
			}
			continue
		case <-time.After(5 * time.Second):
			t.Fatal("a call neither started on the first provider nor ended")
		}
		break
	}
	bBefore := b.started.Load()
	if err := pa.Shutdown(ctxT(t)); err == nil {
		t.Errorf("Shutdown = nil; want its call abandoned")
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(8 * time.Second):
		t.Fatal("the call did not end within 8s of the provider's shutdown")
	}
	if err != nil || got != "b" {
		t.Fatalf("call = %q, %v; want b's answer, the retry on the other provider", got, err)
	}
	if n := a.started.Load(); n != 1 {
		t.Errorf("the first provider started the method %d times; want once", n)
	}
	if n := b.started.Load() - bBefore; n != 1 {
		t.Errorf("the other provider started the retry %d times; want once", n)
	}
}

// A request the provider reads after its go-away never starts the method,
// also when its shutdown timeout passed with a call running: the
// go-away goes out before that call is abandoned, so its abandoned
// answer comes after the go-away, and a request sent on that answer (a
// failover's retry) is answered as not run. A raw consumer sees the
// frames' order. Before, the abandoned answer came first and the
// go-away 200 ms after it: the request sent on the answer started the
// method again and was abandoned too.
func TestAEShutdownRunsNoRequestReadAfterItsGoAway(t *testing.T) {
	svc := newAESlow("a", false)
	p, e := aeExport(t, svc, 500*time.Millisecond, "?transport=tcp")
	c := dialRawClient(t, e.URL().Address(), "tcp").(net.Conn) // closed at the test's end
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	var wmu sync.Mutex
	write := func(b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		_, err := c.Write(b)
		return err
	}
	slow := func(id uint64) error { // Slow(8000), json codec (2)
		body := append(protocol.AppendRequestPreamble(nil, "ae.S", "Slow", 10_000, nil, 1), "8000\n"...)
		return write(append(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 2, ID: id, Length: uint32(len(body))}.Append(nil), body...))
	}
	if err := write(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: 1}.Append(nil)); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		order   []string // "go-away", "answer N"
		answers = map[uint64]abdAnswer{}
	)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		abdReadFrames(c, func(h protocol.Header, b []byte) {
			if h.IsEvent() && h.IsRequest() && len(b) > 0 && b[0] == 'G' {
				mu.Lock()
				order = append(order, "go-away")
				mu.Unlock()
				return
			}
			if h.IsEvent() || h.IsRequest() {
				return // the ping's answer, read-only, the provider's pings
			}
			mu.Lock()
			answers[h.ID] = abdAnswerOf(h, b)
			order = append(order, fmt.Sprint("answer ", h.ID))
			mu.Unlock()
			if h.ID == 2 {
				_ = slow(3) // the retry, sent on the abandoned answer
			}
		})
	}()
	if err := slow(2); err != nil {
		t.Fatal(err)
	}
	aeWait(t, svc, "the first request")
	serr := p.Shutdown(ctxT(t))
	select {
	case <-readerDone:
	case <-time.After(8 * time.Second):
		t.Fatal("the provider did not close the connection within 8s of its shutdown")
	}
	var ab *AbandonedError
	if !errors.As(serr, &ab) || ab.Calls != 1 {
		t.Errorf("Shutdown = %v; want an AbandonedError counting the one call", serr)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := svc.started.Load(); n != 1 {
		t.Errorf("the method started %d times; want once (frames read: %v; answers %v)", n, order, answers)
	}
	if a := answers[2]; a.status != spi.StatusServerError || !strings.Contains(a.msg, "the call was abandoned") {
		t.Errorf("request 2 answered %v %q; want SERVER_ERROR ... the call was abandoned", a.status, a.msg)
	}
	if len(order) == 0 || order[0] != "go-away" {
		t.Errorf("frames read %v; want the go-away before the abandoned call's answer", order)
	}
	if a, ok := answers[3]; ok && !strings.Contains(a.msg, "did not run the request (after its go-away)") {
		t.Errorf("request 3, read after the go-away, answered %v %q; want not run", a.status, a.msg)
	}
	t.Logf("frames read %v; answers %v; shutdown: %v", order, answers, serr)
}
