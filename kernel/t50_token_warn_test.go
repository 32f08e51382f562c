package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// nu50 finding 1: through a registry a reference's own token is not
// used (the provider's published token is sent, Dubbo's semantics), so
// a wrong one still calls; Refer says so in one WARN that never shows
// the value. A direct reference sends its own token and gets no such
// warning.
func TestT50_RegistryReferenceWarnsItsTokenIsNotUsed(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://t50token")
	p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?token=s3cretT50"))
	if err != nil {
		t.Fatal(err)
	}
	const msg = "the reference's own token is not used through a registry"

	var log logbuf.Buffer
	c := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?token=wrongT50"), reg)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || v != "x" {
		t.Fatalf("through the registry with a wrong token of its own: %v, %v; want the provider's token sent", v, err)
	}
	out := log.String()
	if strings.Count(out, msg) != 1 || !strings.Contains(out, "level=WARN") || !strings.Contains(out, "service=demo.Echo key=token") {
		t.Errorf("want one WARN %q naming service and key, got:\n%s", msg, out)
	}
	if strings.Contains(out, "wrongT50") || strings.Contains(out, "s3cretT50") {
		t.Errorf("the warning shows a token:\n%s", out)
	}

	var dlog logbuf.Buffer
	c2 := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&dlog, nil))))
	defer c2.Close()
	d, err := c2.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?token=wrongT50"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Invoke(ctxT(t), "Echo", "x"); spi.StatusOf(err) != spi.StatusBadRequest || !strings.Contains(err.Error(), "wrong token") {
		t.Errorf("direct with a wrong token: %v, want BAD_REQUEST wrong token", err)
	}
	if strings.Contains(dlog.String(), msg) {
		t.Errorf("a direct reference warned its token is not used:\n%s", dlog.String())
	}

	ws, err := c.ReferWarnings(spi.MustParse("airnode:///demo.Echo?token=wrongT50"))
	if err != nil || len(ws) != 1 || ws[0].Kind != "token" || ws[0].Value != "***" || strings.Contains(ws[0].Why, "wrongT50") {
		t.Errorf("ReferWarnings = %+v, %v; want one token warning with the value hidden", ws, err)
	}
}
