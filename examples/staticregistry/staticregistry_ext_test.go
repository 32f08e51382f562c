package staticregistry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/examples/staticregistry"
	"github.com/airnode/airnode/sdk/sdktest"
	"github.com/airnode/airnode/spi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLookupAndPushThroughGRPC(t *testing.T) {
	file := filepath.Join(t.TempDir(), "providers.txt")
	p1 := "airnode://127.0.0.1:20880/demo.Echo"
	p2 := "airnode://127.0.0.2:20880/demo.Echo"
	if err := os.WriteFile(file, []byte("# providers\n"+p1+"\nairnode://127.0.0.9:1/other.Svc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := sdktest.Registry(t, staticregistry.Builder{})
	r, err := b.Build(spi.MustParse("static://" + file + "?interval=20ms"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	consumer := spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer")
	got, err := r.Lookup(ctx, consumer)
	if err != nil || len(got) != 1 || got[0].String() != p1 {
		t.Fatalf("Lookup = %v, %v; want [%s]", got, err, p1)
	}
	if err := r.Register(ctx, spi.MustParse(p2)); !errors.Is(err, spi.ErrNotSupported) {
		t.Fatalf("Register err = %v, want ErrNotSupported across the plugin boundary", err)
	}
	lists := make(chan []spi.URL, 16)
	sub, err := r.Subscribe(ctx, consumer, func(l []spi.URL) { lists <- l })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	if l := <-lists; len(l) != 1 {
		t.Fatalf("first push %v, want 1 provider", l)
	}
	if err := os.WriteFile(file, []byte(p1+"\n"+p2+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-lists:
		if len(l) != 2 {
			t.Fatalf("second push %v, want 2 providers", l)
		}
	case <-ctx.Done():
		t.Fatal("no push after the file changed")
	}
	svcs, err := r.Services(ctx)
	if err != nil || len(svcs) != 1 || svcs[0] != "demo.Echo" {
		t.Fatalf("Services = %v, %v", svcs, err)
	}
}

// The builder says the registry is read-only (spi.ReadOnlyRegistry), and
// the answer crosses the plugin boundary, as sdk/README asks of a
// registry whose Register answers spi.ErrNotSupported: `airnode serve`
// reads it to refuse the registry before it listens
// (cli TestServeRefusesAReadOnlyRegistryBeforeListening runs that with
// this plugin's binary).
func TestBuilderSaysReadOnlyThroughGRPC(t *testing.T) {
	b := sdktest.Registry(t, staticregistry.Builder{})
	ro, ok := b.(spi.ReadOnlyRegistry)
	if !ok || !ro.ReadOnly() {
		t.Fatalf("the host's builder %T: ReadOnlyRegistry %v; want ReadOnly() true across the plugin boundary", b, ok)
	}
}

// The read-only subset of the registry conformance suite, with a publish
// that rewrites the file (renamed into place, so a re-read never sees
// half of it).
func TestReadOnlyConformance(t *testing.T) {
	file := filepath.Join(t.TempDir(), "providers.txt")
	publish := func(t *testing.T, providers []spi.URL) {
		t.Helper()
		var b strings.Builder
		for _, p := range providers {
			b.WriteString(p.String() + "\n")
		}
		tmp := file + ".tmp"
		if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, nil)
	sdktest.TestReadOnlyRegistry(t, staticregistry.Builder{}, spi.MustParse("static://"+file+"?interval=20ms"), publish)
}
