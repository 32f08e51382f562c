package pluginrpc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

// A panic recovered in a plugin's balancer, registry or filter becomes a
// SERVER_ERROR without the goroutine stack, which goes to the plugin's
// log (hclog's default logger) instead.
func TestRecoveredPanicLogsTheStackAndSendsNone(t *testing.T) {
	var log bytes.Buffer
	prev := hclog.Default()
	hclog.SetDefault(hclog.New(&hclog.LoggerOptions{Output: &log, Level: hclog.Error}))
	defer hclog.SetDefault(prev)

	var e *pb.Error
	func() {
		defer func() { e = recovered("filter Invoke", recover()) }()
		panic("kaboom")
	}()
	out := fromPB(e)
	if spi.StatusOf(out) != spi.StatusServerError || out.Error() != "SERVER_ERROR: panic in plugin filter Invoke: kaboom" {
		t.Fatalf("recovered: %v", out)
	}
	if !strings.Contains(log.String(), "runtime/debug.Stack") || !strings.Contains(log.String(), "kaboom") {
		t.Fatalf("the plugin's log has no stack:\n%s", log.String())
	}
}

// tester73 #3: a plugin that panics on every call logged a full stack per
// call (7 MB in 2 s); the lines are bounded per class as ratelog bounds
// repeated lines: the first with its stack, then counts with suppressed,
// without the stack.
func TestRecoveredPanicsAreRateBounded(t *testing.T) {
	var log bytes.Buffer
	l := hclog.New(&hclog.LoggerOptions{Output: &log, Level: hclog.Error})
	const n = 3000
	for range n {
		func() {
			defer func() {
				r := recover()
				LogPanic(l, "loadbalance Select (TestRecoveredPanicsAreRateBounded)", "panic in plugin code", "panic", r)
			}()
			panic("kaboom")
		}()
	}
	var lines []string // one per record: hclog writes a stack on lines of its own
	for _, line := range strings.Split(log.String(), "\n") {
		switch {
		case strings.Contains(line, "[ERROR]"):
			lines = append(lines, line)
		case len(lines) > 0:
			lines[len(lines)-1] += "\n" + line
		}
	}
	// 1, 2, 4 ... 1024: 11 lines, and no more within 10 s
	if len(lines) != 11 {
		t.Fatalf("%d panics logged %d lines, want 11 (1, 2, 4 ... 1024):\n%s", n, len(lines), log.String())
	}
	if !strings.Contains(lines[0], "stack=") || !strings.Contains(lines[0], "runtime/debug.Stack") {
		t.Fatalf("the first line has no stack: %s", lines[0])
	}
	for _, line := range lines[1:] {
		if strings.Contains(line, "stack=") || !strings.Contains(line, "suppressed=") || !strings.Contains(line, "in_burst=") {
			t.Fatalf("a later line has a stack or no counts: %s", line)
		}
	}
	if !strings.Contains(lines[10], "suppressed=511 in_burst=1024") {
		t.Fatalf("the last line: %s", lines[10])
	}
}
