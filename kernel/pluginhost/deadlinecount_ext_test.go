package pluginhost_test

import (
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// fix-aj #2: the provider's warning that a filter plugin did not answer
// calls within their deadline counts every such call. 400 calls whose
// deadline passes in a frozen provider filter plugin (SIGSTOP) gave one
// warning with calls=1 and the other 399 were never reported (they waited
// for a call after the next DeadlineLogInterval); now the first warning
// says it is the first, and the rest are reported when the interval ends:
// the warnings' calls add up to 400.
func TestFilterPluginDeadlineWarningsCountEveryCall(t *testing.T) {
	logs := new(logbuf.Buffer)
	logger := slog.New(slog.NewTextHandler(logs, nil))
	h, cat, err := startHostLogging(t, logger, config.Plugin{Name: "acme.slow", Point: pluginrpc.PointFilter, Command: binary("chainfilter")})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := cat.Filter.Get("acme.slow")
	if err != nil {
		t.Fatal(err)
	}
	f, err := fb.Build(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?side=provider"))
	if err != nil {
		t.Fatal(err)
	}
	next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?side=provider"),
		func(_ context.Context, inv *spi.Invocation) spi.Result { return spi.Result{Value: inv.Args[0]} })
	call := func(d time.Duration) spi.Result {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return f.Invoke(ctx, next, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"x"}})
	}
	if r := call(10 * time.Second); r.Err != nil {
		t.Fatal(r.Err)
	}
	pid := info(t, h, "acme.slow").PID
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	waitFor(t, 10*time.Second, func() bool { return procState(pid) == "T" }, "the plugin process stopped")

	const calls = 400
	var wg sync.WaitGroup
	work := make(chan struct{}, calls)
	for range calls {
		work <- struct{}{}
	}
	close(work)
	var mu sync.Mutex
	timedOut := 0
	for range 40 {
		wg.Go(func() {
			for range work {
				if spi.StatusOf(call(300*time.Millisecond).Err) == spi.StatusServerTimeout {
					mu.Lock()
					timedOut++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if timedOut != calls {
		t.Fatalf("%d of %d calls of the frozen filter plugin failed SERVER_TIMEOUT", timedOut, calls)
	}
	const warning = "plugin did not answer calls within their deadline"
	countRe := regexp.MustCompile(`calls=(\d+)`)
	sum := func() (n int, lines []string) {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, warning) {
				lines = append(lines, l)
				if m := countRe.FindStringSubmatch(l); m != nil {
					c, _ := strconv.Atoi(m[1])
					n += c
				}
			}
		}
		return n, lines
	}
	deadline := time.Now().Add(pluginhost.DeadlineLogInterval + 10*time.Second)
	for time.Now().Before(deadline) {
		if n, _ := sum(); n >= calls {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	n, lines := sum()
	if n != calls || len(lines) != 2 || !strings.Contains(lines[0], "calls=1 ") || !strings.Contains(lines[0], "the first of them") || !strings.Contains(lines[1], "calls=399 ") {
		t.Fatalf("the deadline warnings count %d calls, want %d (calls=1 saying it is the first, then calls=399):\n%s", n, calls, strings.Join(lines, "\n"))
	}
}
