package warmup_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

const (
	minute = int64(60_000)
	day    = 24 * 60 * minute
	ten    = 10 * minute
)

func TestEffective(t *testing.T) {
	cases := []struct {
		name                   string
		weight, warmup, uptime int64
		want                   int64
	}{
		{"1 min of 10", 100, ten, minute, 10},
		{"5 min of 10", 100, ten, 5 * minute, 50},
		{"just started", 100, ten, 0, 1},
		{"floor", 100, ten, minute + 5999, 10},
		{"never below 1", 3, ten, 1, 1},
		{"warm", 100, ten, ten, 100},
		{"30 days", 100, ten, 30 * day, 100},
		{"50 days", 100, ten, 50 * day, 100},
		{"2^32 ms + 5 min", 100, ten, 1<<32 + 5*minute, 100},
		{"max uptime", 100, ten, math.MaxInt64, 100},
		{"clock ahead", 100, ten, -5 * minute, 1},
		{"far ahead", 100, ten, math.MinInt64, 1},
		{"weight 0", 0, ten, minute, 0},
		{"weight 0 warm", 0, ten, 30 * day, 0},
		{"negative weight", -3, ten, minute, 0},
		{"warm-up disabled", 100, 0, 0, 100},
		{"warm-up disabled, clock ahead", 100, 0, -minute, 100},
		{"no overflow", math.MaxInt64, math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 1},
		{"no overflow, big product", 1 << 40, 3 * day, day, 1 << 40 / 3},
		{"no overflow, weight = warmup", math.MaxInt64, math.MaxInt64, math.MaxInt64 / 2, math.MaxInt64 / 2},
	}
	for _, c := range cases {
		if got := warmup.Effective(c.weight, c.warmup, c.uptime); got != c.want {
			t.Errorf("%s: Effective(%d, %d, %d) = %d, want %d", c.name, c.weight, c.warmup, c.uptime, got, c.want)
		}
	}
}

// clock is a settable clock for a Weigher.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// logBuf collects log lines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.TrimSpace(l.b.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func newWeigher(start time.Time) (*warmup.Weigher, *clock, *logBuf) {
	c := &clock{t: start}
	lb := &logBuf{}
	w := warmup.New(warmup.WithClock(c.now), warmup.WithLogger(slog.New(slog.NewTextHandler(lb, nil))))
	return w, c, lb
}

func provider(params string) spi.URL {
	return spi.MustParse("airnode://10.0.0.7:20880/demo.Echo?" + params)
}

func ms(t time.Time) string { return fmt.Sprint(t.UnixMilli()) }

var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// W1: provider started 2 min ago, consumer (its balancer) 1 h ago: weight
// 20, from the provider's timestamp, not the consumer's start.
func TestW1_UptimeFromProviderTimestamp(t *testing.T) {
	consumerStart := epoch.Add(-time.Hour)
	w, c, _ := newWeigher(consumerStart)
	c.add(time.Hour)
	u := provider("timestamp=" + ms(epoch.Add(-2*time.Minute)))
	if got := w.Weight(u, w.Now()); got != 20 {
		t.Fatalf("weight = %d, want 20", got)
	}
	// The default weight and warm-up (100, 10m) are what gave 20; explicit
	// values give the same.
	u = provider("weight=100&warmup=10m&timestamp=" + ms(epoch.Add(-2*time.Minute)))
	if got := w.Weight(u, w.Now()); got != 20 {
		t.Fatalf("weight = %d, want 20", got)
	}
}

// W2 (the merge step): the provider's timestamp, weight and warm-up survive
// spi.MergeURL with a consumer URL that has its own timestamp.
func TestW2_TimestampSurvivesMerge(t *testing.T) {
	w, _, _ := newWeigher(epoch)
	prov := provider("weight=100&warmup=600000&timestamp=" + ms(epoch.Add(-time.Minute)))
	cons := spi.MustParse("consumer://10.0.0.9/demo.Echo?timestamp=" + ms(epoch.Add(-time.Hour)) + "&weight=5&warmup=0&loadbalance=roundrobin")
	merged := spi.MergeURL(prov, cons)
	if got := w.Weight(merged, w.Now()); got != 10 {
		t.Fatalf("weight after merge = %d, want 10 (merged URL %s)", got, merged)
	}
}

