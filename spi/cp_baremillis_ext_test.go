package spi_test

import (
	"testing"

	"github.com/airnode/airnode/spi"
)

// A bare number is warned of under a twentieth of its setting's default,
// from 50 (timeout, 1s; no default) to 1000 (heartbeat.interval, 60s;
// warmup, 10m); a value with a unit, 0, and a negative or malformed one
// are not.
func TestBareMillisWarningBound(t *testing.T) {
	for _, c := range []struct {
		v, def string
		warn   bool
	}{
		{"49", "1s", true}, {"50", "1s", false},
		{"149", "3s", true}, {"150", "3s", false},
		{"60", "60s", true}, {"999", "60s", true}, {"1000", "60s", false},
		{"600", "10m", true}, {"3000", "10m", false},
		{"49", "100ms", true}, {"50", "100ms", false},
		{"30", "", true}, {"30", "0s", true}, {"30", "3 × interval", true}, {"60", "", false},
		{"30s", "60s", false}, {"0", "60s", false}, {"-5", "60s", false}, {"5x", "60s", false},
	} {
		got := spi.BareMillisWarning(c.v, c.def)
		if want := spi.BareMillis(c.v); c.warn && got != want || !c.warn && got != "" {
			t.Errorf("BareMillisWarning(%q, %q) = %q, want warning %v", c.v, c.def, got, c.warn)
		}
	}
}
