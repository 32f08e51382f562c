package kernel

import (
	"context"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// checkSvc is a service whose one method is the health service's.
type checkSvc struct{}

func (checkSvc) Check(_ context.Context, service string) (string, error) {
	return "CUSTOM " + service, nil
}

// An interface name a service key could not give back ("grp/nu.Weird:2.0"
// was exported and registered, then no call could reach it: tester66 F6),
// or one with a space, is refused at Export naming the character; the
// health service's name is refused for a service without Check (it would
// replace airnode.Health on the address and fail every probe: tester66
// F5), and taken for one with Check, which then answers the probes.
func TestT66_ExportRefusesUncallableInterfaceNames(t *testing.T) {
	cat := testCatalogs(t)
	n := NewNode(cat, WithLogger(quiet))
	defer n.Close()
	for _, tc := range []struct{ iface, char string }{
		{"grp/nu.Weird:2.0", `'/'`},
		{"nu.Weird:2.0", `':'`},
		{"bad%20name", `' '`}, // the URL's path decodes to "bad name"
		{"a,b", `','`},
	} {
		_, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/"+tc.iface))
		if err == nil || !strings.Contains(err.Error(), "character "+tc.char) || !strings.Contains(err.Error(), "use letters, digits") {
			t.Errorf("Export %s: %v; want a refusal naming %s and what is allowed", tc.iface, err, tc.char)
		}
	}
	for _, ok := range []string{"demo.Echo", "org.acme.Hello$Inner", "my-svc_2"} {
		if err := spi.CheckInterface(ok); err != nil {
			t.Errorf("CheckInterface(%q): %v", ok, err)
		}
	}

	_, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/"+HealthService))
	if err == nil || !strings.Contains(err.Error(), "no method Check (methods: Echo, Fail, Info, Payload, Sleep)") {
		t.Fatalf("Export demo as %s: %v; want a refusal: it has no Check", HealthService, err)
	}
	e, err := n.Export(ctxT(t), checkSvc{}, spi.MustParse("airnode://127.0.0.1:0/"+HealthService))
	if err != nil {
		t.Fatalf("Export a service with Check as %s: %v", HealthService, err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/"+HealthService+"?retries=0"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.Invoke(ctxT(t), HealthCheck, "x"); err != nil || v != "CUSTOM x" {
		t.Errorf("Check through the replacement = %v, %v; want CUSTOM x", v, err)
	}
}
