package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// workProvider is one provider node exporting acme.Work from its own work
// plugin process, which records the ids of the calls it starts in log.
type workProvider struct {
	h   *pluginhost.Host
	log string
}

// ran counts the lines id in the provider's plugin log.
func (p workProvider) ran(t *testing.T, id string) int {
	t.Helper()
	b, err := os.ReadFile(p.log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l == id {
			n++
		}
	}
	return n
}

// startWorkProviders starts two providers registered in reg, each backed by
// its own work plugin process.
func startWorkProviders(t *testing.T, ctx context.Context, reg spi.URL) []workProvider {
	t.Helper()
	var ps []workProvider
	for i := range 2 {
		log := filepath.Join(t.TempDir(), fmt.Sprintf("work%d.log", i))
		h, _, err := startHost(t, config.Plugin{Name: "work", Point: pluginhost.PointService, Command: binary("work"),
			Env: map[string]string{"WORK_LOG": log}})
		if err != nil {
			t.Fatal(err)
		}
		n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(testLogger(t)), kernel.WithShutdownWait(0), kernel.WithRegistry(reg))
		t.Cleanup(func() { _ = n.Close() })
		u := spi.MustParse("airnode://127.0.0.1:0/acme.Work")
		if _, err := n.ExportInvoker(ctx, u, h.Services()[0].Invoker(u)); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, workProvider{h: h, log: log})
	}
	return ps
}

// killWhereItRuns waits until one of ps's plugins has started the call id
// and kills that plugin process with SIGKILL; it returns its index.
func killWhereItRuns(t *testing.T, ps []workProvider, id string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for i, p := range ps {
			if p.ran(t, id) > 0 {
				pid := info(t, p.h, "work").PID
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				return i
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no plugin started the call %s", id)
	return -1
}

// Two providers each export acme.Work from their own plugin process; kill
// -9 of the plugin running a call is a connection that died after the
// request was sent: the provider answers CHANNEL_INACTIVE "the plugin
// process died ... may have run", which the consumer reads as
// spi.ErrRequestSent. A failover consumer retries an idempotent method on
// the other provider (the call succeeds), and fails a non-idempotent one
// with that CHANNEL_INACTIVE, having run it once.
func TestServicePluginKilledMidCallRetriesOnlyIdempotent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	reg := spi.MustParse("file://" + t.TempDir())
	ps := startWorkProviders(t, ctx, reg)
	c := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(testLogger(t)), kernel.WithRegistry(reg))
	t.Cleanup(func() { _ = c.Close() })
	refer := func(keys string) *kernel.Reference {
		ref, err := c.Refer(ctx, spi.MustParse("airnode:///acme.Work?timeout=20s&"+keys), reg)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(ref.Providers()) < 2 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if len(ref.Providers()) < 2 {
			t.Fatalf("providers %v, want 2", ref.Providers())
		}
		return ref
	}

	t.Run("idempotent", func(t *testing.T) {
		ref := refer("idempotent=true")
		done := make(chan error, 1)
		go func() {
			var pid int
			done <- ref.Call(ctx, "Run", []any{"idem", 1000}, &pid)
		}()
		killed := killWhereItRuns(t, ps, "idem")
		if err := <-done; err != nil {
			t.Fatalf("idempotent call whose plugin was killed: %v; want it retried on the other provider", err)
		}
		if n := ps[1-killed].ran(t, "idem"); n != 1 {
			t.Fatalf("the other provider ran it %d times, want 1", n)
		}
		waitRunning(t, ps[killed].h, "work", 0)
	})

	t.Run("not idempotent", func(t *testing.T) {
		ref := refer("")
		for _, p := range ps { // the previous kill's restart
			waitRunning(t, p.h, "work", 0)
		}
		done := make(chan error, 1)
		go func() {
			var pid int
			done <- ref.Call(ctx, "Run", []any{"once", 1000}, &pid)
		}()
		killWhereItRuns(t, ps, "once")
		err := <-done
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusChannelInactive || !errors.Is(err, spi.ErrRequestSent) ||
			!strings.Contains(err.Error(), "plugin process died") || !strings.Contains(err.Error(), "may have run") {
			t.Fatalf("non-idempotent call whose plugin was killed: %v; want CHANNEL_INACTIVE (spi.ErrRequestSent) saying the plugin process died and it may have run", err)
		}
		t.Log(err)
		if n := ps[0].ran(t, "once") + ps[1].ran(t, "once"); n != 1 {
			t.Fatalf("the call ran %d times, want once", n)
		}
	})
}
