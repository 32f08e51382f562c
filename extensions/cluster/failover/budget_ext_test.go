package failover_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/cluster/failover"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// overloaded is a provider's service exported with executes=1: Work runs
// one call at a time, each taking delay, or, called with hold, until gate
// opens (after saying so on held).
type overloaded struct {
	delay atomic.Int64 // ns
	gate  chan struct{}
	held  chan struct{}
}

func (o *overloaded) Work(ctx context.Context, hold bool) (int, error) {
	if hold {
		o.held <- struct{}{}
		select {
		case <-o.gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		return 1, nil
	}
	time.Sleep(time.Duration(o.delay.Load()))
	return 1, nil
}

// overloadedRef exports o on loopback TCP with executes=1 and returns a
// consumer's reference to it with query, and the consumer's invoker of
// the provider, whose Stats count every attempt sent to it.
func overloadedRef(t *testing.T, ctx context.Context, o *overloaded, query string) (*kernel.Reference, spi.Invoker) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat := bundle.Catalogs()
	reg := spi.MustParse("memory://" + t.Name())
	p := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithRegistry(reg), kernel.WithShutdownWait(0))
	t.Cleanup(func() { p.Close() })
	if _, err := p.Export(ctx, o, spi.MustParse("airnode://127.0.0.1:0/t.Overloaded?transport=tcp&executes=1")); err != nil {
		t.Fatal(err)
	}
	cons := kernel.NewNode(cat, kernel.WithLogger(quiet))
	t.Cleanup(func() { cons.Close() })
	// outlier.consecutive=0: the only provider is never ejected
	ref, err := cons.Refer(ctx, spi.MustParse("airnode:///t.Overloaded?timeout=5s&outlier.consecutive=0&"+query), reg)
	if err != nil {
		t.Fatal(err)
	}
	for len(ref.Providers()) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the provider never showed up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return ref, ref.Providers()[0]
}

