package config_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// fix-dd #4: plugins.yaml's keys were matched case-insensitively
// (mapstructure's default: "Services:" loaded as services:) while URL keys
// are not. Each key now matches exactly: another case is an unknown key
// whose error says keys are lower case and names the one meant, at the
// top level and inside an entry; a lower-case file loads as before.
func TestDD_FileKeysAreLowerCase(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"Services:\n  - interface: demo.Echo\n", `unknown key "Services": keys are lower case, as documented: advertise, application, consumer, demo, listen, plugins, protocol, references, registry, services, shutdown; did you mean "services"?`},
		{"REGISTRY: memory://\n", `unknown key "REGISTRY": keys are lower case, as documented: `},
		{"shutdown: {Timeout: 3s}\n", `unknown key "shutdown.Timeout": keys are lower case, as documented: timeout, wait; did you mean "shutdown.timeout"?`},
		{"services:\n  - Interface: demo.Echo\n", `unknown key "services[0].Interface": keys are lower case, as documented: interface, params; did you mean "services[0].interface"?`},
	} {
		_, err := config.Load(config.Source{File: writeFile(t, c.body)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want %q", c.body, err, c.want)
		}
	}
	cfg, err := config.Load(config.Source{File: writeFile(t, "registry: memory://\nservices:\n  - interface: demo.Echo\n    params: {Timeout.X: a}\n")})
	if err != nil {
		t.Fatalf("lower-case keys: %v", err)
	}
	if cfg.Registry != "memory://" || len(cfg.Services) != 1 || cfg.Services[0].Params["Timeout.X"] != "a" {
		t.Errorf("lower-case keys: %+v; want the registry, one service, its params as written", cfg)
	}
}
