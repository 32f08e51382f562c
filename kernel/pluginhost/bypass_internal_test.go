package pluginhost

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/sdk/pluginrpc"
)

// The slow-Select warning is rate-limited: one line per SlowLogInterval.
func TestSlowWarnerIsRateLimited(t *testing.T) {
	var buf logbuf.Buffer
	warn := slowWarner(slog.New(slog.NewTextHandler(&buf, nil)))
	for range 5 {
		warn(150*time.Millisecond, time.Second)
	}
	out := buf.String()
	if n := strings.Count(out, "plugin balancer is slow"); n != 1 || !strings.Contains(out, "took=150ms") || !strings.Contains(out, "timeout=1s") {
		t.Fatalf("want one warning with took and timeout:\n%s", out)
	}
}

// A bypass is one warning naming the round trip, the time and the bypass;
// recovery one warning too, at the level of the one it ends.
func TestWarnBypassNamesTheRoundTrip(t *testing.T) {
	var buf logbuf.Buffer
	p := &proc{log: slog.New(slog.NewTextHandler(&buf, nil)).With("plugin", "acme.p2c")}
	p.warnBypass(pluginrpc.Bypass{Point: "Select", Took: 201 * time.Millisecond, Bound: 200 * time.Millisecond, For: time.Second})
	p.warnBypass(pluginrpc.Bypass{Point: "Select", Recovered: true})
	out := buf.String()
	for _, want := range []string{"level=WARN", "plugin=acme.p2c", "call=Select", "took=201ms", "bound=200ms", "bypass=1s", "answers again"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "level=WARN"); n != 2 {
		t.Errorf("%d warnings, want 2 (the bypass and its end):\n%s", n, out)
	}
}
