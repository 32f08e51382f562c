package pluginhost_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// fix-dc #1 for an out-of-process filter: a plain error a filter plugin
// (moody, F_MODE=refuse, declared as acme.moody) answers without calling
// next names it by its name in the catalog, on either side.
func TestPluginFilterRefusalNamesTheFilter(t *testing.T) {
	for _, tc := range []struct {
		side   spi.Side
		status spi.Status
		text   string
	}{
		{spi.Provider, spi.StatusServiceError, `SERVICE_ERROR: kernel: demo.Echo.Echo did not run: provider filter "acme.moody" refused the call: moody: refused`},
		{spi.Consumer, spi.StatusClientError, `CLIENT_ERROR: kernel: call demo.Echo.Echo: consumer filter "acme.moody": moody: refused`},
	} {
		t.Run(string(tc.side), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cat, _ := moodyHost(t, "filter", map[string]string{"F_MODE": "refuse"})
			ref := sidedEcho(t, ctx, tc.side, cat, "127.0.0.1:0")
			_, err := ref.Invoke(ctx, "Echo", "hello")
			var se *spi.Error
			if !errors.As(err, &se) || se.Status != tc.status || err.Error() != tc.text {
				t.Fatalf("got %v (%T), want %v %q", err, err, tc.status, tc.text)
			}
		})
	}
}
