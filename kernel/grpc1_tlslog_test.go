package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/spi"
)

// A TLS provider's warning about a consumer that speaks clear text goes
// through the provider node's logger (WithLogger), on both transports,
// not through slog.Default(): a process logs in one format.
func TestTLSHandshakeWarningGoesToTheNodeLogger(t *testing.T) {
	var deflt logbuf.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&deflt, nil)))
	defer slog.SetDefault(old)

	ca := tlsconftest.NewCA(t, "grpc1 CA")
	cert, key := ca.Issue(t, "provider")
	for _, tr := range []string{"smux", "tcp"} {
		t.Run(tr, func(t *testing.T) {
			var plogs logbuf.Buffer
			p := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&plogs, nil))), WithShutdownWait(0))
			defer p.Close()
			e, err := p.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport="+tr+
				"&tls=true&tls.cert="+cert+"&tls.key="+key))
			if err != nil {
				t.Fatal(err)
			}
			c := NewNode(testCatalogs(t), WithLogger(quiet))
			defer c.Close()
			r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?transport="+tr+"&timeout=300ms"), spi.URL{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var out string
			if err := r.Call(ctxT(t), "Echo", []any{"x"}, &out); err == nil {
				t.Fatal("a clear-text call to a TLS provider succeeded")
			}
			eventually(t, "the provider's handshake warning", func() bool {
				return strings.Contains(plogs.String(), "TLS handshake failed; connection closed")
			})
			if !strings.Contains(plogs.String(), "the consumer speaks clear text") {
				t.Errorf("provider log lacks the hint:\n%s", plogs.String())
			}
		})
	}
	if strings.Contains(deflt.String(), "tlsconf") {
		t.Errorf("slog.Default() got a tlsconf line:\n%s", deflt.String())
	}
}
