package kernel

import (
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel/extension"
)

// testCatalogs returns fresh catalogs of every bundled extension (tests
// only: the kernel itself never imports extensions).
func testCatalogs(t testing.TB) *extension.Catalogs {
	t.Helper()
	c := extension.New()
	if err := bundle.Register(c); err != nil {
		t.Fatal(err)
	}
	return c
}
