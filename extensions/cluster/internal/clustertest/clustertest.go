// Package clustertest runs real providers for the cluster strategies'
// tests: each on its own kernel node, over TCP on loopback, found through
// a memory registry by a real consumer reference, and each counting the
// calls its methods ran.
package clustertest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// Svc is the service "t.Svc" of one provider.
type Svc struct {
	// Name is what Who answers.
	Name string
	// Fail, when not nil, is what Who and Work return instead of an
	// answer (an *spi.Error keeps its status on the wire).
	Fail error
	runs atomic.Int64
}

// Who counts a run and answers s.Name, or s.Fail.
func (s *Svc) Who(context.Context) (string, error) {
	s.runs.Add(1)
	if s.Fail != nil {
		return "", s.Fail
	}
	return s.Name, nil
}

// Work counts a run, then waits ms milliseconds, or until its context
// ends (its caller's deadline, sent along with the request), and answers
// ms, or s.Fail at once.
func (s *Svc) Work(ctx context.Context, ms int) (int, error) {
	s.runs.Add(1)
	if s.Fail != nil {
		return 0, s.Fail
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return ms, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Runs returns how many calls of Who and Work began on s.
func (s *Svc) Runs() int64 { return s.runs.Load() }

var registries atomic.Int64

// Start exports each of svcs as "t.Svc" on a node of its own
// (127.0.0.1:0, transport tcp, warmup=0) and returns a consumer reference
// to t.Svc with query (URL keys: "cluster=forking&timeout=2s") and each
// provider's address, in the order of svcs, once the reference lists
// every provider. Everything is closed at the end of t.
func Start(t testing.TB, query string, svcs ...*Svc) (*kernel.Reference, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat := bundle.Catalogs() // one set: the memory registry is shared within it only
	reg := spi.MustParse(fmt.Sprintf("memory://clustertest%d", registries.Add(1)))
	addrs := make([]string, len(svcs))
	for i, s := range svcs {
		p := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithRegistry(reg), kernel.WithShutdownWait(0))
		t.Cleanup(func() { p.Close() })
		e, err := p.Export(ctx, s, spi.MustParse("airnode://127.0.0.1:0/t.Svc?transport=tcp&warmup=0"))
		if err != nil {
			t.Fatal(err)
		}
		addrs[i] = e.URL().Address()
	}
	cons := kernel.NewNode(cat, kernel.WithLogger(quiet))
	t.Cleanup(func() { cons.Close() })
	ref, err := cons.Refer(ctx, spi.MustParse("airnode:///t.Svc?"+query), reg)
	if err != nil {
		t.Fatal(err)
	}
	for len(ref.Providers()) < len(svcs) {
		if ctx.Err() != nil {
			t.Fatalf("the reference lists %d of %d providers after 10 s", len(ref.Providers()), len(svcs))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return ref, addrs
}

// Settle waits until the runs of svcs add up to want, for at most 5 s,
// then 200 ms more to see that no further run comes (a retry sent late),
// and returns their sum: the runs of requests still in flight when a
// call returned.
func Settle(want int64, svcs ...*Svc) int64 {
	sum := func() (n int64) {
		for _, s := range svcs {
			n += s.Runs()
		}
		return n
	}
	for end := time.Now().Add(5 * time.Second); sum() < want && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	return sum()
}
