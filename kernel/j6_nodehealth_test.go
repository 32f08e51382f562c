package kernel

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// tester71 #6: a service marked not serving (serve: a plugin it depends
// on is unresponsive) showed in its own Check only; the node ("") said
// SERVING with nothing more. Now the node stays SERVING while another
// service on the address serves, with a "warning" attachment naming the
// service and why, and answers NOT_SERVING, naming every service, once
// none serves.
func TestNodeHealthWarnsOfServicesNotServing(t *testing.T) {
	cat := testCatalogs(t)
	p, e, _, r := healthSetup(t, cat, "airnode://127.0.0.1:0/demo.Echo", WithShutdownWait(0))
	defer p.Close()
	e2, err := p.Export(ctxT(t), demo.New("p2", 100), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?group=g2"))
	if err != nil {
		t.Fatal(err)
	}
	nodeCheck := func() (status, reason, warning string) {
		t.Helper()
		var att map[string]string
		v, err := r.Invoke(spi.ReceiveAttachments(ctxT(t), &att), HealthCheck, "")
		if err != nil {
			t.Fatalf("Check(\"\"): %v", err)
		}
		s, _ := v.(string)
		return s, att[HealthReasonAttachment], att[HealthWarningAttachment]
	}
	if st, why, warn := nodeCheck(); st != HealthServing || why != "" || warn != "" {
		t.Fatalf("node with every service serving: %s reason %q warning %q; want SERVING, no reason, no warning", st, why, warn)
	}

	e2.SetServing(false, `service plugin "greeter" running: unresponsive`)
	st, why, warn := nodeCheck()
	if st != HealthServing || why != "" || warn != `g2/demo.Echo: service plugin "greeter" running: unresponsive` {
		t.Fatalf("node with one of two services not serving: %s reason %q warning %q; want SERVING with a warning naming g2/demo.Echo and why", st, why, warn)
	}

	e.SetServing(false, `filter plugin "tenant" running: unresponsive`)
	st, why, warn = nodeCheck()
	if st != HealthNotServing || warn != "" ||
		!strings.Contains(why, "no service exported on "+e.URL().Address()+" serves") ||
		!strings.Contains(why, `demo.Echo: filter plugin "tenant"`) || !strings.Contains(why, `g2/demo.Echo: service plugin "greeter"`) {
		t.Fatalf("node with no service serving: %s reason %q warning %q; want NOT_SERVING naming both services", st, why, warn)
	}

	e.SetServing(true, "")
	e2.SetServing(true, "")
	if st, why, warn := nodeCheck(); st != HealthServing || why != "" || warn != "" {
		t.Fatalf("node after both serve again: %s reason %q warning %q; want SERVING", st, why, warn)
	}
}
