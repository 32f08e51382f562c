package kernel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/spi"
)

// A consumer that does not trust the provider's certificate, calling every
// 100 ms: the calls fail at once with the verdict and ask for no redial of
// their own, so the dials follow the reconnect backoff (0.5 s doubling:
// about 4 in 6 s) instead of one per minRedialGap (12 in 6 s, two TLS
// handshakes a second for as long as the consumer calls, each a Warn on
// the provider).
func TestCertificateVerdictRedialsOnTheBackoff(t *testing.T) {
	cert, key := tlsconftest.NewCA(t, "provider CA").Issue(t, "127.0.0.1")
	other := tlsconftest.NewCA(t, "another CA").CertFile
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?tls=true&tls.cert="+cert+"&tls.key="+key))
	if err != nil {
		t.Fatal(err)
	}
	px := testproxy.New(t, e.URL().Address())
	r := refer(t, consumer(t), "airnode://"+px.Addr()+"/demo.Echo?retries=0&tls=true&tls.ca="+other+"&reconnect.backoff=500ms")

	const span = 6 * time.Second
	var calls, verdicts int
	for end := time.Now().Add(span); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := r.Invoke(ctx, "Echo", 1)
		cancel()
		calls++
		if err == nil {
			t.Fatal("a call succeeded through a CA the consumer does not trust")
		}
		if strings.Contains(err.Error(), "signed by a CA this consumer does not trust") {
			verdicts++
		}
	}
	dials := len(px.Accepts())
	t.Logf("%d calls in %v: %d named the verdict; %d dials", calls, span, verdicts, dials)
	if verdicts < calls/2 {
		t.Errorf("%d of %d calls named the certificate verdict, want most", verdicts, calls)
	}
	// 0, 0.5, 1.5, 3.5 s (±20 % jitter), and perhaps a 5th near the end
	if dials > 6 {
		t.Errorf("%d dials in %v while calls kept coming every 100 ms, want at most 6 (the backoff: about 4)", dials, span)
	}
}
