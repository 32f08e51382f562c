package zookeeper_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/spi"
)

// stubInvoker stands for a provider invoker in a directory.
type stubInvoker struct{ url spi.URL }

func (s stubInvoker) URL() spi.URL                                             { return s.url }
func (s stubInvoker) Invoke(ctx context.Context, _ *spi.Invocation) spi.Result { return spi.Result{} }
func (s stubInvoker) Available() bool                                          { return true }
func (s stubInvoker) Stats() *spi.Stats                                        { return nil }
func (s stubInvoker) Close() error                                             { return nil }

// Dubbo's group=* and group=a,b through a real ZooKeeper (tester10 #6):
// the ZooKeeper registry lists its service keys (Services), so a
// directory of group=* subscribes to every group of the interface, and
// to one registered later (within directory.RescanInterval); group=a,b
// to those two.
func TestDirectoryOfAnyGroupThroughZooKeeper(t *testing.T) {
	reg := build(t, server.URL("root=groups&session.timeout=5s"))
	for _, p := range []string{
		"airnode://127.0.0.1:1/t.G?side=provider&group=a",
		"airnode://127.0.0.1:2/t.G?side=provider&group=b",
		"airnode://127.0.0.1:3/t.G?side=provider",
		"airnode://127.0.0.1:4/other.Svc?side=provider&group=a",
	} {
		if err := reg.Register(ctx(t), spi.MustParse(p)); err != nil {
			t.Fatal(err)
		}
	}
	newInvoker := func(u spi.URL) (spi.Invoker, error) { return stubInvoker{u}, nil }
	anyD := directory.New(spi.MustParse("airnode:///t.G?side=consumer&group=*"), reg, "zookeeper", newInvoker, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { _ = anyD.Close() })
	listD := directory.New(spi.MustParse("airnode:///t.G?side=consumer&group=b,a"), reg, "zookeeper", newInvoker, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { _ = listD.Close() })
	for _, d := range []*directory.Directory{anyD, listD} {
		if err := d.Start(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(d *directory.Directory, want ...string) {
		t.Helper()
		deadline := time.Now().Add(3 * directory.RescanInterval)
		for {
			var got []string
			for _, inv := range d.List(nil) {
				got = append(got, inv.URL().Address())
			}
			slices.Sort(got)
			if slices.Equal(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: List = %v, want %v", d.URL().ServiceKey(), got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(anyD, "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3")
	waitFor(listD, "127.0.0.1:1", "127.0.0.1:2")
	if err := reg.Register(ctx(t), spi.MustParse("airnode://127.0.0.1:5/t.G?side=provider&group=c")); err != nil {
		t.Fatal(err)
	}
	waitFor(anyD, "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:5")
	waitFor(listD, "127.0.0.1:1", "127.0.0.1:2")
}
