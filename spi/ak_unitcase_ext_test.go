package spi_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// tester79 #5: "5S" has a unit, in the wrong case: the error says units
// are lower case and gives the value so written, in URLs and for the
// file (DurationWantWithUnit).
func TestDurationUnitCase(t *testing.T) {
	for _, v := range []string{"5S", "2MS", "1H30M", "1.5S"} {
		_, err := spi.ParseDuration(v)
		if !errors.Is(err, spi.ErrDurationUnitCase) {
			t.Errorf("ParseDuration(%q) = %v, want ErrDurationUnitCase", v, err)
		}
	}
	_, err := spi.MustParse("airnode:///shop.Inventory?timeout=2MS").Duration("timeout", time.Second)
	if want := `invalid value "2MS" for URL key "timeout": want a duration with its unit in lower case, such as 2ms (units are lower case: ns, us, ms, s, m, h)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Duration(timeout=2MS) = %v, want it to contain %s", err, want)
	}
	if _, err := spi.ParseDuration("5x"); errors.Is(err, spi.ErrDurationUnitCase) {
		t.Errorf("ParseDuration(5x) = %v: not a case error", err)
	}
	if d, err := spi.ParseDuration("5s"); err != nil || d != 5*time.Second {
		t.Errorf("ParseDuration(5s) = %v, %v", d, err)
	}
}
