package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/airnode/airnode/spi"
)

// inventory serves Reserve2 but no Reserve: a downstream call of Reserve
// is answered SERVICE_NOT_FOUND.
type inventory struct{}

func (inventory) Reserve2(ctx context.Context, item string) (string, error) { return item, nil }

// orders is a mid-tier service: Place has a side effect (hits), then calls
// inventory through its own reference and returns that call's error as it
// is, as Go code does.
type orders struct {
	hits *atomic.Int64
	inv  *Reference
}

func (o orders) Place(ctx context.Context, item string) (string, error) {
	o.hits.Add(1)
	var out string
	if err := o.inv.Call(ctx, "Reserve", []any{item}, &out); err != nil {
		return "", err
	}
	return out, nil
}

// Own returns a status of its own choosing.
func (o orders) Own(ctx context.Context, status int) error {
	o.hits.Add(1)
	return spi.Errorf(spi.Status(status), "my own %s", spi.Status(status))
}

// Wrapped returns a downstream error wrapped with context.
func (o orders) Wrapped(ctx context.Context) error {
	o.hits.Add(1)
	return fmt.Errorf("reserve: %w", spi.Errorf(spi.StatusServiceNotFound, "no provider available for t.Inventory"))
}

// The tester's chain (tester10 finding 1): three Orders providers, one
// Inventory, default cluster=failover, Place not idempotent. Place returns
// Inventory's SERVICE_NOT_FOUND; it must run once, and its consumer is told
// SERVICE_ERROR naming the method and the downstream status.
func TestMethodReturningDidNotRunStatusIsNotRetried(t *testing.T) {
	ctx := ctxT(t)
	invNode := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = invNode.Close() })
	ie, err := invNode.Export(ctx, inventory{}, spi.MustParse("airnode://127.0.0.1:0/t.Inventory"))
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	var addrs []string
	for range 3 {
		n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
		t.Cleanup(func() { _ = n.Close() })
		inv := refer(t, n, "airnode://"+ie.URL().Address()+"/t.Inventory?timeout=2s")
		e, err := n.Export(ctx, orders{hits: &hits, inv: inv}, spi.MustParse("airnode://127.0.0.1:0/t.Orders"))
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, e.URL().Address())
	}
	c := consumer(t)
	r := refer(t, c, "airnode://"+strings.Join(addrs, ",")+"/t.Orders?timeout=2s")

	check := func(what string, wantRuns int64, call func() error, wantStatus spi.Status, wantText ...string) {
		t.Helper()
		hits.Store(0)
		err := call()
		if got := hits.Load(); got != wantRuns {
			t.Errorf("%s: ran %d times, want %d (err %v)", what, got, wantRuns, err)
		}
		if spi.StatusOf(err) != wantStatus {
			t.Errorf("%s: %v, want %s", what, err, wantStatus)
		}
		for _, s := range wantText {
			if err == nil || !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %v, want it to contain %q", what, err, s)
			}
		}
	}
	check("Place, Inventory without Reserve", 1, func() error {
		var out string
		return r.Call(ctx, "Place", []any{"book"}, &out)
	}, spi.StatusServiceError, `t.Orders.Place returned SERVICE_NOT_FOUND: service "t.Inventory" has no method "Reserve"`)
	for _, st := range []spi.Status{spi.StatusServiceNotFound, spi.StatusServerThreadpoolExhausted,
		spi.StatusClientTimeout, spi.StatusClientError, spi.StatusChannelInactive} {
		check("Own "+st.String(), 1, func() error {
			_, err := r.Invoke(ctx, "Own", int(st))
			return err
		}, spi.StatusServiceError, "t.Orders.Own returned "+st.String()+": my own "+st.String())
	}
	// Statuses that do not say "did not run" reach the consumer unchanged.
	for _, st := range []spi.Status{spi.StatusServiceError, spi.StatusServerError, spi.StatusBadRequest,
		spi.StatusBadResponse, spi.StatusSerializationError} {
		check("Own "+st.String(), 1, func() error {
			_, err := r.Invoke(ctx, "Own", int(st))
			return err
		}, st, st.String()+": my own "+st.String())
	}
	check("Wrapped", 1, func() error {
		_, err := r.Invoke(ctx, "Wrapped")
		return err
	}, spi.StatusServiceError, "t.Orders.Wrapped returned reserve: SERVICE_NOT_FOUND: no provider available")

	// Inventory gone: the downstream call fails (connection refused or
	// closed, whatever it says), Place still runs once.
	if err := invNode.Close(); err != nil {
		t.Fatal(err)
	}
	check("Place, Inventory shut down", 1, func() error {
		var out string
		return r.Call(ctx, "Place", []any{"book"}, &out)
	}, spi.StatusServiceError, "t.Orders.Place returned ")
}

