package none_test

import (
	"runtime"
	"testing"

	"github.com/airnode/airnode/extensions/heartbeat/internal/hbtest"
	"github.com/airnode/airnode/extensions/heartbeat/none"
	"github.com/airnode/airnode/spi"
)

func TestNoneWatchesNothing(t *testing.T) {
	hb, err := none.Builder{}.Build(spi.MustParse("airnode://h:1/s?heartbeat=none&heartbeat.interval=bad"))
	if err != nil {
		t.Fatal(err)
	}
	if (none.Builder{}).Name() != none.Name || none.Name != "none" {
		t.Fatalf("name %q", none.Name)
	}
	before := runtime.NumGoroutine()
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Answering)
	stop := hb.Watch(ch)
	if n := runtime.NumGoroutine(); n != before {
		t.Fatalf("Watch started %d goroutines", n-before)
	}
	stop()
	stop()
	if ch.Pings() != 0 {
		t.Fatal("none pinged")
	}
}
