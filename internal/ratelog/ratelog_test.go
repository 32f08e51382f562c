package ratelog

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
)

// lines returns the lines of w that contain s.
func lines(w *logbuf.Buffer, s string) []string {
	var out []string
	for _, l := range strings.Split(w.String(), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

func newLogger() (*slog.Logger, *logbuf.Buffer) {
	w := &logbuf.Buffer{}
	return slog.New(slog.NewTextHandler(w, nil)), w
}

// tester18 N3: 25,254 bad connections in 5 s made 11 lines, the last
// "suppressed=511 in_burst=1024", and nothing told the rest. The summary
// is due Every after the last line and tells all of them; without it,
// the next burst's first line does.
func TestN3_LogLimiterSummary(t *testing.T) {
	const class, events = "protocol: bad magic #x#", 25_254
	now := time.Now()
	l := &Limiter{}
	lines, told := 0, int64(0)
	var last time.Time
	for i := range events {
		last = now.Add(time.Duration(i) * 5 * time.Second / events)
		if ok, sup, _ := l.Allow(class, last); ok {
			lines++
			told += sup
		}
	}
	b := l.bursts[class]
	if ok, _, _ := due(b, last.Add(time.Second)); ok {
		t.Error("summary due 1 s after the burst's last line")
	}
	ok, sup, n := due(b, now.Add(11*time.Second))
	if !ok || sup != events-1024 || n != events || told+sup+int64(lines) != events {
		t.Fatalf("summary at 11 s: due %v, suppressed %d, in_burst %d (lines %d told %d); want %d left out of %d",
			ok, sup, n, lines, told, events-1024, events)
	}
	if ok, _, _ := due(b, now.Add(30*time.Second)); ok {
		t.Error("a second summary with nothing left out since")
	}
	if b.summary != nil {
		t.Error("Allow scheduled a summary")
	}

	// without a summary, a new burst's first line says what was left out
	l = &Limiter{}
	for i := range 7 {
		l.Allow(class, now.Add(time.Duration(i)*time.Millisecond)) // 1, 2, 4 logged; 5, 6, 7 left out since
	}
	if ok, sup, n := l.Allow(class, now.Add(15*time.Second)); !ok || sup != 3 || n != 1 {
		t.Errorf("first line of the next burst: logged %v, suppressed %d, burst %d; want true, 3, 1", ok, sup, n)
	}
}

// The summary line itself: a line left out schedules it (one timer per
// class); it carries SummaryAttrs, the class's message and level, class,
// suppressed and in_burst.
func TestN3_SummaryLineWritten(t *testing.T) {
	base, logs := newLogger()
	l := &Limiter{Logger: base, SummaryAttrs: []any{"component", "exchange"}}
	const class = "protocol: bad magic #x#"
	now := time.Now()
	for i := range 7 { // 1, 2, 4 logged; 3 left out (told by 4), then 5, 6, 7
		l.Event(class, now.Add(time.Duration(i)*time.Millisecond), slog.LevelWarn, "channel closed")
	}
	l.mu.Lock()
	b := l.bursts[class]
	if b.summary == nil || !b.summary.Stop() {
		l.mu.Unlock()
		t.Fatal("no summary scheduled while lines were left out")
	}
	b.lastLine = b.lastLine.Add(-Every - time.Second) // as if Every had passed
	l.mu.Unlock()
	l.summarize(class)
	got := lines(logs, "summary=")
	if len(got) != 1 {
		t.Fatalf("%d summary lines, want 1: %q", len(got), got)
	}
	for _, want := range []string{"level=WARN", `msg="channel closed"`, "component=exchange", `class="` + class + `"`, "suppressed=3", "in_burst=7"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("summary %q lacks %q", got[0], want)
		}
	}
	if i, j := strings.Index(got[0], "component="), strings.Index(got[0], "summary="); i > j {
		t.Errorf("SummaryAttrs after the summary: %q", got[0])
	}
	l.summarize(class) // nothing more left out: no second line
	if n := len(lines(logs, "summary=")); n != 1 {
		t.Errorf("%d summary lines, want 1", n)
	}
	l.mu.Lock()
	if b.summary != nil {
		b.summary.Stop()
	}
	l.mu.Unlock()
}

// On the real clock: a burst that stops after lines were left out is
// summed up once, about Every after its last line, on slog.Default() when
// Logger is nil.
func TestDedupe3_SummaryOnTimer(t *testing.T) {
	base, logs := newLogger()
	old := slog.Default()
	slog.SetDefault(base)
	defer slog.SetDefault(old)
	l := &Limiter{}
	start := time.Now()
	logged := 0
	for range 5 { // 1, 2, 4 logged; 3 left out (told by 4), then 5
		if ok, _, _ := l.Event("stalled", time.Now(), slog.LevelInfo, "stopped reading"); ok {
			logged++
		}
	}
	if logged != 3 {
		t.Fatalf("%d of 5 events logged, want 3", logged)
	}
	deadline := time.Now().Add(Every + 5*time.Second)
	for len(lines(logs, "summary=")) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(start)
	got := lines(logs, "summary=")
	if len(got) != 1 {
		t.Fatalf("after %v: %d summary lines, want 1", took, len(got))
	}
	if took < Every-time.Second {
		t.Errorf("summary after %v, want about %v", took, Every)
	}
	for _, want := range []string{"level=INFO", `msg="stopped reading"`, "class=stalled", "suppressed=1", "in_burst=5"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("summary %q lacks %q", got[0], want)
		}
	}
	t.Logf("summary after %v: %s", took.Round(time.Millisecond), got[0])
}

func TestClass(t *testing.T) {
	for _, tc := range [][3]string{
		{"read tcp 127.0.0.1:40112->127.0.0.1:9: connection reset", "read tcp #.#.#.#:#->#.#.#.#:#: connection reset", "read tcp #.#.#.#:#->#.#.#.#:#: connection reset"},
		{"bad magic 0x00ff", "bad magic #x#ff", "bad magic #x#"},
		{"feed 1fab", "feed #fab", "feed #"},
	} {
		if got := Class(tc[0]); got != tc[1] {
			t.Errorf("Class(%q) = %q, want %q", tc[0], got, tc[1])
		}
		if got := HexClass(tc[0]); got != tc[2] {
			t.Errorf("HexClass(%q) = %q, want %q", tc[0], got, tc[2])
		}
	}
	if got := Class(strings.Repeat("x", 200)); len(got) != 80 {
		t.Errorf("Class of 200 bytes: %d bytes, want 80", len(got))
	}
}
