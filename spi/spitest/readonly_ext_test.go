package spitest_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// The read-only subset fails a registry that registers: a writable
// registry belongs to TestRegistry (its Register is refused here).
func TestReadOnlyRegistryFailsAWritableRegistry(t *testing.T) {
	out := runChild(t, "TestChildReadOnlyWritable")
	if !strings.Contains(out, "--- FAIL: TestChildReadOnlyWritable/RegisterNotSupported") ||
		!strings.Contains(out, "Register = <nil>; want spi.ErrNotSupported from a read-only registry") {
		t.Fatalf("child output lacks the Register failure:\n%s", out)
	}
}

func TestChildReadOnlyWritable(t *testing.T) {
	child(t)
	b := memory.NewBuilder()
	spitest.TestReadOnlyRegistry(t, func(t *testing.T) spi.Registry {
		r, err := b.Build(spi.MustParse("memory://"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}, nil)
}
