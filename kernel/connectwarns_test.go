package kernel

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A reference's first 3 failing providers keep their lines; the others
// are summed up connectWarnsWait after the first left out, the next
// summary no sooner than connectWarnsEvery after it, and close writes
// the pending one at once, after which every line is logged.
func TestConnectWarns_ThreeNamedThenSummaries(t *testing.T) {
	var out syncBuffer
	w := newConnectWarns(slog.New(slog.NewTextHandler(&out, nil)), "demo.Echo")
	addr := func(i int) string { return "10.0.0.1:" + strconv.Itoa(20000+i) }
	allowed := 0
	for i := range 50 {
		if w.allow(addr(i)) {
			allowed++
		}
	}
	if allowed != 3 || !w.allow(addr(1)) || w.allow(addr(3)) {
		t.Fatalf("allowed %d of 50 first lines (want 3), then addr 1 (named) and addr 3 (left out) gave the wrong answers", allowed)
	}
	const text = `msg="... and 47 more providers could not be connected (their lines left out): see airnode stats or the metrics (airnode_consumer_connect_failures_total)" service=demo.Echo more_providers=47 example=`
	if !waitFor(5*time.Second, func() bool { return strings.Contains(out.String(), text) }) {
		t.Fatalf("no first summary within 5s:\n%s", out.String())
	}
	first := time.Now()
	// a later wave: its summary waits for connectWarnsEvery after the first
	for i := 10; i < 20; i++ {
		w.allow(addr(i))
	}
	time.Sleep(connectWarnsWait + 500*time.Millisecond)
	if n := strings.Count(out.String(), "more providers could not be connected"); n != 1 {
		t.Fatalf("%d summaries %v after the first; want it alone until %v after it:\n%s", n, time.Since(first), connectWarnsEvery, out.String())
	}
	w.close()
	if !strings.Contains(out.String(), "... and 10 more providers could not be connected") {
		t.Fatalf("close wrote no pending summary:\n%s", out.String())
	}
	if !w.allow(addr(30)) {
		t.Fatal("after close a line was left out; want every line logged")
	}
	w.close() // idempotent
	if n := strings.Count(out.String(), "more providers could not be connected"); n != 2 {
		t.Fatalf("%d summaries; want 2:\n%s", n, out.String())
	}
	var nilWarns *connectWarns
	if !nilWarns.allow("x:1") {
		t.Fatal("a nil connectWarns left a line out")
	}
	nilWarns.close()
}
