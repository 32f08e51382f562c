package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/heartbeat/dual"
	"github.com/airnode/airnode/extensions/heartbeat/idle"
	"github.com/airnode/airnode/extensions/heartbeat/none"
	"github.com/airnode/airnode/spi"
)

// buildViaCatalog selects and builds a heartbeat the way the kernel does:
// normalize the bare-number form, select by the heartbeat key, Build.
func buildViaCatalog(t *testing.T, query string) (spi.Heartbeat, error) {
	t.Helper()
	cat := bundle.Catalogs()
	u := cat.Heartbeat.Normalize(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?" + query))
	b, _, err := cat.Heartbeat.Select(u, "")
	if err != nil {
		t.Fatal(err)
	}
	return b.Build(u)
}

func TestHeartbeatSelectionThroughCatalog(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query    string
		name     string
		interval time.Duration
	}{
		{"", idle.Name, 60 * time.Second},
		{"heartbeat=3000", idle.Name, 3 * time.Second},
		{"heartbeat=dual&heartbeat.interval=1s", dual.Name, time.Second},
		{"heartbeat=none", none.Name, 0},
	} {
		hb, err := buildViaCatalog(t, tc.query)
		if err != nil {
			t.Errorf("%q: %v", tc.query, err)
			continue
		}
		var name string
		var interval time.Duration
		switch h := hb.(type) {
		case *idle.Heartbeat:
			name, interval = idle.Name, h.Config().Interval
		case *dual.Heartbeat:
			name, interval = dual.Name, h.Config().Interval
		case none.Heartbeat:
			name = none.Name
		}
		if name != tc.name || interval != tc.interval {
			t.Errorf("%q: got %s at %v, want %s at %v", tc.query, name, interval, tc.name, tc.interval)
		}
	}
}

// Issue 4 acceptance, through the catalog as the kernel builds it.
func TestDualTimeoutUnderTwiceIntervalRejected(t *testing.T) {
	t.Parallel()
	_, err := buildViaCatalog(t, "heartbeat=dual&heartbeat.interval=10s&heartbeat.timeout=15s")
	if err == nil {
		t.Fatal("heartbeat.timeout 15s with heartbeat.interval 10s accepted")
	}
	for _, want := range []string{"heartbeat.timeout", "heartbeat.interval", "2 ×"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
