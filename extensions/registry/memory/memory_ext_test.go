package memory_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	b := memory.NewBuilder()
	spitest.TestRegistry(t, func(t *testing.T) spi.Registry {
		r, err := b.Build(spi.MustParse("memory://"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
}

func TestNamespacesAreSeparate(t *testing.T) {
	b := memory.NewBuilder()
	ra, _ := b.Build(spi.MustParse("memory://a"))
	rb, _ := b.Build(spi.MustParse("memory://b"))
	defer ra.Close()
	defer rb.Close()
	p := spi.MustParse("airnode://127.0.0.1:1/demo.Echo")
	if err := ra.Register(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got, _ := rb.Lookup(context.Background(), p); len(got) != 0 {
		t.Fatalf("namespace b sees %v", got)
	}
	if got, _ := ra.Lookup(context.Background(), p); len(got) != 1 {
		t.Fatalf("namespace a sees %v", got)
	}
}

func TestBuildRejectsParameters(t *testing.T) {
	if _, err := memory.NewBuilder().Build(spi.MustParse("memory://?x=1")); err == nil {
		t.Fatal("want error for unknown key")
	}
	if _, err := memory.NewBuilder().Build(spi.MustParse("file:///tmp")); err == nil {
		t.Fatal("want error for wrong scheme")
	}
}

// memory:// reaches the consumers of its own process only; airnode serve
// warns about it (spi.RegistryReacher).
func TestReachIsProcess(t *testing.T) {
	if got := (&memory.Builder{}).Reach(); got != spi.ReachProcess {
		t.Errorf("Reach() = %v, want process", got)
	}
}
