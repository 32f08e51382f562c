package kernel_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// fix-dd #2: the warning of a bare number from AIRNODE_PROVIDER_TIMEOUT=5
// or AIRNODE_CONSUMER_TIMEOUT=5 named the key, timeout=5, which the user
// never wrote. With kernel.WithKeySource(cfg.EnvSource) Export and Refer
// (and ReferWarnings) name the variable; a value the URL itself gives
// (timeout=7 over the variable's 5) keeps the key's name. Real TCP on
// loopback.
func TestDD_BareMillisWarningNamesTheVariable(t *testing.T) {
	cfg, err := ctLoad(t, "listen: 127.0.0.1:0\n", "AIRNODE_PROVIDER_TIMEOUT=5", "AIRNODE_CONSUMER_TIMEOUT=5")
	if err != nil {
		t.Fatal(err)
	}
	newNode := func(log *logbuf.Buffer) *kernel.Node {
		n := kernel.NewNode(bundle.Catalogs(), kernel.WithShutdownWait(0), kernel.WithKeySource(cfg.EnvSource),
			kernel.WithLogger(slog.New(slog.NewTextHandler(log, nil))))
		t.Cleanup(func() { _ = n.Close() })
		return n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var plog logbuf.Buffer
	u, err := cfg.ExportURL(config.Service{Interface: "t.Ct"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := newNode(&plog).Export(ctx, cfg2Echo{}, u)
	if err != nil {
		t.Fatalf("export %s: %v", u, err)
	}
	addr := e.URL().Address()
	if got := plog.String(); strings.Count(got, "AIRNODE_PROVIDER_"+ctBareNote("TIMEOUT", "5")) != 1 || strings.Contains(got, `msg="timeout=5`) {
		t.Errorf("export log:\n%s\nwant one warning naming AIRNODE_PROVIDER_TIMEOUT=5, none naming timeout=5", got)
	}

	for _, c := range []struct{ url, want string }{
		{"airnode://" + addr + "/t.Ct", "AIRNODE_CONSUMER_" + ctBareNote("TIMEOUT", "5")},
		{"airnode://" + addr + "/t.Ct?timeout=7", ctBareNote("timeout", "7")},
	} {
		var rlog logbuf.Buffer
		n := newNode(&rlog)
		ru, _ := cfg.ApplyReference(spi.MustParse(c.url))
		warns, _ := n.ReferWarnings(ru)
		if len(warns) != 1 || warns[0].Key != "timeout" || warns[0].Kind != "baremillis" {
			t.Errorf("ReferWarnings(%s) = %+v; want one baremillis warning of key timeout", ru, warns)
		}
		r, err := n.Refer(ctx, ru, spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Close()
		if got := rlog.String(); strings.Count(got, `msg="`+c.want) != 1 {
			t.Errorf("refer %s log:\n%s\nwant one warning %q", c.url, got, c.want)
		}
	}
}