// load runs 16 goroutines calling Work for d against a provider whose
// single slot each call holds for 10 ms, so that most calls are refused
// SERVER_THREADPOOL_EXHAUSTED; it returns the calls made, those that
// succeeded, and the attempts the provider was sent.
func load(ctx context.Context, ref *kernel.Reference, x spi.Invoker, d time.Duration) (calls, ok, attempts int64) {
	before := x.Stats().Total()
	var n, good atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for time.Now().Before(stop) && ctx.Err() == nil {
				_, err := ref.Invoke(ctx, "Work", false)
				n.Add(1)
				if err == nil {
					good.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return n.Load(), good.Load(), x.Stats().Total() - before
}

// tester80: a provider that refuses most calls (executes=1, 16 callers):
// without a budget failover sends it about retries+1 = 3 attempts per
// call; with retry.tokens=10 about one, as gRPC's retry throttling.
func TestRetryBudgetUnderOverload(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, c := range []struct {
		query    string
		min, max float64 // attempts per call
	}{
		{"retries=2", 2.4, 3},
		{"retries=2&retry.tokens=10", 1, 1.15},
	} {
		o := &overloaded{}
		o.delay.Store(int64(10 * time.Millisecond))
		ref, x := overloadedRef(t, ctx, o, c.query)
		calls, ok, attempts := load(ctx, ref, x, 1500*time.Millisecond)
		per := float64(attempts) / float64(calls)
		t.Logf("%s: %d calls (%d succeeded), %d attempts: %.3f per call", c.query, calls, ok, attempts, per)
		if calls < 100 || ok == 0 || ok*2 > calls {
			t.Fatalf("%s: %d calls, %d succeeded: want an overload (most refused, some through)", c.query, calls, ok)
		}
		if per < c.min || per > c.max {
			t.Errorf("%s: %.3f attempts per call, want %.2f..%.2f", c.query, per, c.min, c.max)
		}
	}
}

// The budget's arithmetic, call by call, against a provider whose single
// slot is held (every attempt refused SERVER_THREADPOOL_EXHAUSTED):
// 10 tokens, retries allowed above 5; then successes (0.1 token each)
// refill it and a refused call is retried again.
func TestRetryBudgetPausesThenRefills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o := &overloaded{gate: make(chan struct{}), held: make(chan struct{})}
	ref, x := overloadedRef(t, ctx, o, "retries=2&retry.tokens=10")

	hold := func() chan error {
		done := make(chan error, 1)
		go func() {
			_, err := ref.Invoke(ctx, "Work", true)
			done <- err
		}()
		select {
		case <-o.held:
		case <-ctx.Done():
			t.Fatal("the holding call never ran")
		}
		return done
	}
	release := func(done chan error) {
		o.gate <- struct{}{}
		if err := <-done; err != nil {
			t.Fatalf("the holding call: %v", err)
		}
	}
	// probe makes one call while the slot is held and checks its attempts
	// and whether it says the budget paused its retries.
	probe := func(step string, wantAttempts int64, wantPaused bool) {
		t.Helper()
		before := x.Stats().Total()
		_, err := ref.Invoke(ctx, "Work", false)
		got := x.Stats().Total() - before
		if spi.StatusOf(err) != spi.StatusServerThreadpoolExhausted {
			t.Fatalf("%s: %v, want SERVER_THREADPOOL_EXHAUSTED", step, err)
		}
		paused := strings.Contains(err.Error(), "; retries paused: failover made ")
		if want := fmt.Sprintf("; retries paused: failover made %s of its retries=2, skipped %d: the reference's retry budget (retry.tokens=10) is spent by failures",
			map[int64]string{1: "none", 2: "1"}[wantAttempts], 3-wantAttempts); paused && !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %q does not say %q", step, err, want)
		}
		if got != wantAttempts || paused != wantPaused {
			t.Fatalf("%s: %d attempts, paused %v, want %d, %v: %v", step, got, paused, wantAttempts, wantPaused, err)
		}
		if want := "after " + map[int64]string{1: "1 attempt ", 2: "2 attempts ", 3: "3 attempts "}[wantAttempts]; !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %q does not say %q", step, err, want)
		}
	}

	// Each failed attempt takes its token before the budget is asked for
	// the retry after it.
	done := hold()
	probe("full budget", 3, false) // 10 -> 9, retry; -> 8, retry; -> 7
	probe("7 tokens", 2, true)     // 7 -> 6, retry; -> 5: not above half
	probe("5 tokens", 1, true)     // 5 -> 4
	for i := range 4 {             // 4 -> 0, never below
		probe("drained "+string(rune('a'+i)), 1, true)
	}
	release(done) // the held call's success: 0.1

	// 50 successes give back 5 tokens: 5.1, and a refused call takes one
	// before asking: 4.1, not above half.
	for i := range 50 {
		if _, err := ref.Invoke(ctx, "Work", false); err != nil {
			t.Fatalf("success %d: %v", i+1, err)
		}
	}
	done = hold()
	probe("5.1 tokens", 1, true) // 5.1 -> 4.1
	release(done)                // 4.2
	// 19 more: 6.1 tokens, and retries resume: 6.1 -> 5.1, retry; -> 4.1.
	for i := range 19 {
		if _, err := ref.Invoke(ctx, "Work", false); err != nil {
			t.Fatalf("success %d: %v", i+51, err)
		}
	}
	done = hold()
	probe("refilled to 6.1", 2, true)
	release(done)
}