func TestServiceErrorMapsDidNotRunStatuses(t *testing.T) {
	cause := spi.Errorf(spi.StatusClientTimeout, "exchange: call t.Inventory.Reserve timed out")
	err := spi.MethodError("t.Orders", "Place", cause)
	var se *spi.Error
	if !errors.As(err, &se) || se.Status != spi.StatusServiceError || se.Cause != cause ||
		se.Message != "t.Orders.Place returned CLIENT_TIMEOUT: exchange: call t.Inventory.Reserve timed out" {
		t.Fatalf("serviceError = %#v", err)
	}
	if err := spi.MethodError("t.Orders", "Place", &spi.Error{Status: 99}); spi.StatusOf(err) != spi.StatusServiceError ||
		err.Error() != "SERVICE_ERROR: t.Orders.Place returned STATUS_99" {
		t.Fatalf("undefined status: %v", err)
	}
	timeout := spi.Errorf(spi.StatusServerTimeout, "downstream timed out")
	if err := spi.MethodError("t.Orders", "Place", timeout); err != timeout {
		t.Fatalf("SERVER_TIMEOUT: %v", err)
	}
	plain := errors.New("out of stock")
	if err := spi.MethodError("t.Orders", "Place", plain); err.Error() != "SERVICE_ERROR: out of stock" || !errors.Is(err, plain) {
		t.Fatalf("plain error: %v", err)
	}
}

// recvShapes has a value method and a pointer-receiver one (tester10 finding 9).
type recvShapes struct{}

func (recvShapes) Value(ctx context.Context) (string, error)    { return "v", nil }
func (*recvShapes) PtrRecv(ctx context.Context) (string, error) { return "p", nil }
func (*recvShapes) PtrErr(ctx context.Context) error            { return nil }
func (*recvShapes) Helper() int                                 { return 0 } // not servable: never named

// onlyPtr has servable methods on its pointer type only.
type onlyPtr struct{}

func (*onlyPtr) Get(ctx context.Context) (string, error) { return "", nil }

// level is not a struct.
type level int

func (*level) Set(ctx context.Context, v int) error { return nil }

func TestExportOfAValueNamesItsPointerReceiverMethods(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.Export(ctxT(t), recvShapes{}, spi.MustParse("airnode://127.0.0.1:0/t.Shapes"))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := logs.String()
	mu.Unlock()
	want := "export t.Shapes: methods PtrErr, PtrRecv have pointer receivers: export &kernel.recvShapes{} (a *kernel.recvShapes) to serve them"
	if !strings.Contains(got, want) {
		t.Fatalf("log does not say %q:\n%s", want, got)
	}
	if strings.Contains(got, "Helper") {
		t.Fatalf("log names a method of no servable shape:\n%s", got)
	}
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/t.Shapes")
	if v, err := r.Invoke(ctxT(t), "Value"); err != nil || v != "v" {
		t.Fatalf("Value = %v, %v", v, err)
	}
	_, err = r.Invoke(ctxT(t), "PtrRecv")
	if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), "pointer receiver") {
		t.Fatalf("PtrRecv = %v", err)
	}
	// Exported as a pointer, every method is served and nothing is said.
	if names, err := MethodNames(&recvShapes{}); err != nil || strings.Join(names, ",") != "PtrErr,PtrRecv,Value" {
		t.Fatalf("MethodNames(&recvShapes{}) = %v, %v", names, err)
	}
	if mt, _ := newMethodTable(&recvShapes{}); mt.pointerHint() != "" {
		t.Fatalf("pointer export hints %q", mt.pointerHint())
	}
}

func TestExportRefusesPointerOnlyValuesAndTypedNil(t *testing.T) {
	_, err := MethodNames(onlyPtr{})
	if err == nil || !strings.Contains(err.Error(), "(hint: method Get has a pointer receiver: export &kernel.onlyPtr{} (a *kernel.onlyPtr) to serve it)") {
		t.Fatalf("onlyPtr{} = %v", err)
	}
	_, err = MethodNames(level(0))
	if err == nil || !strings.Contains(err.Error(), "export a *kernel.level to serve it") {
		t.Fatalf("level(0) = %v", err)
	}
	_, err = MethodNames((*recvShapes)(nil))
	if err == nil || err.Error() != "kernel: export: nil *kernel.recvShapes: a typed nil pointer has no value to serve; export a pointer to a value, such as &kernel.recvShapes{}" {
		t.Fatalf("(*recvShapes)(nil) = %v", err)
	}
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	if _, err := n.Export(ctxT(t), (*recvShapes)(nil), spi.MustParse("airnode://127.0.0.1:0/t.Shapes")); err == nil {
		t.Fatal("Export of a typed nil pointer accepted")
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
