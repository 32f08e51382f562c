package config_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/airnode/airnode/kernel/config"
)

// TestT92_WaitBoundNamesTheTimeoutsSource (tester92 #4): a wait above the
// timeout said "must be between 0 and shutdown.timeout (10s)" without
// where the 10s came from, where serve's -p form names it. Load now
// names the timeout's source: the default, its flag, its variable or the
// file; a Config Load did not make (Validate) names none.
func TestT92_WaitBoundNamesTheTimeoutsSource(t *testing.T) {
	flags := func(args ...string) *pflag.FlagSet {
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		config.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	file := writeFile(t, "shutdown: {timeout: 3s}\n")
	for _, tc := range []struct {
		name string
		src  config.Source
		want string
	}{
		{"default", config.Source{Flags: flags("--shutdown-wait", "15s")},
			"flag --shutdown-wait: 15s must be between 0 and shutdown.timeout (10s, the default)"},
		{"flag", config.Source{Flags: flags("--shutdown-wait", "5s", "--shutdown-timeout", "3s")},
			"flag --shutdown-wait: 5s must be between 0 and shutdown.timeout (3s, --shutdown-timeout)"},
		{"environment", config.Source{Environ: []string{"AIRNODE_SHUTDOWN_TIMEOUT=3s"}, Flags: flags("--shutdown-wait", "5s")},
			"flag --shutdown-wait: 5s must be between 0 and shutdown.timeout (3s, AIRNODE_SHUTDOWN_TIMEOUT)"},
		{"file", config.Source{File: file, Flags: flags("--shutdown-wait", "5s")},
			"flag --shutdown-wait: 5s must be between 0 and shutdown.timeout (3s, shutdown.timeout in " + file + ")"},
	} {
		if _, err := config.Load(tc.src); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	c := config.DefaultConfig()
	c.Shutdown.Wait = 3 * c.Shutdown.Timeout
	if err := c.Validate(); err == nil || !strings.HasSuffix(err.Error(), "must be between 0 and shutdown.timeout (10s)") {
		t.Errorf("Validate: %v; want the bound without a source", err)
	}
}
