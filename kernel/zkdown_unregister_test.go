package kernel_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// Shutdown of a provider while ZooKeeper is down: its entry cannot be
// deleted, so the log says so at Warn (naming the registry, and when the
// entry goes), the Info line before the wait does not say "unregistered",
// and Shutdown does not fail because of it (tester67 #2: only "kernel:
// unregistered; waiting before closing listeners" was logged). Real
// ZooKeeper, stopped.
func TestShutdownZooKeeperDownWarnsNotUnregistered(t *testing.T) {
	zs, err := zktest.StartTick(200 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer zs.Close()
	var log logbuf.Buffer
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(slog.New(slog.NewTextHandler(&log, nil))),
		kernel.WithRegistry(spi.MustParse(zs.URL("root=zkdown2&session.timeout=4s&connect.timeout=1s"))),
		kernel.WithShutdownWait(100*time.Millisecond))
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	zs.Stop()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(log.String(), "connection lost") {
		if time.Now().After(deadline) {
			t.Fatalf("no connection lost 15s after stopping ZooKeeper\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := n.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v; want nil (an entry ZooKeeper will expire is not a failed shutdown)", err)
	}
	out := log.String()
	t.Log(out)
	var warned bool
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "could not unregister demo.Echo from zookeeper://"+zs.Addr()) &&
			strings.Contains(l, "no session") && strings.Contains(l, "until ZooKeeper expires this session, session.timeout (4s)") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no WARN says the entry of demo.Echo could not be unregistered and when it goes")
	}
	if strings.Contains(out, `msg="unregistered; waiting`) {
		t.Errorf("the log says unregistered though the entry could not be deleted")
	}
	if !strings.Contains(out, `msg="waiting before closing listeners; not unregistered: demo.Echo`) {
		t.Errorf("no Info line names demo.Echo as not unregistered")
	}
}
