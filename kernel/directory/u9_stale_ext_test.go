package directory_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/spi"
)

// infoLog keeps the messages logged at Info and above, with their
// provider attribute.
type infoLog struct {
	mu    sync.Mutex
	lines []string
}

func (h *infoLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *infoLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *infoLog) WithGroup(string) slog.Handler            { return h }
func (h *infoLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelInfo {
		line := r.Message
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "provider" {
				line += " provider=" + a.Value.String()
			}
			return true
		})
		h.mu.Lock()
		h.lines = append(h.lines, line)
		h.mu.Unlock()
	}
	return nil
}

func (h *infoLog) all() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.lines, "\n")
}

// TestU9_StaleEntryLeavingIsNotAProviderRemoved (tester74 #9): after a
// kill -9 and a restart on the same port, the consumer logged "provider
// added" and then "provider removed" for the address, which read as the
// provider gone; the second line now says the stale entry left and the
// provider stays. A provider whose only entry leaves is still "removed".
func TestU9_StaleEntryLeavingIsNotAProviderRemoved(t *testing.T) {
	reg, err := memory.NewBuilder().Build(spi.MustParse("memory://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	var log infoLog
	f := &factory{}
	d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"), reg, "memory://", f.newInvoker, slog.New(&log))
	t.Cleanup(func() { _ = d.Close() })
	const (
		old     = "airnode://127.0.0.1:29011/demo.Echo?side=provider&timestamp=1000"
		restart = "airnode://127.0.0.1:29011/demo.Echo?side=provider&timestamp=2000"
		other   = "airnode://127.0.0.1:29012/demo.Echo?side=provider&timestamp=1000"
	)
	register(t, reg, old)
	register(t, reg, other)
	start(t, d)
	waitProviders(t, d, old, other)
	register(t, reg, restart)
	waitProviders(t, d, restart, other)
	got := log.all()
	if strings.Contains(got, "provider removed provider=127.0.0.1:29011") {
		t.Errorf("the old entry's leaving logged as the provider removed:\n%s", got)
	}
	if !strings.Contains(got, "stale entry of a provider left; the provider stays, at its newer entry provider=127.0.0.1:29011") {
		t.Errorf("no stale-entry line:\n%s", got)
	}
	if err := reg.Unregister(context.Background(), spi.MustParse(other)); err != nil {
		t.Fatal(err)
	}
	waitProviders(t, d, restart)
	if got := log.all(); !strings.Contains(got, "provider removed provider=127.0.0.1:29012") {
		t.Errorf("a provider leaving for good not logged as removed:\n%s", got)
	}
}
