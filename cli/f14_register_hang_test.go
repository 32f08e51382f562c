package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// hangBuilder ("nureg") is the memory registry whose Register and
// Subscribe never return (until the test ends), as a registry plugin's
// doing select{} (tester66 F14).
type hangBuilder struct {
	*memory.Builder
	gate chan struct{}
}

func (b hangBuilder) Name() string { return "nureg" }
func (b hangBuilder) Build(u spi.URL) (spi.Registry, error) {
	r, err := b.Builder.Build(u.WithScheme("memory"))
	return hangRegistry{r, b.gate}, err
}

type hangRegistry struct {
	spi.Registry
	gate chan struct{}
}

func (r hangRegistry) Register(ctx context.Context, u spi.URL) error {
	<-r.gate
	return r.Registry.Register(context.Background(), u)
}

func (r hangRegistry) Subscribe(ctx context.Context, u spi.URL, notify spi.NotifyFunc) (spi.Subscription, error) {
	<-r.gate
	return r.Registry.Subscribe(context.Background(), u, notify)
}

func hangCatalogs(t *testing.T) *extension.Catalogs {
	gate := make(chan struct{})
	t.Cleanup(func() { close(gate) })
	cat := bundle.Catalogs()
	if err := cat.Registry.Register(hangBuilder{memory.NewBuilder(), gate}, "test"); err != nil {
		t.Fatal(err)
	}
	return cat
}

// runHang runs airnode args in-process with the nureg registry in its
// catalogs, failing the test when it runs longer than 40 s; it returns
// the exit code, stderr and how long it took.
func runHang(t *testing.T, args ...string) (int, string, time.Duration) {
	t.Helper()
	cat := hangCatalogs(t)
	var stdout, stderr logbuf.Buffer
	a := newApp(&stdout, &stderr)
	a.newCatalogs = func() (*extension.Catalogs, error) { return cat, nil }
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	start := time.Now()
	code := runApp(ctx, a, args)
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("airnode %s still running after 40s\n%s", strings.Join(args, " "), stderr.String())
	}
	t.Logf("airnode %s: exit %d after %v\n%s", strings.Join(args, " "), code, took.Round(time.Millisecond), stderr.String())
	return code, stderr.String(), took
}

// serve with a registry whose Register never returns exits 1 after the
// kernel's register bound, naming the registry and the bound; it used to
// hang silently forever (tester66 F14).
func TestF14ServeRegisterNeverReturns(t *testing.T) {
	t.Parallel()
	code, errOut, took := runHang(t, "serve", "--listen", "127.0.0.1:0", "--registry", "nureg://x", "--shutdown-wait", "0s")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, w := range []string{`registry "nureg" Register of demo.Echo did not return within 10s`} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr does not say %q", w)
		}
	}
	if strings.Contains(errOut, "airnode serve: serving") {
		t.Errorf("serve said serving")
	}
	if took < 9*time.Second {
		t.Errorf("serve exited after %v, before the 10s bound", took)
	}
}

// call with a registry whose Subscribe never returns says the bound it
// gave the subscription (10 s; what is left of a --timeout given, which
// bounds the whole command: tester71 #2), not "within ctx" (tester66
// F14).
func TestF14CallSubscribeNeverReturns(t *testing.T) {
	t.Parallel()
	code, errOut, took := runHang(t, "call", "--registry", "nureg://x", "demo.Echo", "Echo", `"hi"`)
	if code == 0 {
		t.Fatalf("call succeeded")
	}
	if !strings.Contains(errOut, `registry "nureg" Subscribe of demo.Echo did not return before the caller's context deadline passed, after 10s; stopped waiting for it (it may still finish later)`) || strings.Contains(errOut, "within ctx") {
		t.Errorf("call's failure does not say the 10s bound")
	}
	code, errOut, took = runHang(t, "call", "--registry", "nureg://x", "--timeout", "3s", "demo.Echo", "Echo", `"hi"`)
	if code == 0 {
		t.Fatalf("call succeeded")
	}
	if !strings.Contains(errOut, `registry "nureg" Subscribe of demo.Echo did not return before the caller's context deadline passed, after `) || strings.Contains(errOut, "within ctx") ||
		!strings.Contains(errOut, "--timeout 3s ran out while referring demo.Echo") {
		t.Errorf("call --timeout 3s: its failure does not say the bound and the --timeout")
	}
	if took > 6*time.Second {
		t.Errorf("call --timeout 3s took %v", took)
	}
}
