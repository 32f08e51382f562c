package kernel

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// Tester61 finding 11a: a Register left running because Export's ctx was
// cancelled (a stop was asked for: serve's SIGTERM during startup) is
// logged at Info and says the stop was asked for; only a ctx past its
// deadline logs the step at Warn (TestExportRegisterThatSucceedsLateIsUndone).
// The late Register's undo is at Info too.
func TestF17_ExportCancelledLeavesRegisterAtInfo(t *testing.T) {
	gate := make(chan struct{})
	reg := &faultRegistry{name: "cancelreg", gate: gate, register: block}
	cat := testCatalogs(t)
	n, logs := faultNode(t, cat, withFaultRegistry(t, cat, reg))
	stop := errors.New("terminated signal received")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(200*time.Millisecond, func() { cancel(stop) })
	_, err := n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	var left *LeftRunningError
	if !errors.As(err, &left) || !left.Cancelled {
		t.Fatalf("Export: %v; want a *LeftRunningError with Cancelled", err)
	}
	// the listener the Export opened, with nothing exported on it, is
	// closed (fix-bo), and the error matches the ctx's error and cause
	const want = `kernel: export demo.Echo: registry "cancelreg" Register of demo.Echo not waited for: ctx cancelled, a stop was asked for; it may still finish later; the listener it opened on 127.0.0.1:`
	if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), " is closed: nothing is exported on it") {
		t.Errorf("error %q, want %q...", err, want)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, stop) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v: want it to match context.Canceled and the cause, not DeadlineExceeded", err)
	}
	recs := logs.find(`kernel: export demo.Echo: registry "cancelreg"`)
	if len(recs) != 1 || recs[0].level != slog.LevelInfo || recs[0].attrs["cause"] != stop.Error() {
		t.Errorf("records %+v; want one at Info with cause %q", recs, stop)
	}
	for _, r := range logs.find("kernel: ") {
		if r.level >= slog.LevelWarn && strings.Contains(r.msg, "may still finish later") {
			t.Errorf("a record at %v after a cancelled Export: %q", r.level, r.msg)
		}
	}

	close(gate) // the Register goes on, succeeds, and is undone
	deadline := time.Now().Add(5 * time.Second)
	for len(logs.find("kernel: undoing a step")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("5s after the late Register returned, no undo logged")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if u := logs.find("kernel: undoing a step"); u[0].level != slog.LevelInfo {
		t.Errorf("undo logged at %v, want Info after a cancelled Export", u[0].level)
	}
}
