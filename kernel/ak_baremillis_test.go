package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// tester79 #5: "timeout=5" is 5 ms (a bare number is milliseconds, as in
// Dubbo); Refer warns of it once, plainly and per method, and of every
// other duration key so written (connect.timeout, an extension's
// heartbeat.interval); 0, 50 and more, values with a unit, and a
// registry's key (poll=5: Refer says it does nothing here) pass.
func TestReferWarnsOfBareMillis(t *testing.T) {
	var logs syncBuffer
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer n.Close()
	u := spi.MustParse("airnode://127.0.0.1:1/shop.Inventory?timeout=5&methods.Slow.timeout=20&connect.timeout=3&heartbeat.interval=49&reconnect.backoff=50&warmup=0&retries=2&shortestresponse.slidePeriod=5s&poll=5")
	r, err := n.Refer(ctxT(t), u, spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	out := logs.String()
	for _, want := range []string{
		`msg="timeout=5 is 5ms (a bare number is milliseconds, as in Dubbo); write 5s for seconds" component=kernel service=shop.Inventory key=timeout`,
		`msg="methods.Slow.timeout=20 is 20ms (a bare number is milliseconds, as in Dubbo); write 20s for seconds"`,
		`msg="connect.timeout=3 is 3ms`,
		`msg="heartbeat.interval=49 is 49ms`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, no := range []string{"reconnect.backoff=50 is", "warmup=0 is", "retries=2 is", "slidePeriod=5s is", "poll=5 is"} {
		if strings.Contains(out, no) {
			t.Errorf("log has %q:\n%s", no, out)
		}
	}
	if c := strings.Count(out, "timeout=5 is 5ms"); c != 1 {
		t.Errorf("timeout=5 warned %d times, want once:\n%s", c, out)
	}
}

// Export warns of a provider's bare-number duration as Refer does.
func TestExportWarnsOfBareMillis(t *testing.T) {
	var logs syncBuffer
	p := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0))
	defer p.Close()
	if _, err := p.Export(ctxT(t), whoService{}, spi.MustParse("airnode://127.0.0.1:0/t.Who?timeout=7")); err != nil {
		t.Fatal(err)
	}
	if want := `msg="timeout=7 is 7ms (a bare number is milliseconds, as in Dubbo); write 7s for seconds" component=kernel service=t.Who key=timeout`; !strings.Contains(logs.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, logs.String())
	}
}
