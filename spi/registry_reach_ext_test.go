package spi_test

import (
	"testing"

	"github.com/airnode/airnode/spi"
)

func TestRegistryReachString(t *testing.T) {
	for r, want := range map[spi.RegistryReach]string{
		spi.ReachShared: "shared", spi.ReachProcess: "process", spi.ReachNone: "none", 7: "RegistryReach(7)",
	} {
		if got := r.String(); got != want {
			t.Errorf("RegistryReach(%d).String() = %q, want %q", int(r), got, want)
		}
	}
	var zero spi.RegistryReach
	if zero != spi.ReachShared {
		t.Error("the zero RegistryReach is not ReachShared (assumed for builders without RegistryReacher)")
	}
}
