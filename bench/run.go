package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Caller makes one call for caller number worker (0 to Concurrency-1; a
// worker's calls never overlap, so per-worker state needs no lock). A
// non-nil error is a failed call, except ErrUncounted.
type Caller func(ctx context.Context, worker int) error

// ErrUncounted, returned by a Caller (or wrapped in its error), makes Run
// leave the call out of the report: not in Calls, errors, latency, the
// timeline or progress (a counted run still makes Calls counted calls
// unless ctx ends). It is for calls the end of the run cut short —
// `airnode bench` interrupted by SIGINT returns it for its calls in flight
// — not for failures a measured run should show.
var ErrUncounted = errors.New("bench: call not counted")

// Config describes one run. Exactly one of Calls and Duration is set.
type Config struct {
	// Calls is the number of measured calls (> 0), or 0 to run for Duration.
	Calls int64
	// Duration is how long the measured phase issues calls when Calls is 0.
	// Calls in flight when it ends still finish and count.
	Duration time.Duration
	// Concurrency is the number of callers, 1 to 1,000,000; with Rate,
	// the most callers (calls in flight at once) the run may start.
	Concurrency int
	// Rate, calls per second of all callers together (MinRate to
	// MaxRate), makes the run an open loop: call i is intended to start
	// i/Rate after the phase's start, whether or not the calls before it
	// have finished. A free caller takes it; when none is free a caller
	// is started for it, up to Concurrency; beyond that it waits for one
	// and starts late, and its latency counts from its intended time
	// (coordinated omission corrected, as wrk2's -R: a stall shows in the
	// percentiles as the calls' users would feel it); a call a free
	// caller took counts from when it was handed out (the dispatcher's
	// timer lag is not the service's latency). A duration run makes the
	// calls intended before Duration that start by then (OpenLoop.
	// NotStarted counts the others) and lasts Duration at least; a
	// counted run lasts Calls/Rate at least. The report then has an
	// OpenLoop. 0: a closed loop, each caller calling again as soon as
	// its call returns.
	Rate float64
	// Warmup is the number of unmeasured calls made first at the same
	// concurrency (with Rate: at the same rate); negative selects
	// DefaultWarmup (with Rate: none).
	Warmup int64
	// WarmupMax bounds the warm-up's wall time: callers stop starting
	// warm-up calls once it has passed (calls in flight finish). 0 selects
	// DefaultWarmupMax; negative is an error.
	WarmupMax time.Duration
	// Classify names the status of a failed call (e.g. "CLIENT_TIMEOUT");
	// nil uses "ERROR" for every failure.
	Classify func(error) string
	// Start, when set, is called once between the warm-up and the measured
	// phase (to snapshot counters).
	Start func()
	// Tick, when set, is called every TickEvery (default 200 ms) during the
	// measured phase from one goroutine, once more when Duration has
	// passed (a duration run: a sample at the start of the last, partial
	// second, whose calls are the ones in flight at the deadline), and
	// once more at its end.
	Tick      func(Progress)
	TickEvery time.Duration
}

// DefaultWarmup is the warm-up when Config.Warmup is negative:
// max(min(calls/10, 10,000), 2 × concurrency) calls (2,000 for duration
// runs), the rule /work/shared/bench/peers uses.
func DefaultWarmup(calls int64, concurrency int) int64 {
	w := int64(2000)
	if calls > 0 {
		w = min(calls/10, 10_000)
	}
	return max(w, 2*int64(concurrency))
}

// DefaultWarmupMax is the warm-up time bound when Config.WarmupMax is 0:
// a tenth of the duration for a duration run (so that the run's wall time
// stays close to its duration), 10 s for a counted run.
func DefaultWarmupMax(duration time.Duration) time.Duration {
	if duration > 0 {
		return duration / 10
	}
	return 10 * time.Second
}

// Progress is a snapshot of a running measured phase.
type Progress struct {
	Done    int64         // calls finished
	Errors  int64         // of which failed
	Total   int64         // Config.Calls (0 for a duration run)
	Elapsed time.Duration // since the measured phase began
	Planned time.Duration // Config.Duration (0 for a counted run)
	Final   bool          // the last tick: every caller has stopped
}

// Report is the outcome of a run: the JSON object `airnode bench --json`
// prints (Providers is filled by the caller).
type Report struct {
	Calls       int64            `json:"calls"`                            // finished calls, failed included
	OK          int64            `json:"ok"`                               // successful calls
	Errors      map[string]int64 `json:"errors"`                           // failed calls by status name; never nil
	Concurrency int              `json:"concurrency"`                      // callers
	Start       string           `json:"start"`                            // wall-clock start of the measured phase, RFC 3339 in UTC with ms (StartFormat): timeline second N begins N s after it
	ElapsedSec  float64          `json:"elapsed_sec"`                      // measured phase, wall time
	CallsPerSec float64          `json:"calls_per_sec"`                    // Calls / ElapsedSec
	FirstError  string           `json:"first_error,omitempty"`            // the first failed call's error message
	MeanUS      float64          `json:"mean_us"`                          // latency of successful calls, µs; 0 when none succeeded
	P50US       float64          `json:"p50_us"`                           //
	P99US       float64          `json:"p99_us"`                           //
	P999US      float64          `json:"p999_us"`                          //
	MaxUS       float64          `json:"max_us"`                           //
	CPUUS       float64          `json:"cpu_us_per_call"`                  // process user+system CPU per call, µs
	ServerCPUUS float64          `json:"server_cpu_us_per_call,omitempty"` // provider process CPU per call, µs, when known
	Providers   map[string]int64 `json:"providers"`                        // attempts per provider address (failover retries included); never nil
	Timeline    []Second         `json:"timeline"`                         // one entry per second of the measured phase, up to its end (empty seconds too)

	// CutShort counts the calls the end of the run cut short (ErrUncounted:
	// SIGINT or SIGTERM ended them in flight), which are in no other
	// count, latency included; CutShortOldestUS is the age of the oldest
	// of them when it was cut, µs, counted as a finished call's latency
	// is (0 when none): a stall the interrupt ended shows here.
	CutShort         int64   `json:"cut_short"`
	CutShortOldestUS float64 `json:"cut_short_oldest_us"`

	// ErrorSamples holds one failed call's error message per status of
	// Errors (at most 16 statuses); nil when none failed.
	ErrorSamples map[string]string `json:"error_samples,omitempty"`

	// OpenLoop is an open-loop run's rate and late starts (Config.Rate);
	// nil, and absent from the JSON, for a closed loop.
	*OpenLoop

	firstErr error // the first failed call's error (FirstErr)
}

// FirstErr returns the first failed call's error, whose text is
// FirstError, so that a caller can read its status and provider
// (errors.As to *spi.Error); nil when no call failed or r was decoded
// from JSON.
func (r *Report) FirstErr() error { return r.firstErr }

// StartFormat is the layout of Report.Start: RFC 3339, milliseconds,
// always in UTC ("Z").
const StartFormat = "2006-01-02T15:04:05.000Z07:00"

// Second is one timeline entry: the calls that finished during second
// Second (0-based) of the measured phase.
type Second struct {
	Second int              `json:"second"`
	Calls  int64            `json:"calls"`  // failed included
	Errors map[string]int64 `json:"errors"` // by status name; never nil
	// ProvidersPerSec is the rate at which each provider address was
	// sent attempts (calls, failover retries included) during this
	// second, calls/s to 0.1, leaving out providers sent none (`airnode
	// bench` counts an attempt when it is sent, not when it ends); filled by the
	// caller, as Report.Providers is (nil, and left out of the JSON, when
	// it does not). The run's last second is partial (a duration run's
	// holds only the calls in flight at the deadline): its entry has the
	// attempts each provider took in the part of the second the run
	// covered, not a rate extrapolated to a whole second, so that, as in
	// every entry, they add up to about Calls.
	ProvidersPerSec map[string]float64 `json:"providers_per_sec,omitempty"`
}

// Histogram bounds: 1 µs to 1 h in nanoseconds, 3 significant digits.
const (
	histLowest  = int64(time.Microsecond)
	histHighest = int64(time.Hour)
	histDigits  = 3
)

// shard is one lock's worth of recording state; callers spread over shards
// so that 10,000 callers do not serialise on one mutex.
type shard struct {
	mu       sync.Mutex
	hist     *hdrhistogram.Histogram
	errs     map[string]int64
	samples  map[string]string // the first message of each status this shard saw (at most maxSamples)
	timeline []Second
	_        [64]byte // keep neighbouring shards' locks on separate cache lines
}

// maxSamples bounds Report.ErrorSamples: the statuses a Classify
// returns are few, but a custom one need not be.
const maxSamples = 16

// record counts one finished call of second sec: its latency d when
// status is "", else its status, and err's message as status's sample
// unless the shard has one (or maxSamples): err.Error() is built for the
// first of each only.
func (s *shard) record(sec int, d time.Duration, status string, err error) {
	s.mu.Lock()
	for len(s.timeline) <= sec {
		s.timeline = append(s.timeline, Second{Second: len(s.timeline)})
	}
	e := &s.timeline[sec]
	e.Calls++
	if status == "" {
		_ = s.hist.RecordValue(int64(d)) // values past 1 h saturate; cannot happen under a call timeout
	} else {
		s.errs[status]++
		if _, ok := s.samples[status]; !ok && len(s.samples) < maxSamples {
			s.samples[status] = err.Error()
		}
		if e.Errors == nil {
			e.Errors = map[string]int64{}
		}
		e.Errors[status]++
	}
	s.mu.Unlock()
}

// Validate checks c's bounds.
func (c Config) Validate() error {
	switch {
	case c.Calls < 0:
		return fmt.Errorf("bench: calls %d: want 0 or more", c.Calls)
	case c.Duration < 0:
		return fmt.Errorf("bench: duration %v: want a positive duration", c.Duration)
	case c.WarmupMax < 0:
		return fmt.Errorf("bench: warm-up bound %v: want 0 (default) or a positive duration", c.WarmupMax)
	case c.Calls == 0 && c.Duration <= 0:
		return errors.New("bench: want a number of calls or a positive duration")
	case c.Calls > 0 && c.Duration > 0:
		return errors.New("bench: give a number of calls or a duration, not both")
	case c.Concurrency < 1 || c.Concurrency > 1_000_000:
		return fmt.Errorf("bench: concurrency %d: want 1 to 1,000,000", c.Concurrency)
	}
	return checkRate(c.Rate)
}

// Run performs cfg's warm-up and measured phase with call and returns the
// report of the measured phase. When ctx ends, callers stop after their
// current call and Run reports what finished, with ctx's error.
func Run(ctx context.Context, cfg Config, call Caller) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	classify := cfg.Classify
	if classify == nil {
		classify = func(error) string { return "ERROR" }
	}
	warmup := cfg.Warmup
	if warmup < 0 && cfg.Rate == 0 {
		warmup = DefaultWarmup(cfg.Calls, cfg.Concurrency)
	}
	warmupMax := cfg.WarmupMax
	if warmupMax == 0 {
		warmupMax = DefaultWarmupMax(cfg.Duration)
	}
	if warmup > 0 && cfg.Rate > 0 {
		openLoop(ctx, time.Now(), cfg.Rate, warmup, warmupMax, cfg.Concurrency, func(ctx context.Context, w int, _ time.Duration) {
			_ = call(ctx, w)
		})
	} else if warmup > 0 {
		end := time.Now().Add(warmupMax)
		var next atomic.Int64
		loop(cfg.Concurrency, func(w int) {
			ctx, cancel := context.WithCancel(ctx) // as in the measured phase
			defer cancel()
			for next.Add(1) <= warmup && ctx.Err() == nil && time.Now().Before(end) {
				_ = call(ctx, w)
			}
		})
	}

	nshards := min(max(8, 4*runtime.GOMAXPROCS(0)), cfg.Concurrency)
	shards := make([]shard, nshards)
	for i := range shards {
		shards[i].hist = hdrhistogram.New(histLowest, histHighest, histDigits)
		shards[i].errs = map[string]int64{}
		shards[i].samples = map[string]string{}
	}
	var next, done, failed, cut, cutOldest atomic.Int64
	var firstErr atomic.Pointer[error]
	tickEvery := cfg.TickEvery
	if tickEvery <= 0 {
		tickEvery = 200 * time.Millisecond
	}
	if cfg.Start != nil {
		cfg.Start()
	}
	cpu0 := cpuTime()
	start := time.Now()
	live := ctx.Err() == nil
	progress := func(final bool) Progress {
		return Progress{Done: done.Load(), Errors: failed.Load(), Total: cfg.Calls,
			Elapsed: time.Since(start), Planned: cfg.Duration, Final: final}
	}
	stopTicks := make(chan struct{})
	ticksDone := make(chan struct{})
	go func() {
		defer close(ticksDone)
		if cfg.Tick == nil {
			return
		}
		t := time.NewTicker(tickEvery)
		defer t.Stop()
		var deadline <-chan time.Time
		if cfg.Duration > 0 {
			d := time.NewTimer(time.Until(start.Add(cfg.Duration)))
			defer d.Stop()
			deadline = d.C
		}
		for {
			select {
			case <-stopTicks:
				return
			case <-t.C:
				cfg.Tick(progress(false))
			case <-deadline:
				cfg.Tick(progress(false))
			}
		}
	}()
	// finish records a call of the measured phase by caller w that ended
	// at t1 (from start), its latency counted from t0, and reports
	// whether it counted (not ErrUncounted).
	finish := func(w int, t0, t1 time.Duration, err error) bool {
		if err != nil && errors.Is(err, ErrUncounted) {
			cut.Add(1)
			for age := int64(t1 - t0); ; {
				if old := cutOldest.Load(); age <= old || cutOldest.CompareAndSwap(old, age) {
					break
				}
			}
			return false
		}
		status := ""
		if err != nil {
			status = classify(err)
			if firstErr.Load() == nil {
				first := err // only the first escapes: not a per-call allocation
				firstErr.CompareAndSwap(nil, &first)
			}
			failed.Add(1)
		}
		shards[w%nshards].record(int(t1/time.Second), t1-t0, status, err)
		done.Add(1)
		return true
	}
	var open *OpenLoop
	if cfg.Rate > 0 {
		st := openLoop(ctx, start, cfg.Rate, cfg.Calls, cfg.Duration, cfg.Concurrency, func(ctx context.Context, w int, from time.Duration) {
			err := call(ctx, w)
			finish(w, from, time.Since(start), err) // from the intended start when late, else from the hand-out
		})
		open = st.result(cfg.Rate)
	} else {
		loop(cfg.Concurrency, func(w int) {
			// Each caller has a context of its own, as each request of a
			// service does: thousands of calls waiting on one shared Done
			// channel contend for its lock (selectgo was 15 % of the
			// consumer's CPU at c=10,000), which no real service pays.
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			for ctx.Err() == nil {
				if cfg.Calls > 0 && next.Add(1) > cfg.Calls {
					next.Add(-1) // so that a slot an uncounted call gives back is taken again
					return
				}
				// monotonic readings only: half of time.Now's cost, which
				// counts in the client CPU per call the bench reports
				t0 := time.Since(start)
				err := call(ctx, w)
				t1 := time.Since(start)
				if !finish(w, t0, t1, err) {
					if cfg.Calls > 0 {
						next.Add(-1) // its slot is this caller's again
					}
					continue
				}
				if cfg.Calls == 0 && t1 >= cfg.Duration {
					return
				}
			}
		})
	}
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	close(stopTicks)
	<-ticksDone
	if cfg.Tick != nil {
		cfg.Tick(progress(true))
	}

	r := &Report{Errors: map[string]int64{}, Providers: map[string]int64{}, Concurrency: cfg.Concurrency,
		Start: start.UTC().Format(StartFormat), ElapsedSec: elapsed.Seconds(), OpenLoop: open}
	hist := hdrhistogram.New(histLowest, histHighest, histDigits)
	for i := range shards {
		s := &shards[i]
		hist.Merge(s.hist)
		for k, v := range s.errs {
			r.Errors[k] += v
		}
		for k, m := range s.samples {
			if _, ok := r.ErrorSamples[k]; !ok && len(r.ErrorSamples) < maxSamples {
				if r.ErrorSamples == nil {
					r.ErrorSamples = map[string]string{}
				}
				r.ErrorSamples[k] = m
			}
		}
		for len(r.Timeline) < len(s.timeline) {
			r.Timeline = append(r.Timeline, Second{Second: len(r.Timeline), Errors: map[string]int64{}})
		}
		for j, e := range s.timeline {
			r.Timeline[j].Calls += e.Calls
			for k, v := range e.Errors {
				r.Timeline[j].Errors[k] += v
			}
		}
	}
	// every second up to the end, those no call finished in too (a
	// stall that the end cut short); none for a phase that ctx had ended
	// before it began
	for n := int((elapsed + time.Second - 1) / time.Second); live && len(r.Timeline) < n; {
		r.Timeline = append(r.Timeline, Second{Second: len(r.Timeline), Errors: map[string]int64{}})
	}
	r.Calls = done.Load()
	r.CutShort, r.CutShortOldestUS = cut.Load(), float64(cutOldest.Load())/1e3
	r.OK = hist.TotalCount()
	if r.Calls > 0 {
		r.CallsPerSec = float64(r.Calls) / elapsed.Seconds()
		r.CPUUS = float64(cpu) / float64(time.Microsecond) / float64(r.Calls)
	}
	if e := firstErr.Load(); e != nil {
		r.firstErr, r.FirstError = *e, (*e).Error()
	}
	if r.OK == 0 {
		return r, ctx.Err() // no latency: an empty histogram's max is not a call's
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	r.MeanUS = hist.Mean() / 1e3
	r.P50US = us(hist.ValueAtQuantile(50))
	r.P99US = us(hist.ValueAtQuantile(99))
	r.P999US = us(hist.ValueAtQuantile(99.9))
	r.MaxUS = us(hist.Max())
	return r, ctx.Err()
}

// loop runs f(0) to f(n-1) in n goroutines and waits for them.
func loop(n int, f func(w int)) {
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() { f(w) })
	}
	wg.Wait()
}

// cpuTime returns the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ErrorNames returns the status names of r.Errors, most frequent first.
func (r *Report) ErrorNames() []string {
	names := slices.Collect(maps.Keys(r.Errors))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(r.Errors[b], r.Errors[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return names
}
