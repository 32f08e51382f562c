package smux

import (
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

func TestBuildReadsBuffer(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want int
		bad  bool
	}{
		{"airnode://h:1/s", DefaultBuffer, false},
		{"airnode://h:1/s?smux.buffer=256KiB", 256 << 10, false},
		{"airnode://h:1/s?smux.buffer=64MiB", 64 << 20, false},
		{"airnode://h:1/s?smux.buffer=1GiB", 1 << 30, false},
		{"airnode://h:1/s?smux.buffer=100KiB", 0, true},
		{"airnode://h:1/s?smux.buffer=2GiB", 0, true},
		{"airnode://h:1/s?smux.buffer=lots", 0, true},
		{"airnode://h:1/s?smux.buffer=", 0, true},
	} {
		tr, err := Builder{}.Build(spi.MustParse(tc.url))
		if tc.bad {
			var pe *spi.ParamError
			if !errors.As(err, &pe) || pe.Key != KeyBuffer || !strings.HasPrefix(err.Error(), "smux: ") {
				t.Errorf("%s: %v, want a smux: *spi.ParamError for %s", tc.url, err, KeyBuffer)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		cfg := tr.(*Transport).mux
		if cfg.MaxReceiveBuffer != tc.want || cfg.MaxStreamBuffer != tc.want/4 {
			t.Errorf("%s: buffers %d/%d, want %d/%d", tc.url, cfg.MaxReceiveBuffer, cfg.MaxStreamBuffer, tc.want, tc.want/4)
		}
	}
}

// TestKeepAliveIsOff: the heartbeat extension is the only liveness mechanism
// on a channel (DESIGN §6).
func TestKeepAliveIsOff(t *testing.T) {
	tr, err := Builder{}.Build(spi.MustParse("airnode://h:1/s"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := tr.(*Transport).mux
	if !cfg.KeepAliveDisabled || cfg.Version != 2 || cfg.MaxFrameSize < 32<<10 {
		t.Fatalf("smux config %+v: want keepalive off, protocol 2, frames of 32 KiB or more", cfg)
	}
}
