package extension_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

// tester90 #2: Dubbo users write heartbeat=0 or a negative number to turn
// the heartbeat off. Here 0 is an interval out of bounds and -1 an
// unknown strategy; both errors now say how to turn it off
// (heartbeat=none).
func TestBY_HeartbeatOffHint(t *testing.T) {
	const hint = "turns the heartbeat off: here use heartbeat=none (a bare number is heartbeat.interval in ms of the default heartbeat, idle)"
	c := extensiontest.Catalogs()
	for _, v := range []string{"-1", "-3000", "-0"} {
		_, err := c.Heartbeat.Get(v)
		var ue *extension.UnknownError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), `unknown heartbeat "`+v+`" (available: dual, idle, none); in Dubbo a negative number (or 0) `+hint) {
			t.Errorf("Get(%q) = %v; want an unknown heartbeat with the off hint", v, err)
		}
	}
	// heartbeat=0: the strategy's bound error, renamed to the key written
	u := spi.MustParse("airnode://h/x?heartbeat=0")
	buildErr := &spi.ParamError{Key: "heartbeat.interval", Value: "0", Want: "a duration from 10ms to 24h"}
	err := c.Heartbeat.BareNumberError(u, buildErr)
	if want := `invalid value "0" for URL key "heartbeat": want a duration from 10ms to 24h; in Dubbo 0 (or a negative number) ` + hint; err == nil || err.Error() != want {
		t.Errorf("heartbeat=0: %v\nwant %s", err, want)
	}
	// no hint for other numbers, names, or another point
	if err := c.Heartbeat.BareNumberError(spi.MustParse("airnode://h/x?heartbeat=5"),
		&spi.ParamError{Key: "heartbeat.interval", Value: "5", Want: "a duration from 10ms to 24h"}); err == nil || strings.Contains(err.Error(), "Dubbo") {
		t.Errorf("heartbeat=5: %v; want no off hint", err)
	}
	if _, err := c.Heartbeat.Get("idel"); err == nil || strings.Contains(err.Error(), "Dubbo") {
		t.Errorf("Get(idel) = %v; want no off hint", err)
	}
	if _, err := c.LoadBalance.Get("-1"); err == nil || strings.Contains(err.Error(), "Dubbo") {
		t.Errorf("loadbalance Get(-1) = %v; want no off hint", err)
	}
	// a catalog without "none" names no such strategy
	bare := extension.New()
	if _, err := bare.Heartbeat.Get("-1"); err == nil || strings.Contains(err.Error(), "heartbeat=none") {
		t.Errorf("without none: %v; want no hint naming it", err)
	}
}
