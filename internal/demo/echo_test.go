package demo

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

func TestEcho(t *testing.T) {
	e := New("n1", 50)
	ctx := context.Background()
	if v, err := e.Echo(ctx, "hello"); err != nil || v != "hello" {
		t.Fatalf("Echo = %v, %v", v, err)
	}
	if v, err := e.Sleep(ctx, 5); err != nil || v != 5 {
		t.Fatalf("Sleep = %v, %v", v, err)
	}
	if b, err := e.Payload(ctx, 30); err != nil || len(b) != 30 || b[26] != 'a' {
		t.Fatalf("Payload = %q, %v", b, err)
	}
	if _, err := e.Payload(ctx, -1); err == nil {
		t.Fatal("Payload(-1) succeeded")
	}
	if err := e.Fail(ctx, "boom"); err == nil || err.Error() != "boom" {
		t.Fatalf("Fail = %v", err)
	}
	info, err := e.Info(ctx)
	if err != nil || info.Node != "n1" || info.Weight != 50 || info.PID != os.Getpid() || info.Started.IsZero() {
		t.Fatalf("Info = %+v, %v", info, err)
	}
}

func TestSleepHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := New("n", 100).Sleep(ctx, 10_000)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("Sleep = %v after %v", err, time.Since(start))
	}
}

// Tester's bug 5: a huge Payload is refused with BAD_REQUEST before it
// allocates, at MaxPayload or at the provider's payload limit.
func TestPayloadBounded(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		e *Echo
		n int
	}{
		{New("n", 1), 1 << 30},
		{New("n", 1), MaxPayload + 1},
		{New("n", 1).LimitPayload(1 << 20), 1<<20 - ResponseFraming + 1},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := tc.e.Payload(ctx, tc.n)
		runtime.ReadMemStats(&after)
		if spi.StatusOf(err) != spi.StatusBadRequest {
			t.Errorf("Payload(%d) = %v, want BAD_REQUEST", tc.n, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("Payload(%d) allocated %d bytes before failing", tc.n, grew)
		}
	}
	if b, err := New("n", 1).LimitPayload(1<<20).Payload(ctx, 1<<20-ResponseFraming); err != nil || len(b) != 1<<20-ResponseFraming {
		t.Fatalf("Payload at the limit = %d bytes, %v", len(b), err)
	}
}

// Tester17 finding 3: Sleep is bounded by MaxSleep whatever the
// consumer's deadline (0: none): over it is BAD_REQUEST at once.
func TestDemoSleepCapped(t *testing.T) {
	e := New("n", 1)
	for _, ms := range []int{-1, int(MaxSleep/time.Millisecond) + 1, 600_000} {
		start := time.Now()
		_, err := e.Sleep(context.Background(), ms)
		if !errors.Is(err, spi.ErrBadRequest) || !strings.Contains(err.Error(), "want 0 to 60000 ms") {
			t.Errorf("Sleep(%d) = %v; want BAD_REQUEST naming the bound", ms, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Sleep(%d) waited %v before refusing", ms, d)
		}
	}
}
