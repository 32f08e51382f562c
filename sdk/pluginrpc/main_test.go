package pluginrpc

import (
	"path/filepath"
	"testing"

	"github.com/airnode/airnode/internal/testbin"
)

// MoodyBinary is the path of the testdata/moody plugin, built by TestMain
// for the external tests that run it as a real plugin process.
var MoodyBinary string

func TestMain(m *testing.M) {
	testbin.Main(m, func(dir string) { MoodyBinary = filepath.Join(dir, "moody") }, "./testdata/moody")
}
