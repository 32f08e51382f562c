package kernel

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TestT15A_NotEjectedWarnRateBound (tester15 finding A): one provider
// whose calls time out in short streaks with answers between them (a
// provider near its callers' timeout). Each streak reaches
// outlier.consecutive and may not eject (it is the last available
// provider), but the WARN saying so is written at most once per
// outlier.ejection for the provider: three streaks within the period give
// one line; a streak after the period gives the next line, which counts
// the two streaks left out (streaks_not_logged=2).
func TestT15A_NotEjectedWarnRateBound(t *testing.T) {
	const period = 2 * time.Second
	svc, addr := namedProvider(t, "only")
	c, logs := outlierConsumer(t)
	r := refer(t, c, "airnode://"+addr+"/t12.Who?timeout=30ms&outlier.ejection=2s")
	eventually(t, "provider connected", func() bool { return len(r.Providers()) == 1 })

	// streak makes outlier.consecutive (5) calls that time out, then one
	// that answers (ending the streak).
	streak := func() {
		t.Helper()
		svc.slow.Store(true)
		for i := range DefaultOutlierConsecutive {
			if err := r.Call(ctxT(t), "Who", nil, nil); spi.StatusOf(err) != spi.StatusServerTimeout {
				t.Fatalf("call %d of the streak: %v, want SERVER_TIMEOUT", i, err)
			}
		}
		svc.slow.Store(false)
		var who string
		if err := r.Call(ctxT(t), "Who", nil, &who); err != nil || who != "only" {
			t.Fatalf("call after the streak: %q, %v; want an answer", who, err)
		}
	}

	streak()
	first := logs.find(msgNotEjected)
	if len(first) != 1 {
		t.Fatalf("after the first streak %d not-ejected lines, want 1", len(first))
	}
	if w := first[0]; w.level != slog.LevelWarn || w.attrs["provider"] != addr || w.attrs["streaks_not_logged"] != "0" ||
		w.attrs["logged_at_most_every"] != "2s" || !strings.Contains(w.msg, "last available provider") {
		t.Fatalf("first line %v %q %v, want WARN naming %s, streaks_not_logged 0, logged_at_most_every 2s", w.level, w.msg, w.attrs, addr)
	}
	streak()
	streak()
	if since := time.Since(first[0].at); since >= period {
		t.Skipf("three streaks took %v, more than the %v period (machine too loaded to test the bound)", since, period)
	}
	if n := len(logs.find(msgNotEjected)); n != 1 {
		t.Fatalf("three streaks within %v wrote %d not-ejected lines, want 1", period, n)
	}

	time.Sleep(time.Until(first[0].at.Add(period + 50*time.Millisecond)))
	streak()
	lines := logs.find(msgNotEjected)
	if len(lines) != 2 {
		t.Fatalf("a streak after the period: %d not-ejected lines in all, want 2", len(lines))
	}
	if got := lines[1].attrs["streaks_not_logged"]; got != "2" {
		t.Errorf("second line's streaks_not_logged %q, want 2 (the two streaks left out)", got)
	}
}
