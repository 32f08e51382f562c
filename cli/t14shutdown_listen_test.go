package cli

import (
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// TestT14_11_ServeListenPortZeroOnEveryInterface: serve --listen :0 (the
// README's three providers on one machine) keeps working now that the
// kernel refuses a provider URL with neither host nor port, which ":0"
// would give: serve exports on 0.0.0.0 and a free port. Planned only:
// tests listen on loopback. --listen without a port is refused by the
// configuration (tester14 finding 11).
func TestT14_11_ServeListenPortZeroOnEveryInterface(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Listen = ":0"
	exports, err := planExports(cfg, "", nil, nil, nil, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if len(exports) == 0 || exports[0].url.Host() != "0.0.0.0" || exports[0].url.Port() != 0 {
		t.Fatalf("planExports(--listen :0) = %v, want demo.Echo on 0.0.0.0, port 0", exports)
	}
	cfg.Listen = "127.0.0.1"
	if err := cfg.Validate(); err == nil {
		t.Error("--listen 127.0.0.1 (no port) was accepted")
	}
}
