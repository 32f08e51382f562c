package kernel

import (
	"log/slog"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// tester80 #8: a provider's records of a consumer's connection name the
// consumer's application (its URL key application, sent once per
// connection), not only its ephemeral port: the close record, and the
// provider's access line of each call.
func TestAS_ProviderCloseRecordNamesConsumerApplication(t *testing.T) {
	var buf logbuf.Buffer
	p := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?accesslog=true"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(testCatalogs(t), WithLogger(quiet))
	r := refer(t, c, "airnode://"+e.URL().Address()+"/demo.Echo?application=billing")
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatal(err)
	}
	_ = c.Close() // the provider's channel closes: "channel closed" reason "closed by peer"
	var closeRec, access map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for closeRec == nil && time.Now().Before(deadline) {
		for _, rec := range jsonRecords(t, &buf) {
			switch rec["msg"] {
			case "channel closed":
				closeRec = rec
			case "access":
				access = rec
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if closeRec == nil {
		t.Fatalf("no provider record of the close:\n%s", buf.String())
	}
	if closeRec["consumer_application"] != "billing" || closeRec["consumer"] == nil {
		t.Errorf("provider's close record %v; want consumer_application=billing with consumer=ADDR", closeRec)
	}
	if access == nil || access["consumer_application"] != "billing" {
		t.Errorf("provider's access line %v; want consumer_application=billing", access)
	}
	for _, rec := range jsonRecords(t, &buf) {
		if rec["component"] == nil {
			t.Errorf("provider record without component: %v", rec)
		}
	}
}
