package kernel

import (
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// fix-ab #3: an ejected provider killed and restarted on the same port,
// with no call and no metrics scrape in between, logs "back in use" when
// its connection is re-made — once, after the reconnect line, naming how
// long it was not connected — and the end of its ejection, while it was
// down, when the ejection ended ("still not connected"). Before, both
// waited for the directory's next look (Available), which only a call or
// a scrape makes: with neither, they were never logged.
func TestAB3_BackInUseLoggedWhenTheConnectionIsRemade(t *testing.T) {
	_, goodAddr := namedProvider(t, "good")
	bad := &namedService{name: "bad"}
	bad.slow.Store(true)
	badNode := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = badNode.Close() })
	e, err := badNode.Export(ctxT(t), bad, spi.MustParse("airnode://127.0.0.1:0/t12.Who?warmup=0"))
	if err != nil {
		t.Fatal(err)
	}
	badAddr := e.URL().Address()

	c, logs := outlierConsumer(t)
	r := refer(t, c, "airnode://"+goodAddr+","+badAddr+"/t12.Who?timeout=300ms&connect.timeout=300ms&reconnect.backoff=100ms&outlier.ejection=2s")
	eventually(t, "both providers connected", func() bool { return len(r.Providers()) == 2 })
	l := startCalls(t, r, outlierCallers)
	if !waitFor(10*time.Second, func() bool { return len(logs.find(msgEjected)) > 0 }) {
		t.Fatal("the slow provider was not ejected within 10 s")
	}
	l.end() // no call from now on
	ej := logs.find(msgEjected)[0]
	if err := badNode.Close(); err != nil { // killed
		t.Fatal(err)
	}

	// The ejection ends while the provider is down: said then.
	if !waitFor(ej.at.Add(2*time.Second+3*time.Second).Sub(time.Now()), func() bool { return len(logs.find(msgEjectionEndedNotConnected)) > 0 }) {
		t.Fatalf("no %q line within 3 s of the ejection's end, no call made", msgEjectionEndedNotConnected)
	}
	if back := logs.find(msgBack); len(back) != 0 {
		t.Fatalf("logged %v while the provider is down", back)
	}

	// Restarted on the same port: back in use when the connection is re-made.
	restarted := time.Now()
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	if _, err := p.Export(ctxT(t), &namedService{name: "bad"}, spi.MustParse("airnode://"+badAddr+"/t12.Who?warmup=0")); err != nil {
		t.Fatal(err)
	}
	if !waitFor(15*time.Second, func() bool { return len(logs.find(msgBack)) > 0 }) {
		t.Fatalf("no %q line within 15 s of the restart, no call made; reconnect lines %v", msgBack, logs.find("kernel: reconnected to provider"))
	}
	time.Sleep(300 * time.Millisecond) // a second line would come now
	back, reconnected := logs.find(msgBack), logs.find("kernel: reconnected to provider")
	if len(back) != 1 || back[0].at.Before(restarted) || back[0].attrs["provider"] != badAddr || back[0].attrs["not_connected_for"] == "" {
		t.Fatalf("back lines %v, want one after the restart naming %s with not_connected_for", back, badAddr)
	}
	if len(reconnected) == 0 || back[0].at.Before(reconnected[len(reconnected)-1].at) {
		t.Errorf("back in use at %v, reconnect lines %v: want it after the reconnect", back[0].at, reconnected)
	}
	t.Logf("restarted, back in use after %v: %v", back[0].at.Sub(restarted).Round(time.Millisecond), back[0].attrs)

	// The directory's next look (a call) does not say it again.
	var who string
	for range 4 {
		_ = r.Call(ctxT(t), "Who", nil, &who)
	}
	if n := len(logs.find(msgBack)); n != 1 {
		t.Errorf("%d back lines after calls, want 1", n)
	}
}
