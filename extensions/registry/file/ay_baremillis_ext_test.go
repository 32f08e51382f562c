package file_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/spi"
)

// TestAy_BarePollBelowRangeSaysMilliseconds (nu83 #10): a bare poll=1 is
// 1ms, below the range; the error says a bare number is milliseconds.
func TestAy_BarePollBelowRangeSaysMilliseconds(t *testing.T) {
	_, err := file.Builder{}.Build(spi.MustParse("file://" + t.TempDir() + "?poll=1"))
	if err == nil || !strings.Contains(err.Error(), "out of range") || !strings.Contains(err.Error(), "1 is 1ms (a bare number is milliseconds, as in Dubbo); write 1s for seconds") {
		t.Errorf("poll=1: %v, want out of range and the bare-number note", err)
	}
}
