package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/config"
)

// tester75 #1: serve --shutdown-timeout 1s alone refused to start, blaming
// a shutdown.wait of 2s nobody gave (the default). The default wait is cut
// to half of a budget under twice it; a wait given explicitly is still
// checked against the budget.
func TestT75_DefaultShutdownWaitFitsAShortTimeout(t *testing.T) {
	c, err := config.Load(config.Source{Environ: []string{"AIRNODE_SHUTDOWN_TIMEOUT=1s"}})
	if err != nil || c.Shutdown.Wait != 500*time.Millisecond || c.Shutdown.Timeout != time.Second {
		t.Fatalf("timeout 1s alone: wait %v, timeout %v, %v; want 500ms of 1s", c.Shutdown.Wait, c.Shutdown.Timeout, err)
	}
	if c, err = config.Load(config.Source{Environ: []string{"AIRNODE_SHUTDOWN_TIMEOUT=10s"}}); err != nil || c.Shutdown.Wait != config.DefaultShutdownWait {
		t.Fatalf("timeout 10s: wait %v, %v; want the default %v", c.Shutdown.Wait, err, config.DefaultShutdownWait)
	}
	_, err = config.Load(config.Source{Environ: []string{"AIRNODE_SHUTDOWN_TIMEOUT=1s", "AIRNODE_SHUTDOWN_WAIT=2s"}})
	if err == nil || !strings.Contains(err.Error(), "must be between 0 and shutdown.timeout") {
		t.Fatalf("an explicit wait over the timeout: %v, want refused", err)
	}
}
