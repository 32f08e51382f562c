package sdk

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: the plugin
// tests start a plugin host and two nodes.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
