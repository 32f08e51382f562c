package kernel

import (
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

const msgCheckHold = "kernel: provider not picked while its liveness ping is unanswered"

// duSetup: two providers and a third behind a proxy that can stall it
// (Pause), referred by a consumer with query (plus the t86.picks
// balancer noting its picks), all three connected. It returns the proxy,
// the reference, the consumer's records and the picks.
func duSetup(t *testing.T, query string) (*testproxy.Proxy, *Reference, recordLog, *pickLog) {
	_, a := namedProvider(t, "a")
	_, b := namedProvider(t, "b")
	_, third := namedProvider(t, "third")
	px := testproxy.New(t, third)
	c, logs, picks := pickingConsumer(t)
	r := refer(t, c, "airnode://"+a+","+b+","+px.Addr()+"/t12.Who?loadbalance=t86.picks&"+query)
	eventually(t, "three providers connected", func() bool {
		return len(r.Providers()) == 3 && len(r.dir.List(&spi.Invocation{Method: "Who"})) == 3
	})
	return px, r, logs, picks
}

// TestDU_FrozenProviderNotPickedWhileItsPingWaits (tester102 #1): three
// providers, one frozen (a proxy that stops forwarding: nothing read,
// nothing answered), four callers, timeout 1s, failfast so that each
// failure is seen. The first timeouts start the liveness check (a ping
// waiting 1 s); while it waits the provider is not picked, so the calls
// that fail are only those sent to it before the first timeout, and none
// is sent to it from then until its connection is closed and redialled.
// Before, the balancer kept picking it and a second wave of calls waited
// on it until the check closed the connection (+2 s).
func TestDU_FrozenProviderNotPickedWhileItsPingWaits(t *testing.T) {
	px, r, logs, picks := duSetup(t, "timeout=1s&cluster=failfast&connect.timeout=500ms&reconnect.backoff=100ms")
	calls := startCalls(t, r, 4)
	time.Sleep(300 * time.Millisecond)
	frozeAt := time.Now()
	px.Pause(true)
	time.Sleep(4 * time.Second) // the check's ping waits 1 s after the first timeout at +1 s, then redials
	calls.end()
	px.Pause(false)

	var first time.Time
	failed := calls.failures()
	for _, cl := range failed {
		if first.IsZero() || cl.end.Before(first) {
			first = cl.end
		}
	}
	if first.IsZero() {
		t.Fatal("no call failed: the provider was not frozen")
	}
	holds := logs.find(msgCheckHold)
	if len(holds) != 1 || holds[0].attrs["provider"] != px.Addr() || holds[0].level.String() != "INFO" {
		t.Fatalf("hold lines %v, want one INFO naming %s", holds, px.Addr())
	}
	// The hold begins with the check, at the first timeout of a call sent
	// with nothing read since; under load a response read just after a
	// call was sent makes its timeout not silent, and the next timeout
	// starts the check: the bounds count from the hold's line.
	held := holds[0].at
	t.Logf("first timeout %v after the freeze, hold %v after it; %d calls failed", first.Sub(frozeAt).Round(time.Millisecond),
		held.Sub(first).Round(time.Millisecond), len(failed))
	for _, cl := range failed {
		if !cl.start.Before(held) {
			t.Errorf("a call sent %v after the hold began failed at +%v: %v",
				cl.start.Sub(held).Round(time.Millisecond), cl.end.Sub(frozeAt).Round(time.Millisecond), cl.err)
		}
	}
	if held.Sub(first) < 100*time.Millisecond && len(failed) > 4 {
		t.Errorf("%d calls failed, want at most the 4 callers' calls in flight at the freeze", len(failed))
	}
	// a margin for a pick made as the hold began
	if n := picks.between(px.Addr(), held.Add(50*time.Millisecond), frozeAt.Add(4*time.Second)); n != 0 {
		t.Errorf("%d calls sent to the frozen provider after its check started, want 0", n)
	}
	if ej := logs.find(msgEjected); len(ej) != 0 {
		t.Logf("ejected too: %v", ej)
	}
}

// TestDU_SlowProviderPickedAgainWhenItsPingIsAnswered: a provider left
// out while its liveness ping waits is picked again as soon as the ping
// is answered (it was only stalled), its connection kept.
func TestDU_SlowProviderPickedAgainWhenItsPingIsAnswered(t *testing.T) {
	px, r, logs, picks := duSetup(t, "timeout=1s&connect.timeout=500ms")
	startCalls(t, r, 4)
	time.Sleep(200 * time.Millisecond)
	px.Pause(true)
	if !waitFor(5*time.Second, func() bool { return len(logs.find(msgCheckHold)) > 0 }) {
		t.Fatal("no hold line within 5 s of the stall")
	}
	time.Sleep(300 * time.Millisecond) // within the ping's 1 s wait
	answered := time.Now()
	px.Pause(false)
	if !waitFor(2*time.Second, func() bool { return picks.between(px.Addr(), answered, time.Now()) > 0 }) {
		t.Fatal("not picked within 2 s of answering its ping")
	}
	t.Logf("picked again %v after the answer", time.Since(answered).Round(time.Millisecond))
	time.Sleep(1500 * time.Millisecond)
	if cl := livenessCloses(logs, px.Addr()); len(cl) != 0 {
		t.Errorf("the check closed a provider that answered its ping: %v", cl)
	}
}
