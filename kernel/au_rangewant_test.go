package kernel_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// tester81 #7: one key's message said a different range with each bad
// value: executes=-1 "want an integer ≥ 0" (serve's check), executes=2000000
// "an integer from 0 (no limit) to 1048576" (executelimit),
// retry.tokens=abc "an integer", retry.ratio "greater than 0 and at most
// 1, at least 0.001". Each key, each bad value, through the real paths
// that check it (serve's and plugins.yaml's check, config.CheckParams;
// a real Export or Refer on loopback building the bundled extensions),
// must give one "want" text stating the whole range.
func TestAU_OneRangeMessagePerKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ints := []string{"-1", "abc", "1.5", "99999999", " "}
	for _, c := range []struct {
		key, side, extra string // side: where the key is read (provider: Export, consumer: Refer)
		values           []string
		want             string
	}{
		{"executes", "provider", "", ints, "an integer from 0 (no limit) to 1048576"},
		{"threads", "provider", "", append(ints, "0"), "an integer from 1 to 1048576"},
		{"actives", "consumer", "", ints, "an integer from 0 (no limit) to 1048576"},
		{"retries", "consumer", "", ints, "an integer from 0 to 100"},
		{"retry.tokens", "consumer", "", ints, "an integer from 0 (no retry budget) to 1000"},
		{"retry.ratio", "consumer", "&retry.tokens=10", []string{"0", "-1", "abc", "5", "1e-4", "NaN"}, "a decimal number from 0.001 to 1 (tokens a successful call gives back)"},
		{"forks", "consumer", "&cluster=forking", append(ints, "0"), "an integer from 1 to 100"},
		{"hash.nodes", "consumer", "&loadbalance=consistenthash", append(ints, "0"), "an integer from 1 to 65536"},
		{"outlier.max.percent", "consumer", "", append(ints, "101"), "an integer from 0 to 100"},
	} {
		for _, v := range c.values {
			q := c.key + "=" + v + c.extra
			var errs []error
			if err := config.CheckParams(map[string]string{c.key: v}); err != nil {
				errs = append(errs, err) // a kernel key: serve's and plugins.yaml's check
			}
			n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
			var err error
			if c.side == "provider" {
				_, err = n.ExportInvoker(ctx, spi.MustParse("airnode://127.0.0.1:0/au.Range?methods=Do&"+q),
					spi.InvokerFunc(func(context.Context, *spi.Invocation) spi.Result { return spi.Result{} }))
			} else {
				_, err = n.Refer(ctx, spi.MustParse("airnode://127.0.0.1:37301/au.Range?"+q), spi.URL{})
			}
			if err == nil {
				t.Errorf("%s %s: accepted", c.side, q)
			}
			errs = append(errs, err)
			for _, err := range errs {
				var pe *spi.ParamError
				if !errors.As(err, &pe) || pe.Want != c.want {
					t.Errorf("%s: %v, want a *spi.ParamError wanting %q", q, err, c.want)
				}
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
