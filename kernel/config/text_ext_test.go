package config_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// New-user finding: "version: 1.0" under a service's params was read by
// YAML as the float 1 and exported as demo.Echo:1, so consumers of :1.0
// found nothing. URL keys' values (protocol, services and references
// params, plugins env) are now kept as written; other settings keep their
// YAML types (a duration still needs a unit).
func TestURLKeyValuesKeepTheirText(t *testing.T) {
	file := writeFile(t, `listen: "127.0.0.1:0"
protocol:
  timeout.ratio: 0.50
  heartbeat: true
services:
  - interface: demo.Echo
    params:
      version: 1.0
      group: 010
      weight: 200
      owner: 1e3
      token: 0x1F
      tag: yes
      quoted: "2.0"
      empty:
references:
  - interface: demo.Echo
    params:
      version: 2.10
plugins:
  - {name: acme.p2c, point: loadbalance, command: /bin/true, env: {LEVEL: 1.0}}
`)
	c, err := config.Load(config.Source{File: file})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"version": "1.0", "group": "010", "weight": "200", "owner": "1e3", "token": "0x1F", "tag": "yes", "quoted": "2.0", "empty": ""}
	if got := c.Services[0].Params; !reflect.DeepEqual(got, want) {
		t.Errorf("service params %v, want %v", got, want)
	}
	if got := c.Protocol; got["timeout.ratio"] != "0.50" || got["heartbeat"] != "true" {
		t.Errorf("protocol %v", got)
	}
	if got := c.References[0].Params["version"]; got != "2.10" {
		t.Errorf("reference version %q, want 2.10", got)
	}
	if got := c.Plugins[0].Env["LEVEL"]; got != "1.0" {
		t.Errorf("plugin env LEVEL %q, want 1.0", got)
	}
	c.Services[0].Params = map[string]string{"version": "1.0"}
	u, err := c.ExportURL(c.Services[0])
	if err != nil {
		t.Fatal(err)
	}
	if u.ServiceKey() != "demo.Echo:1.0" {
		t.Errorf("exported as %s, want demo.Echo:1.0", u.ServiceKey())
	}
}

// Settings that are not URL keys keep YAML's types and their errors: a
// duration without a unit, and the line of a syntax error inside params.
func TestOtherSettingsKeepTheirTypes(t *testing.T) {
	_, err := config.Load(config.Source{File: writeFile(t, "shutdown:\n  timeout: 60000\n")})
	if err == nil || !strings.Contains(err.Error(), "60000 needs a unit") {
		t.Errorf("timeout: 60000: %v", err)
	}
	_, err = config.Load(config.Source{File: writeFile(t, "services:\n  - interface: demo.Echo\n    params:\n      version: 1.0\n     group: g\n")})
	if err == nil || !strings.Contains(err.Error(), "line 5") {
		t.Errorf("mis-indented params key: %v, want its line 5", err)
	}
}
