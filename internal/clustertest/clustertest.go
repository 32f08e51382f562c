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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
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

// Put answers len(b) at once, counting no run: a large request that
// fills a connection's buffers.
func (s *Svc) Put(_ context.Context, b []byte) (int, error) { return len(b), nil }

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
	cat := bundle.Catalogs() // one set: the memory registry is shared within it only
	reg := spi.MustParse(fmt.Sprintf("memory://clustertest%d", registries.Add(1)))
	addrs := make([]string, len(svcs))
	for i, s := range svcs {
		addrs[i] = export(ctx, t, cat, reg, s, "t.Svc")
	}
	cons := kernel.NewNode(cat, kernel.WithLogger(quiet()))
	t.Cleanup(func() { cons.Close() })
	ref, err := cons.Refer(ctx, spi.MustParse("airnode:///t.Svc?"+query), reg)
	if err != nil {
		t.Fatal(err)
	}
	waitListed(t, ref, len(svcs))
	return ref, addrs
}

// export exports s as service on a node of its own built from cat, with
// registry reg, and returns its address.
func export(ctx context.Context, t testing.TB, cat *extension.Catalogs, reg spi.URL, s *Svc, service string) string {
	t.Helper()
	p := kernel.NewNode(cat, kernel.WithLogger(quiet()), kernel.WithRegistry(reg), kernel.WithShutdownWait(0))
	t.Cleanup(func() { p.Close() })
	e, err := p.Export(ctx, s, spi.MustParse("airnode://127.0.0.1:0/"+service+"?transport=tcp&warmup=0"))
	if err != nil {
		t.Fatal(err)
	}
	return e.URL().Address()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Elsewhere starts a provider that serves no t.Svc (its node exports s
// as t.Other only), found in no registry: a call of t.Svc there answers
// SERVICE_NOT_FOUND, the call did not run. It returns its address.
func Elsewhere(t testing.TB, s *Svc) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return export(ctx, t, bundle.Catalogs(), spi.MustParse(fmt.Sprintf("memory://clustertest%d", registries.Add(1))), s, "t.Other")
}

// Direct returns a direct reference to t.Svc at addrs (host:port, each
// a provider of Start or a proxy in front of one), transport tcp as
// theirs, with query as Start's, on a consumer node of its own, closed at
// the end of t, once the reference lists every provider (connected).
func Direct(t testing.TB, query string, addrs ...string) *kernel.Reference {
	t.Helper()
	cons := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet()))
	t.Cleanup(func() { cons.Close() })
	ref, err := cons.Refer(context.Background(), spi.MustParse("airnode://"+strings.Join(addrs, ",")+"/t.Svc?transport=tcp&"+query), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	waitListed(t, ref, len(addrs))
	return ref
}

// waitListed waits, for at most 10 s, until ref lists n providers (each
// connected).
func waitListed(t testing.TB, ref *kernel.Reference, n int) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); len(ref.Providers()) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the reference lists %d of %d providers after 10 s", len(ref.Providers()), n)
		}
	}
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
