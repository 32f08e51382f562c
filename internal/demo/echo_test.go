package demo

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
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