// W3: provider clock 5 min ahead: weight 1 and one log line naming the skew
// (and the provider), however many picks; again after SkewLogInterval.
func TestW3_ClockSkew(t *testing.T) {
	w, c, logs := newWeigher(epoch)
	u := provider("timestamp=" + ms(epoch.Add(5*time.Minute)))
	for range 1000 {
		if got := w.Weight(u, w.Now()); got != 1 {
			t.Fatalf("weight = %d, want 1", got)
		}
	}
	lines := logs.lines()
	if len(lines) != 1 || !strings.Contains(lines[0], "skew=5m0s") || !strings.Contains(lines[0], "10.0.0.7:20880") {
		t.Fatalf("want one line naming the provider and skew=5m0s, got %q", lines)
	}
	c.add(warmup.SkewLogInterval)
	w.Weight(u, w.Now())
	w.Weight(u, w.Now())
	if lines = logs.lines(); len(lines) != 2 || !strings.Contains(lines[1], "skew=4m0s") {
		t.Fatalf("want a second line (skew=4m0s) after %v, got %q", warmup.SkewLogInterval, lines)
	}
}

// W3 across balancers: a consumer builds a Weigher per balancer, and two
// of them (one reference's) logged one skew twice 45 ms apart (tester65
// #7): Weighers sharing a logger write one line per provider.
func TestT65_ClockSkewOnceAcrossWeighers(t *testing.T) {
	c := &clock{t: epoch}
	lb := &logBuf{}
	l := slog.New(slog.NewTextHandler(lb, nil))
	u := provider("timestamp=" + ms(epoch.Add(5*time.Minute)))
	for range 3 {
		w := warmup.New(warmup.WithClock(c.now), warmup.WithLogger(l))
		if got := w.Weight(u, w.Now()); got != 1 {
			t.Fatalf("weight = %d, want 1", got)
		}
	}
	if lines := lb.lines(); len(lines) != 1 {
		t.Fatalf("three Weighers with one logger: want one skew line, got %q", lines)
	}
}

// W4: uptime 30 d, 50 d, 2^32 ms + 5 min: weight 100 (64-bit arithmetic;
// Dubbo's 32-bit uptime wraps after 24.8 days).
func TestW4_LongUptime(t *testing.T) {
	w, _, _ := newWeigher(epoch)
	for _, up := range []time.Duration{30 * 24 * time.Hour, 50 * 24 * time.Hour, (1<<32)*time.Millisecond + 5*time.Minute} {
		u := provider("timestamp=" + ms(epoch.Add(-up)))
		if got := w.Weight(u, w.Now()); got != 100 {
			t.Errorf("uptime %v: weight = %d, want 100", up, got)
		}
	}
}

func TestWeightKeys(t *testing.T) {
	w, _, logs := newWeigher(epoch)
	ts := "&timestamp=" + ms(epoch.Add(-time.Minute))
	cases := []struct {
		params string
		want   int64
	}{
		{"", 100},                                  // no timestamp: warm
		{"weight=7", 7},                            // no timestamp: warm
		{"weight=0" + ts, 0},                       // never picked
		{"weight=200&warmup=2m" + ts, 100},         // half-way
		{"warmup=120000" + ts, 50},                 // bare ms
		{"warmup=0" + ts, 100},                     // disabled
		{"weight=99999999999" + ts, 214748364},     // clamped to MaxWeight, then 1/10
		{"weight=abc" + ts, 10},                    // malformed: default 100
		{"weight=-5" + ts, 10},                     // malformed: default 100
		{"warmup=soon" + ts, 10},                   // malformed: default 10m
		{"warmup=-1m" + ts, 10},                    // malformed: default 10m
		{"timestamp=yesterday", 100},               // malformed: warm
		{"timestamp=0", 100},                       // malformed: warm
		{"timestamp=99999999999999999999999", 100}, // malformed: warm
	}
	for _, c := range cases {
		for range 3 { // logged once however often it is read
			if got := w.Weight(provider(c.params), w.Now()); got != c.want {
				t.Errorf("%s: weight = %d, want %d", c.params, got, c.want)
			}
		}
	}
	if n := len(logs.lines()); n != 7 {
		t.Errorf("want one log line per malformed value (7), got %d: %q", n, logs.lines())
	}
}

func TestWeightDoesNotAllocate(t *testing.T) {
	w, _, _ := newWeigher(epoch)
	u := provider("weight=100&warmup=10m&timestamp=" + ms(epoch.Add(-time.Minute)))
	if n := testing.AllocsPerRun(1000, func() { w.Weight(u, w.Now()) }); n != 0 {
		t.Fatalf("Weight allocates %v times per call", n)
	}
}

// A skewed provider is weighed without allocating once its warning is out.
func TestSkewedWeightDoesNotAllocate(t *testing.T) {
	w, _, _ := newWeigher(epoch)
	u := provider("timestamp=" + ms(epoch.Add(5*time.Minute)))
	w.Weight(u, w.Now())
	if n := testing.AllocsPerRun(1000, func() { w.Weight(u, w.Now()) }); n != 0 {
		t.Fatalf("Weight allocates %v times per call", n)
	}
}
