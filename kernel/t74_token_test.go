package kernel

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// tester74: a reference through a registry with token=true (Dubbo's
// spelling for a random token, which only a provider makes) was warned
// that its own token is not used, then failed Refer for it. It is not
// used: Refer succeeds and each call sends the provider's token. A direct
// reference still refuses it, saying what "true" asks for.
func TestT74_RegistryReferenceTokenTrueIsNotUsed(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://t74tokens")
	p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?token=true"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?token=true"), reg)
	if err != nil {
		t.Fatalf("refer through the registry with token=true: %v", err)
	}
	if v, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || v != "x" {
		t.Fatalf("through the registry: %v, %v", v, err)
	}
	_, err = c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?token=true"), spi.URL{})
	if err == nil || !strings.Contains(err.Error(), `asks for a random token, which only a provider makes`) {
		t.Fatalf("direct reference with token=true: %v", err)
	}
}
