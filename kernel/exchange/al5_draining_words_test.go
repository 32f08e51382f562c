package exchange

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestAL5_DrainingEventLineSaysOnlyWhatTheConsumerKnows (tester80 #5):
// the draining event tells the consumer that the provider drains, not
// that its registry entry is gone (the provider sends it before it
// unregisters, and an unregister without a registry session leaves the
// entry listed). The consumer's line says the provider announced it,
// and claims no unregister. Over a real loopback connection.
func TestAL5_DrainingEventLineSaysOnlyWhatTheConsumerKnows(t *testing.T) {
	f := startServer(t, false, nil)
	logs := &logSink{}
	ch := f.dial(func(o *Options) { o.Logger = slog.New(logs) })
	if res := ch.Invoke(t.Context(), mpCodec{}, echoInv("Echo", "x"), 5*time.Second); res.Err != nil {
		t.Fatal(res.Err)
	}
	f.srv.AnnounceDraining()
	if !waitFor(10*time.Second, ch.Draining) {
		t.Fatal("the consumer channel never saw the draining event")
	}
	const want = "provider announced it is draining: it shuts down soon"
	if logs.find(want) == "" {
		t.Fatalf("no consumer line %q; lines:\n%s", want, strings.Join(logs.lines(), "\n"))
	}
	for _, l := range logs.lines() {
		if strings.Contains(l, "unregistered") {
			t.Errorf("the consumer claims an unregister it cannot know of: %s", l)
		}
	}
}