// Without retry.tokens the budget is off: every refused call makes its 3
// attempts however many failed before (the behaviour before the budget).
func TestRetryBudgetOffByDefault(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o := &overloaded{gate: make(chan struct{}), held: make(chan struct{})}
	ref, x := overloadedRef(t, ctx, o, "retries=2")
	done := make(chan error, 1)
	go func() {
		_, err := ref.Invoke(ctx, "Work", true)
		done <- err
	}()
	<-o.held
	for i := range 8 {
		before := x.Stats().Total()
		_, err := ref.Invoke(ctx, "Work", false)
		if got := x.Stats().Total() - before; got != 3 || strings.Contains(err.Error(), "retries paused") {
			t.Fatalf("call %d: %d attempts, want 3 and no pause: %v", i+1, got, err)
		}
	}
	o.gate <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Build refuses a bad retry.tokens or retry.ratio, naming the key, the
// value and what is allowed.
func TestRetryBudgetKeysValidated(t *testing.T) {
	for _, q := range []string{"retry.tokens=10", "retry.tokens=1000&retry.ratio=1", "retry.tokens=1&retry.ratio=0.001", "retry.tokens=0", "retry.ratio=0.5"} {
		if _, err := (failover.Builder{}).Build(spi.MustParse("consumer://10.0.0.9/demo.Echo?" + q)); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	for q, want := range map[string]string{
		"retry.tokens=-1":                  `invalid value "-1" for URL key "retry.tokens": want an integer from 0 (no retry budget) to 1000`,
		"retry.tokens=1001":                `invalid value "1001" for URL key "retry.tokens": want an integer from 0 (no retry budget) to 1000`,
		"retry.tokens=ten":                 `"ten" for URL key "retry.tokens"`,
		"retry.tokens=10&retry.ratio=0":    `invalid value "0" for URL key "retry.ratio": want a decimal number from 0.001 to 1 (tokens a successful call gives back)`,
		"retry.tokens=10&retry.ratio=1.5":  `invalid value "1.5" for URL key "retry.ratio"`,
		"retry.tokens=10&retry.ratio=NaN":  `invalid value "NaN" for URL key "retry.ratio"`,
		"retry.tokens=10&retry.ratio=1e-4": `invalid value "1e-4" for URL key "retry.ratio"`,
		"retry.tokens=10&retry.ratio=x":    `invalid value "x" for URL key "retry.ratio"`,
	} {
		_, err := (failover.Builder{}).Build(spi.MustParse("consumer://10.0.0.9/demo.Echo?" + q))
		var pe *spi.ParamError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a *spi.ParamError containing %q", q, err, want)
		}
	}
}

// tester81 #3: a call whose retry the budget refuses still waits the
// backoff that retry would have waited (the provider's pool was full),
// then fails "retries paused": closed-loop callers one more than the
// provider's slots (2 callers, executes=1, 50 ms calls) do not spin on
// it. Before, the paused call failed at once and the loser's loop sent
// the provider thousands of requests in 1.5 s; now about as many as
// without a budget, each paused call taking at least BackoffInitial/2.
func TestRetryBudgetPausedCallWaitsBackoff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	attemptsOf := map[string]int64{}
	for _, query := range []string{"retries=2", "retries=2&retry.tokens=2"} {
		o := &overloaded{}
		o.delay.Store(int64(50 * time.Millisecond))
		ref, x := overloadedRef(t, ctx, o, query)
		before := x.Stats().Total()
		var calls, good, paused atomic.Int64
		var short atomic.Int64 // paused calls that took less than BackoffInitial/2
		stop := time.Now().Add(1500 * time.Millisecond)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for time.Now().Before(stop) && ctx.Err() == nil {
					start := time.Now()
					_, err := ref.Invoke(ctx, "Work", false)
					calls.Add(1)
					switch {
					case err == nil:
						good.Add(1)
					case strings.Contains(err.Error(), "retries paused"):
						paused.Add(1)
						if time.Since(start) < failover.BackoffInitial/2 {
							short.Add(1)
						}
					}
				}
			})
		}
		wg.Wait()
		attempts := x.Stats().Total() - before
		attemptsOf[query] = attempts
		t.Logf("%s: %d calls, %d ok, %d paused (%d without the backoff), %d requests to the provider", query, calls.Load(), good.Load(), paused.Load(), short.Load(), attempts)
		if good.Load() < 10 {
			t.Fatalf("%s: %d calls succeeded in 1.5 s, want the provider busy", query, good.Load())
		}
		if short.Load() > 0 {
			t.Errorf("%s: %d of %d paused calls failed without waiting the backoff", query, short.Load(), paused.Load())
		}
	}
	if b, n := attemptsOf["retries=2&retry.tokens=2"], attemptsOf["retries=2"]; b > 2*n+50 {
		t.Errorf("with the budget the provider was sent %d requests, without %d: closed-loop callers spin on paused calls", b, n)
	}
}
