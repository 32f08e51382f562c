package config_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/airnode/airnode/kernel/config"
)

// TestDemoKey: serve's built-in demo.Echo is on by default and turned off
// by the file's "demo: false", AIRNODE_DEMO=false or --demo=false, each
// beating the one before as the other settings do; a value that is no
// bool is an error naming where it came from (tester17 finding 3).
func TestDemoKey(t *testing.T) {
	if c, err := config.Load(config.Source{}); err != nil || !c.Demo {
		t.Fatalf("default: Demo %v, %v; want true", c.Demo, err)
	}
	off := writeFile(t, "demo: false\n")
	c, err := config.Load(config.Source{File: off})
	if err != nil || c.Demo {
		t.Fatalf("demo: false in the file: Demo %v, %v", c.Demo, err)
	}
	c, err = config.Load(config.Source{File: off, Environ: []string{"AIRNODE_DEMO=true"}})
	if err != nil || !c.Demo {
		t.Fatalf("AIRNODE_DEMO=true over the file: Demo %v, %v", c.Demo, err)
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	config.AddFlags(fs)
	if err := fs.Parse([]string{"--demo=false"}); err != nil {
		t.Fatal(err)
	}
	c, err = config.Load(config.Source{Environ: []string{"AIRNODE_DEMO=true"}, Flags: fs})
	if err != nil || c.Demo {
		t.Fatalf("--demo=false over the environment: Demo %v, %v", c.Demo, err)
	}
	for _, tc := range []struct {
		src  config.Source
		want string
	}{
		{config.Source{File: writeFile(t, "demo: maybe\n")}, `key "demo": "maybe" is not a bool: want true or false`},
		{config.Source{Environ: []string{"AIRNODE_DEMO=nope"}}, `environment AIRNODE_DEMO: "nope" is not a bool`}, // off is a bool (ParseBool)
	} {
		if _, err := config.Load(tc.src); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v; want an error containing %q", err, tc.want)
		}
	}
}
