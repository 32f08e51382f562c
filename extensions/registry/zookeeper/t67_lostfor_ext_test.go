package zookeeper_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// A connection to ZooKeeper closed at once (ZooKeeper stopped: the
// client reads EOF) and back 2 s later: "connected again" says
// lost_for= from when the loss was noticed, about the 2 s of the outage
// for every process, and unheard_for= from the last bytes heard, which is
// longer by up to a ping interval and differs between processes
// (tester67 #5: down_for= measured from the last packet, three providers
// gave three durations for one outage).
func TestT67_5_ConnectedAgainSaysLostFor(t *testing.T) {
	px := testproxy.New(t, server.Addr())
	var plog lineLog
	p, err := zookeeper.Builder{Logger: slog.New(&plog)}.Build(spi.MustParse("zookeeper://" + px.Addr() + "?root=t67lost&session.timeout=10s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the last ping answer falls before the cut
	cut := time.Now()
	unreachable(px)
	plog.waitFor(t, 5*time.Second, "connection lost")
	time.Sleep(2*time.Second - time.Since(cut))
	px.Refuse(false)
	reopened := time.Since(cut)
	back := plog.waitFor(t, 15*time.Second, "connected again")
	t.Logf("connected again: %v", back.attrs)
	lost, err := time.ParseDuration(back.attrs["lost_for"])
	if err != nil || lost < 1900*time.Millisecond || lost > since(cut, back.at)+100*time.Millisecond {
		t.Errorf("lost_for=%q; want from the cut (noticed at once) to the new connection: %v to %v", back.attrs["lost_for"], reopened, since(cut, back.at))
	}
	if unheard, err := time.ParseDuration(back.attrs["unheard_for"]); err != nil || unheard < lost {
		t.Errorf("unheard_for=%q; want at least lost_for=%v (from the last bytes heard, before the cut)", back.attrs["unheard_for"], lost)
	}
	if _, ok := back.attrs["down_for"]; ok {
		t.Errorf("connected again still says down_for=%s", back.attrs["down_for"])
	}
}
