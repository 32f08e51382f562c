package kernel

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// t74Svc counts the calls of Sleep that ran.
type t74Svc struct{ calls atomic.Int32 }

// Sleep waits ms milliseconds, or until ctx ends.
func (s *t74Svc) Sleep(ctx context.Context, ms int) (int, error) {
	s.calls.Add(1)
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return ms, nil
}

// t74Providers exports one t74Svc per query on a provider node of its own
// through file registry reg, and returns them.
func t74Providers(t *testing.T, reg spi.URL, queries ...string) []*t74Svc {
	t.Helper()
	var out []*t74Svc
	for _, q := range queries {
		p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0), WithRegistry(reg))
		t.Cleanup(func() { _ = p.Close() })
		s := &t74Svc{}
		if _, err := p.Export(ctxT(t), s, spi.MustParse("airnode://127.0.0.1:0/t74.Svc?"+q)); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// t74Refer refers to t74.Svc through reg (or u's own hosts) and waits
// until n providers are listed.
func t74Refer(t *testing.T, reg spi.URL, u string, n int) *Reference {
	t.Helper()
	c := NewNode(testCatalogs(t), WithLogger(quiet), WithRegistry(reg))
	t.Cleanup(func() { _ = c.Close() })
	r, err := c.Refer(ctxT(t), spi.MustParse(u), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the providers listed", func() bool { return len(r.Providers()) == n })
	return r
}

// t74Busy runs a Sleep(1500) on r in the background until it holds
// provider s's only execution slot (executes=1), and returns the result
// of one Sleep(1) call made then, which the provider refuses
// (SERVER_THREADPOOL_EXHAUSTED) as often as it is asked.
func t74Busy(t *testing.T, r *Reference, s *t74Svc) error {
	t.Helper()
	held := make(chan error, 1)
	go func() {
		var ms int
		held <- r.Call(context.Background(), "Sleep", []any{1500}, &ms)
	}()
	eventually(t, "the first call running", func() bool { return s.calls.Load() == 1 })
	var ms int
	err := r.Call(ctxT(t), "Sleep", []any{1}, &ms)
	if got := s.calls.Load(); got != 1 {
		t.Errorf("%d calls ran, want only the one holding the slot", got)
	}
	if err := <-held; err != nil {
		t.Errorf("the call holding the slot: %v", err)
	}
	return err
}

// tester74 #1: a provider's retries is its consumers' default, as in
// Dubbo: serve -p retries=0 -p executes=1 makes a refused call one
// attempt; a consumer's own retries wins; a direct reference, which has
// no provider URL, keeps its own keys (the default 2 here).
func TestT74_ProviderRetriesIsTheConsumersDefault(t *testing.T) {
	for _, tc := range []struct {
		name, provider, consumer string
		direct                   bool
		want                     string // "": one attempt, the provider's own error
	}{
		{"provider retries=0", "retries=0", "", false, ""},
		{"provider methods.Sleep.retries=0", "methods.Sleep.retries=0", "", false, ""},
		{"consumer retries=1 wins", "retries=0", "&retries=1", false, "failed after 2 attempts"},
		{"consumer Sleep.retries=1 wins", "retries=0", "&Sleep.retries=1", false, "failed after 2 attempts"},
		{"no retries anywhere", "", "", false, "failed after 3 attempts"},
		{"direct reference", "retries=0", "", true, "failed after 3 attempts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each has its registry and nodes; each mostly waits 1.5 s (t74Busy)
			reg := spi.MustParse("file://" + t.TempDir())
			s := t74Providers(t, reg, "executes=1&timeout=10s&"+tc.provider)[0]
			u := "airnode:///t74.Svc?timeout=10s" + tc.consumer
			if tc.direct {
				addr := providerAddr(t, reg)
				u = "airnode://" + addr + "/t74.Svc?timeout=10s" + tc.consumer
			}
			err := t74Busy(t, t74Refer(t, reg, u, 1), s)
			if spi.StatusOf(err) != spi.StatusServerThreadpoolExhausted {
				t.Fatalf("err = %v, want SERVER_THREADPOOL_EXHAUSTED", err)
			}
			switch {
			case tc.want == "" && strings.Contains(err.Error(), "failed after"):
				t.Errorf("err = %v, want one attempt (the provider's retries=0)", err)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// providerAddr returns the address of the one provider of t74.Svc that
// file registry reg lists.
func providerAddr(t *testing.T, reg spi.URL) string {
	t.Helper()
	r := t74Refer(t, reg, "airnode:///t74.Svc", 1)
	return r.Providers()[0].URL().Address()
}

// tester74 #1: a provider that marks a method idempotent (Sleep.idempotent,
// methods.Sleep.idempotent or idempotent, as Dubbo's provider would) has
// a failure that may have run (SERVER_TIMEOUT) retried on the other
// provider by consumers that say nothing; a consumer's idempotent=false
// wins.
func TestT74_ProviderIdempotentIsTheConsumersDefault(t *testing.T) {
	for _, tc := range []struct {
		name, provider, consumer string
		tries                    int32 // calls that ran, over both providers
	}{
		{"provider Sleep.idempotent=true", "Sleep.idempotent=true", "", 2},
		{"provider methods.Sleep.idempotent=true", "methods.Sleep.idempotent=true", "", 2},
		{"provider idempotent=true", "idempotent=true", "", 2},
		{"consumer idempotent=false wins", "Sleep.idempotent=true", "&idempotent=false", 1},
		{"not idempotent", "", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each has its registry and nodes
			reg := spi.MustParse("file://" + t.TempDir())
			// the provider's timeout=300ms is the consumers' too: Sleep(5000) times out
			q := "retries=1&timeout=300&" + tc.provider
			ps := t74Providers(t, reg, q, q)
			r := t74Refer(t, reg, "airnode:///t74.Svc?side=consumer"+tc.consumer, 2)
			var ms int
			err := r.Call(ctxT(t), "Sleep", []any{5000}, &ms)
			if spi.StatusOf(err) != spi.StatusServerTimeout {
				t.Fatalf("err = %v, want SERVER_TIMEOUT", err)
			}
			eventually(t, "the calls counted", func() bool { return ps[0].calls.Load()+ps[1].calls.Load() >= tc.tries })
			time.Sleep(50 * time.Millisecond) // a further attempt would have run by now
			if a, b := ps[0].calls.Load(), ps[1].calls.Load(); a+b != tc.tries || tc.tries == 2 && (a != 1 || b != 1) {
				t.Errorf("calls ran %d and %d, want %d in all, on different providers; err = %v", a, b, tc.tries, err)
			}
		})
	}
}

// tester74 #1: a provider that publishes cluster (service or method
// level) gets one WARN at Export saying each consumer chooses its own;
// retries, idempotent and forks, which consumers take as their
// defaults, get none.
func TestT74_ExportWarnsOfProviderCluster(t *testing.T) {
	for q, want := range map[string]string{
		"cluster=failfast":      "cluster=failfast is published but has no effect: each consumer chooses its cluster from its own reference URL (a reference's cluster=..., call/bench: -p cluster=...)",
		"Sleep.cluster=forking": "Sleep.cluster=forking is published but has no effect: each consumer chooses its cluster",
		"retries=0&idempotent=true&Sleep.retries=1&methods.Sleep.idempotent=false&forks=3": "",
	} {
		var log logbuf.Buffer
		n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		if _, err := n.Export(ctxT(t), &t74Svc{}, spi.MustParse("airnode://127.0.0.1:0/t74.Svc?"+q)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		_ = n.Close()
		lines := strings.Count(log.String(), "level=WARN")
		switch {
		case want == "" && lines != 0:
			t.Errorf("%s: warned, want no warning:\n%s", q, log.String())
		case want != "" && (lines != 1 || !strings.Contains(log.String(), want)):
			t.Errorf("%s: want one warning with %q, got:\n%s", q, want, log.String())
		}
	}
}
