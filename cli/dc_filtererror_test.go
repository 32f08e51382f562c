package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// dcFilter is a consumer filter a program registers (WithExtensions),
// in a chain only where a URL's "filter" key names it: "acme.wrap"
// wraps next's error, fmt.Errorf("auth: %w", err); "acme.deny" refuses
// every call with a plain error.
type dcFilter string

func (f dcFilter) Name() string                      { return string(f) }
func (f dcFilter) Activation() spi.Activation        { return spi.Activation{} }
func (f dcFilter) Build(spi.URL) (spi.Filter, error) { return f, nil }

func (f dcFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	if f == "acme.deny" {
		return spi.Result{Err: errors.New("no tenant")}
	}
	r := next.Invoke(ctx, inv)
	if r.Err != nil {
		r.Err = fmt.Errorf("auth: %w", r.Err)
	}
	return r
}

// fix-dc: `airnode call`'s stderr line for a consumer filter's error: a
// wrapper of the provider's SERVICE_ERROR starts with that status, once,
// and keeps the wrapper's text; a plain error is CLIENT_ERROR naming the
// filter.
func TestDC_CallShowsFilterErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prov := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	defer prov.Close()
	exp, err := prov.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:42104/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	acme := WithExtensions(func(cat *extension.Catalogs) error {
		if err := cat.Filter.Register(dcFilter("acme.wrap"), acmeOrigin); err != nil {
			return err
		}
		return cat.Filter.Register(dcFilter("acme.deny"), acmeOrigin)
	})
	for _, tc := range []struct{ filter, want string }{
		{"acme.wrap", "SERVICE_ERROR: auth: boom"},
		{"acme.deny", `CLIENT_ERROR: kernel: call demo.Echo.Fail: consumer filter "acme.deny": no tenant`},
	} {
		code, out, errOut := runCLI(t, []string{"call", "airnode://" + exp.URL().Address() + "/demo.Echo?filter=" + tc.filter, "Fail", `"boom"`}, acme)
		if code == 0 || out != "" || !strings.HasPrefix(errOut, tc.want) || strings.Count(errOut, "_ERROR") != 1 {
			t.Errorf("call through %s: exit %d, stdout %q, stderr %q; want a failure starting %q", tc.filter, code, out, errOut, tc.want)
		}
	}
}
