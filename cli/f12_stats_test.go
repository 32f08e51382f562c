package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// F12: airnode stats on a consumer node prints a line per provider of
// each referenced service under the method table: real provider and
// consumer nodes on loopback, the consumer's registry served over HTTP.
func TestF12_StatsPrintsTheConsumersProviders(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	defer p.Close()
	exp, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	c := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	defer c.Close()
	ref, err := c.Refer(ctx, spi.MustParse("airnode://"+exp.URL().Address()+"/demo.Echo?retries=0"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := ref.Invoke(ctx, "Echo", "x"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ref.Invoke(ctx, "Fail", "boom"); spi.StatusOf(err) != spi.StatusServiceError {
		t.Fatalf("Fail: %v", err)
	}
	b, err := c.Catalogs().Filter.Get(metrics.Name)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := metrics.RegistryOf(b)
	srv, err := metrics.Listen("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"stats", srv.Addr().String()}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	t.Logf("airnode stats:\n%s", out.String())
	var header, line []string
	for l := range strings.SplitSeq(out.String(), "\n") {
		switch f := strings.Fields(l); {
		case len(f) > 1 && f[0] == "SERVICE" && f[1] == "PROVIDER":
			header = f
		case len(f) > 1 && f[0] == "demo.Echo" && f[1] == exp.URL().Address():
			line = f
		}
	}
	if want := []string{"SERVICE", "PROVIDER", "CALLS", "FAILURES", "FAILED", "IN-FLIGHT", "MEAN/30s", "STATE", "WEIGHT", "WARM-UP", "BY-STATUS"}; strings.Join(header, " ") != strings.Join(want, " ") {
		t.Errorf("provider table header %q, want %q", header, want)
	}
	// 4 calls, 1 failed (SERVICE_ERROR: the provider's method failed),
	// none in flight, a mean of the 3 successful ones, available, weight
	// 100 and no warm-up (referred by address: its URL has no timestamp,
	// so the balancers take it as warm), the failure by its status
	// (8675959).
	if len(line) != 11 || line[2] != "4" || line[3] != "1" || line[4] != "25.00%" || line[5] != "0" || !strings.HasSuffix(line[6], "ms") || line[7] != "available" ||
		line[8] != "100" || line[9] != "-" || line[10] != "SERVICE_ERROR=1" {
		t.Errorf("provider line %q: want 4 calls, 1 failure, 25.00%%, 0 in flight, a mean in ms, available, weight 100, no warm-up, SERVICE_ERROR=1", line)
	}
	// A node with no references (the provider) prints no provider table.
	pb, _ := p.Catalogs().Filter.Get(metrics.Name)
	preg, _ := metrics.RegistryOf(pb)
	if rows := preg.Providers(); rows != nil {
		t.Errorf("the provider node's providers: %+v", rows)
	}
}
