package metrics_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
)

// quietNode returns a node on the bundled catalogs that logs nothing
// (opts come after its logger and may replace it), closed when the test
// ends.
func quietNode(t *testing.T, opts ...kernel.Option) *kernel.Node {
	t.Helper()
	n := kernel.NewNode(bundle.Catalogs(), append([]kernel.Option{kernel.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)...)
	t.Cleanup(func() { _ = n.Close() })
	return n
}
