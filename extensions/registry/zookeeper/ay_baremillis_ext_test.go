package zookeeper_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// TestAy_BareNumberBelowRangeSaysMilliseconds (nu83 #10): session.timeout=4
// was "4ms out of range 400ms..1h0m0s" with no word that a bare number is
// milliseconds; it now says so as the kernel's timeout=5 warning does. A
// value with a unit below the range gets no such note.
func TestAy_BareNumberBelowRangeSaysMilliseconds(t *testing.T) {
	for key, want := range map[string]string{
		"session.timeout=4": "session.timeout=4ms out of range 400ms..1h0m0s: 4 is 4ms (a bare number is milliseconds, as in Dubbo); write 4s for seconds",
		"connect.timeout=3": "connect.timeout=3ms out of range",
	} {
		_, err := zookeeper.Builder{}.Build(spi.MustParse("zookeeper://127.0.0.1:2181?" + key))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "a bare number is milliseconds") {
			t.Errorf("%s: %v, want %q and the bare-number note", key, err, want)
		}
	}
	_, err := zookeeper.Builder{}.Build(spi.MustParse("zookeeper://127.0.0.1:2181?session.timeout=4ms"))
	if err == nil || !strings.Contains(err.Error(), "out of range") || strings.Contains(err.Error(), "bare number") {
		t.Errorf("session.timeout=4ms: %v, want out of range with no bare-number note", err)
	}
}
