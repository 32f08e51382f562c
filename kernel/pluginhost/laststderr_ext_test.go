package pluginhost_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// tester73 #6: the warning that a plugin exited quotes its last stderr
// lines, each separate, but not the ordinary INFO records of its own
// logger, which read like the reason it exited
// (last_stderr="[auth Build provider invoke]").
func TestExitQuotesStderrLinesNotInfoRecords(t *testing.T) {
	h, logs, inv := startChatty(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pid := info(t, h, "chatty").PID
	for _, c := range []struct{ method, arg string }{{"Say", "first"}, {"Note", "auth Build"}, {"Note", "provider invoke"}} {
		if res := inv.Invoke(ctx, &spi.Invocation{Service: "acme.Chatty", Method: c.method, Args: []any{c.arg}}); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if res := inv.Invoke(ctx, &spi.Invocation{Service: "acme.Chatty", Method: "Die", Args: []any{"config missing"}}); res.Err == nil {
		t.Fatal("Die returned")
	}
	const want = `last_stderr="err: first\nFATAL: config missing"`
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "last_stderr="); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no exit warning with last_stderr:\n%s", logs.String())
		}
	}
	if out := logs.String(); !strings.Contains(out, want) {
		t.Fatalf("the exit warning lacks %s:\n%s", want, out)
	}
	waitRunning(t, h, "chatty", pid)
}
