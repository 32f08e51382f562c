package kernel

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/spi"
)

// A reference's consumer entry publishes neither its token (a reference
// through a registry does not use it, and a team that sets the provider's
// token on both sides published the provider's secret) nor the paths of
// its TLS files (tester68 F1, F2); its other keys stay.
func TestT68_ConsumerEntryHasNoSecretsOrKeyPaths(t *testing.T) {
	cat := testCatalogs(t)
	regURL := spi.MustParse("file://" + t.TempDir())
	p := NewNode(cat, WithLogger(quiet), WithRegistry(regURL), WithShutdownWait(0))
	defer p.Close()
	if _, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	ca := tlsconftest.NewCA(t, "pki")
	cert, key := ca.Issue(t, "client")
	c := NewNode(cat, WithLogger(quiet), WithRegistry(regURL))
	defer c.Close()
	q := url.Values{"token": {"ConsumerSide1"}, "Echo.token": {"M3thod"}, "tls.ca": {ca.CertFile}, "tls.cert": {cert}, "tls.key": {key}, "retries": {"1"}}
	if _, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?"+q.Encode()), spi.URL{}); err != nil {
		t.Fatal(err)
	}
	b, err := cat.Registry.Get("file")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := b.Build(regURL)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	lister, ok := reg.(interface {
		Consumers(context.Context, spi.URL) ([]spi.URL, error)
	})
	if !ok {
		t.Fatalf("file registry %T lists no consumers", reg)
	}
	list, err := lister.Consumers(ctxT(t), spi.MustParse("airnode:///demo.Echo"))
	if err != nil || len(list) != 1 {
		t.Fatalf("consumer entries %v, %v; want 1", list, err)
	}
	e := list[0].String()
	for _, leak := range []string{"ConsumerSide1", "M3thod", "token", "tls.", url.QueryEscape(key), url.QueryEscape(ca.CertFile)} {
		if strings.Contains(e, leak) {
			t.Errorf("consumer entry %s publishes %q", e, leak)
		}
	}
	if !strings.Contains(e, "retries=1") {
		t.Errorf("consumer entry %s lost the reference's other keys", e)
	}
}
