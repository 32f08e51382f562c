package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// sickBuilder builds memory registries that implement spi.RegistryHealth,
// answering lost's error while it is set: a registry whose session
// expired (the ZooKeeper registry's entriesGone).
type sickBuilder struct {
	*memory.Builder
	lost *atomic.Pointer[error]
}

func (b sickBuilder) Name() string { return "sick" }

func (b sickBuilder) Build(u spi.URL) (spi.Registry, error) {
	r, err := b.Builder.Build(spi.MustParse("memory://"))
	if err != nil {
		return nil, err
	}
	return sickRegistry{r, b.lost}, nil
}

type sickRegistry struct {
	spi.Registry
	lost *atomic.Pointer[error]
}

func (r sickRegistry) Health() error {
	if p := r.lost.Load(); p != nil {
		return *p
	}
	return nil
}

var _ spi.RegistryHealth = sickRegistry{}

// tester16 #9: a registry that says its entries are lost
// (spi.RegistryHealth: the ZooKeeper session expired) turns serve's
// /ready to 503 with its reason, and back to 200 when it has them again;
// airnode_ready follows. In process: runServe with a registry of the
// test's.
func TestReady_RegistryHealthLost(t *testing.T) {
	cat := bundle.Catalogs()
	lost := new(atomic.Pointer[error])
	if err := cat.Registry.Register(sickBuilder{memory.NewBuilder(), lost}, "test"); err != nil {
		t.Fatal(err)
	}
	cfg := config.DefaultConfig()
	cfg.Listen, cfg.Registry, cfg.Shutdown.Wait = "127.0.0.1:0", "sick://", 0
	var log logbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, cat, cfg, "", serveFlags{metrics: "127.0.0.1:0"}, logger, make(chan syscall.Signal), io.Discard)
	}()
	var addr string
	re := regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`)
	waitFor(t, "the metrics line", func() bool {
		select {
		case err := <-done:
			t.Fatalf("runServe returned %v\n%s", err, log.String())
		default:
		}
		if m := re.FindStringSubmatch(log.String()); m != nil {
			addr = m[1]
			return true
		}
		return false
	})
	waitProbe(t, addr, "/ready", http.StatusOK, "serving", 5*time.Second)

	gone := errors.New("zookeeper registry: session expired: provider entries of demo.Echo are not in ZooKeeper")
	lost.Store(&gone)
	// A lost registry session is a warning, not unreadiness: every
	// provider sees the outage at once (tester18 N2).
	waitProbe(t, addr, "/metrics", http.StatusOK, `airnode_health_warning{check="registry"} 1`, time.Second)
	waitProbe(t, addr, "/stats?format=text", http.StatusOK, "node: serving, ready; warning: registry: zookeeper registry: session expired", time.Second)
	waitProbe(t, addr, "/ready", http.StatusOK, "serving", time.Second)
	waitProbe(t, addr, "/metrics", http.StatusOK, "airnode_ready 1\n", time.Second)
	waitProbe(t, addr, "/live", http.StatusOK, "alive", time.Second)

	lost.Store(nil)
	waitProbe(t, addr, "/metrics", http.StatusOK, `airnode_health_warning{check="registry"} 0`, time.Second)
	waitProbe(t, addr, "/ready", http.StatusOK, "serving", time.Second)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runServe: %v\n%s", err, log.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("runServe did not return after its context ended")
	}
}
