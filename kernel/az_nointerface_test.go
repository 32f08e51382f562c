package kernel

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// TestAz_ExportHostThatLooksLikeAnInterface (fix-ay leftover): Export of
// airnode://shop.Shop (two slashes: shop.Shop is the host) said only "no
// service interface", where Refer suggests the URL meant; Export suggests
// one with an address to listen on, which it needs (three slashes would
// name none), and nothing listens.
func TestAz_ExportHostThatLooksLikeAnInterface(t *testing.T) {
	n := consumer(t)
	_, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://shop.Shop?weight=5"))
	want := `kernel: export airnode://shop.Shop?weight=5: no service interface (want scheme://host:port/interface); did you mean "airnode://127.0.0.1:20880/shop.Shop?weight=5"? (the host is the address to listen on`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Export(airnode://shop.Shop) = %v, want %q...", err, want)
	}
	_, err = n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0"))
	if err == nil || !strings.Contains(err.Error(), "no service interface") || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Export(airnode://127.0.0.1:0) = %v, want no interface and no suggestion", err)
	}
}
