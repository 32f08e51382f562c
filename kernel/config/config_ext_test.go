package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/airnode/airnode/kernel/config"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultConfigValid(t *testing.T) {
	c := config.DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Listen != ":20880" || c.Shutdown.Timeout != 10*time.Second || c.Shutdown.Wait != 2*time.Second {
		t.Fatalf("defaults %+v", c)
	}
	got, err := config.Load(config.Source{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("Load with no sources = %+v, want DefaultConfig %+v", got, c)
	}
}

// TestRepoPluginsYAML: the example at the repository root loads and validates.
func TestRepoPluginsYAML(t *testing.T) {
	c, err := config.Load(config.Source{File: "../../plugins.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != ":20880" || c.Protocol["heartbeat.interval"] != "60s" || c.Protocol["payload"] != "8MiB" {
		t.Fatalf("plugins.yaml read as %+v", c)
	}
}

// TestC1_EnvOverridesFile: AIRNODE_REGISTRY overrides the file's registry;
// an empty environment value does not blank it; a plugin named acme.p2c
// stays one key, and dotted URL keys stay whole.
func TestC1_EnvOverridesFile(t *testing.T) {
	file := writeFile(t, `
registry: zookeeper://10.0.0.1:2181
listen: 127.0.0.1:7000
protocol:
  heartbeat.interval: 30s
services:
  - interface: demo.Echo
    params:
      methods.Echo.timeout: 200ms
      version: "1.0"
plugins:
  - name: acme.p2c
    point: loadbalance
    command: ./p2c
    env: {ACME.MODE: fast}
`)
	c, err := config.Load(config.Source{File: file, Environ: []string{
		"AIRNODE_REGISTRY=zookeeper://127.0.0.1:2181",
		"AIRNODE_LISTEN=",              // empty: ignored
		"AIRNODE_SHUTDOWN_TIMEOUT=30s", // nested key from env
		"AIRNODE_UNRELATED=1",          // not a setting: ignored
		"PATH=/bin",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Registry != "zookeeper://127.0.0.1:2181" {
		t.Errorf("registry %q, want the environment's", c.Registry)
	}
	if c.Listen != "127.0.0.1:7000" {
		t.Errorf("listen %q: an empty AIRNODE_LISTEN blanked the file's value", c.Listen)
	}
	if c.Shutdown.Timeout != 30*time.Second || c.Shutdown.Wait != 2*time.Second {
		t.Errorf("shutdown %+v", c.Shutdown)
	}
	if len(c.Plugins) != 1 || c.Plugins[0].Name != "acme.p2c" || c.Plugins[0].Env["ACME.MODE"] != "fast" {
		t.Fatalf("plugins %+v", c.Plugins)
	}
	if p := c.Plugins[0]; p.StartTimeout != 10*time.Second || p.Restart != config.RestartOnFailure {
		t.Errorf("plugin defaults %+v", p)
	}
	if c.Protocol["heartbeat.interval"] != "30s" || c.Services[0].Params["methods.Echo.timeout"] != "200ms" || c.Services[0].Params["version"] != "1.0" {
		t.Errorf("dotted keys split: protocol %v, service params %v", c.Protocol, c.Services[0].Params)
	}

	// Flags beat the environment; unset flags change nothing.
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	config.AddFlags(fs)
	fs.String("metrics", "", "not a config flag")
	if err := fs.Parse([]string{"--registry", "memory://", "--metrics", ":9090"}); err != nil {
		t.Fatal(err)
	}
	c, err = config.Load(config.Source{File: file, Environ: []string{"AIRNODE_REGISTRY=zookeeper://127.0.0.1:2181"}, Flags: fs})
	if err != nil {
		t.Fatal(err)
	}
	if c.Registry != "memory://" || c.Listen != "127.0.0.1:7000" || c.Shutdown.Timeout != 10*time.Second {
		t.Errorf("with flags: %+v", c)
	}
	if err := fs.Parse([]string{"--shutdown-wait", "500ms"}); err != nil {
		t.Fatal(err)
	}
	if c, err = config.Load(config.Source{Flags: fs}); err != nil || c.Shutdown.Wait != 500*time.Millisecond {
		t.Errorf("duration flag: %+v, %v", c.Shutdown, err)
	}
}

// TestC2_DurationsNeedUnits: "60s" is 60 s; 60000 or "10 seconds" are
// rejected at load, naming the key.
func TestC2_DurationsNeedUnits(t *testing.T) {
	c, err := config.Load(config.Source{File: writeFile(t, "shutdown: {timeout: 60s}\nprotocol: {heartbeat.interval: 60s}\n")})
	if err != nil {
		t.Fatal(err)
	}
	if c.Shutdown.Timeout != 60*time.Second {
		t.Fatalf("timeout %v", c.Shutdown.Timeout)
	}
	tests := []struct{ name, yaml, key, value string }{
		{"bare number", "shutdown: {timeout: 60000}\n", "shutdown.timeout", "60000"},
		{"words", "shutdown: {timeout: 10 seconds}\n", "shutdown.timeout", "10 seconds"},
		{"plugin", "plugins: [{name: a, point: filter, command: x, start_timeout: 5}]\n", "plugins[0].start_timeout", "5"},
		{"protocol bare number", "protocol: {heartbeat.interval: 60000}\n", "heartbeat.interval", "60000"},
		{"protocol words", "protocol: {heartbeat.interval: 10 seconds}\n", "heartbeat.interval", "10 seconds"},
		{"method-level param", "services: [{interface: x, params: {methods.Echo.timeout: 3000}}]\n", "methods.Echo.timeout", "3000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, tt.yaml)
			_, err := config.Load(config.Source{File: file})
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range []string{tt.key, tt.value, file} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		})
	}
	// The environment too.
	_, err = config.Load(config.Source{Environ: []string{"AIRNODE_SHUTDOWN_TIMEOUT=60000"}})
	if err == nil || !strings.Contains(err.Error(), "environment AIRNODE_SHUTDOWN_TIMEOUT") || !strings.Contains(err.Error(), "60000") {
		t.Fatalf("env duration without unit: %v", err)
	}
}

// An unknown key of the file, at the top level or in a nested section,
// gets a did-you-mean naming the closest key allowed at that place, one or
// two edits away (internal/suggest's rule, as for URL keys); a key further
// from every allowed one gets none.
func TestUnknownKeysSuggestTheClosest(t *testing.T) {
	file := writeFile(t, `
registri: memory://
colour: blue
shutdown: {tiemout: 5s, wiat: 1s}
services:
  - {interfce: demo.Echo}
references:
  - {interface: demo.Echo, urll: "airnode://127.0.0.1:1/demo.Echo"}
plugins:
  - {name: a, point: filter, comand: x, star_timeout: 1s}
`)
	_, err := config.Load(config.Source{File: file})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`unknown key "registri"; did you mean "registry"?`,
		`unknown key "shutdown.tiemout"; did you mean "shutdown.timeout"?`,
		`unknown key "shutdown.wiat"; did you mean "shutdown.wait"?`,
		`unknown key "services[0].interfce"; did you mean "services[0].interface"?`,
		`unknown key "references[0].urll"; did you mean "references[0].url"?`,
		`unknown key "plugins[0].comand"; did you mean "plugins[0].command"?`,
		`unknown key "plugins[0].star_timeout"; did you mean "plugins[0].start_timeout"?`,
	} {
		if !strings.Contains(err.Error(), "config: "+file+": "+want) {
			t.Errorf("error %q does not say %s", err, want)
		}
	}
	if !strings.Contains(err.Error(), `unknown key "colour"`) {
		t.Errorf("error %q does not name colour", err)
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.Contains(line, `"colour"`) && (strings.Contains(line, "did you mean") || !strings.HasPrefix(line, "config: "+file+`: unknown key "colour" (allowed at the top level: `)) {
			t.Errorf("colour is no close match of any key (want the allowed keys listed): got %q", line)
		}
	}
}

// A URL key written beside interface in a services or references entry
// (Dubbo's <dubbo:service version=...>; the README once showed it so)
// is refused pointing at params (tester65 #9).
func TestT65_EntryURLKeyPointsAtParams(t *testing.T) {
	file := writeFile(t, `
services:
  - {interface: demo.Echo, version: 2.0.0}
references:
  - {interface: demo.Echo, timeout: 2s}
`)
	_, err := config.Load(config.Source{File: file})
	for _, want := range []string{
		`unknown key "services[0].version" (allowed at "services[0]": interface, params); URL keys go under params: "services[0].params.version" (params: {version: ...})`,
		`unknown key "references[0].timeout" (allowed at "references[0]": `,
		`URL keys go under params: "references[0].params.timeout"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %s", err, want)
		}
	}
}

func TestUnknownKeys(t *testing.T) {
	file := writeFile(t, `
listen: ":1"
regsitry: memory://
shutdown: {tiemout: 5s}
plugins:
  - {name: a, point: filter, command: x, comand: y}
`)
	_, err := config.Load(config.Source{File: file})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, key := range []string{`"regsitry"`, `"shutdown.tiemout"`, `"plugins[0].comand"`} {
		if !strings.Contains(err.Error(), "unknown key "+key) || !strings.Contains(err.Error(), file) {
			t.Errorf("error %q does not name %s and the file", err, key)
		}
	}
	if _, err := config.Load(config.Source{File: filepath.Join(t.TempDir(), "missing.yaml")}); err == nil {
		t.Error("missing file accepted")
	}
	if _, err := config.Load(config.Source{File: writeFile(t, "listen: [1, 2\n")}); err == nil {
		t.Error("broken YAML accepted")
	}
	if _, err := config.Load(config.Source{File: writeFile(t, "services: {interface: x}\n")}); err == nil {
		t.Error("map where a list belongs accepted")
	}
}

func TestValidate(t *testing.T) {
	base := func() config.Config {
		c := config.DefaultConfig()
		c.Plugins = []config.Plugin{{Name: "acme.p2c", Point: "loadbalance", Command: "./p2c"}}
		c.Services = []config.Service{{Interface: "demo.Greeter"}}
		return c
	}
	if err := base().Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"listen", func(c *config.Config) { c.Listen = "nope" }, "listen:"},
		{"listen port", func(c *config.Config) { c.Listen = ":70000" }, "0-65535"},
		{"listen IPv6 without brackets", func(c *config.Config) { c.Listen = "::1:20880" }, "IPv6 addresses need brackets: [::1]:20880"},
		{"registry", func(c *config.Config) { c.Registry = "127.0.0.1:2181" }, "registry:"},
		{"shutdown.timeout", func(c *config.Config) { c.Shutdown.Timeout = 0 }, "shutdown.timeout: 0s must be > 0"},
		{"shutdown.wait", func(c *config.Config) { c.Shutdown.Wait = time.Minute }, "shutdown.wait: 1m0s must be between 0 and shutdown.timeout (10s)"},
		{"protocol value", func(c *config.Config) { c.Protocol = map[string]string{"timeout": "abc"} }, `protocol: invalid value "abc" for URL key "timeout"`},
		{"protocol bound", func(c *config.Config) { c.Protocol = map[string]string{"retries": "-1"} }, `"retries": want an integer from 0 to 100`},
		{"service interface", func(c *config.Config) { c.Services[0].Interface = "" }, "services[0].interface: required"},
		{"service duplicate", func(c *config.Config) { c.Services = append(c.Services, c.Services[0]) }, `services[1]: service "demo.Greeter" already exported by services[0]`},
		{"service params", func(c *config.Config) { c.Services[0].Params = map[string]string{"payload": "lots"} }, `services[0].params: invalid value "lots" for URL key "payload"`},
		{"reference url", func(c *config.Config) { c.References = []config.Reference{{Interface: "x", URL: "::1:2"}} }, "references[0].url:"},
		{"reference interface", func(c *config.Config) { c.References = []config.Reference{{}} }, "references[0].interface: required"},
		{"plugin name", func(c *config.Config) { c.Plugins[0].Name = "Acme" }, `plugins[0].name: invalid extension name "Acme"`},
		{"plugin point", func(c *config.Config) { c.Plugins[0].Point = "balancer" }, `plugins[0].point: "balancer" cannot be served by a plugin (want one of filter, loadbalance, registry, service;`},
		{"plugin point transport", func(c *config.Config) { c.Plugins[0].Point = "transport" }, `plugins[0].point: "transport" cannot be served by a plugin (want one of filter, loadbalance, registry, service; transport, codec, heartbeat and cluster stay in process)`},
		{"plugin point typo", func(c *config.Config) { c.Plugins[0].Point = "servise" }, `heartbeat and cluster stay in process); did you mean "service"?`},
		{"plugin point codec", func(c *config.Config) { c.Plugins[0].Point = "codec" }, `plugins[0].point: "codec" cannot be served by a plugin`},
		{"plugin command", func(c *config.Config) { c.Plugins[0].Command = "" }, "plugins[0].command: required"},
		{"plugin sha256", func(c *config.Config) { c.Plugins[0].SHA256 = "abc" }, `plugins[0].sha256: "abc" is not 64 hexadecimal digits`},
		{"plugin start_timeout", func(c *config.Config) { c.Plugins[0].StartTimeout = -time.Second }, "plugins[0].start_timeout: -1s must be ≥ 0"},
		{"plugin restart", func(c *config.Config) { c.Plugins[0].Restart = "sometimes" }, `plugins[0].restart: "sometimes" is not one of always, on-failure, never`},
		{"plugin duplicate", func(c *config.Config) { c.Plugins = append(c.Plugins, c.Plugins[0]) }, `plugins[1].name: loadbalance "acme.p2c" already declared by plugins[0]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
	ok := base()
	ok.Plugins[0].SHA256 = strings.Repeat("aB", 32)
	ok.Plugins = append(ok.Plugins, config.Plugin{Name: "acme.p2c", Point: "filter", Command: "x", Restart: config.RestartNever},
		config.Plugin{Name: "greeter", Point: config.PointService, Command: "x"})
	if err := ok.Validate(); err != nil {
		t.Fatalf("same name on another point, valid sha256: %v", err)
	}
}

func TestCheckURL(t *testing.T) {
	good := []string{
		"airnode://h/x?timeout=3000&retries=0&weight=100&warmup=10m&payload=8MiB&heartbeat.interval=1.5s&hash.arguments=0,1&methods.Echo.timeout=200ms",
		"airnode://h/x?methods=say&say.timeout=200",
		"airnode://h/x?token=&loadbalance=whatever", // not typed kernel keys
		"airnode://h/x?notmethod.timeout=abc",       // notmethod is not a method: not a timeout
	}
	for _, s := range good {
		if err := config.CheckURL(mustParse(t, s)); err != nil {
			t.Errorf("CheckURL(%s): %v", s, err)
		}
	}
	bad := []struct{ url, want string }{
		{"airnode://h/x?timeout=abc", `invalid value "abc" for URL key "timeout"`},
		{"airnode://h/x?methods.Echo.timeout=abc", `"methods.Echo.timeout"`},
		{"airnode://h/x?methods=say&say.retries=x", `"say.retries"`},
		{"airnode://h/x?connect.timeout=0", `"connect.timeout": want a duration > 0`},
		{"airnode://h/x?heartbeat.retries=0", `"heartbeat.retries": want an integer from 1 to 1000`},
		{"airnode://h/x?hash.arguments=0,x", `"hash.arguments"`},
		{"airnode://h/x?payload=0", `"payload"`},
	}
	for _, b := range bad {
		err := config.CheckURL(mustParse(t, b.url))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("CheckURL(%s) = %v, want %q", b.url, err, b.want)
		}
	}
}

func TestExportURL(t *testing.T) {
	c := config.DefaultConfig()
	c.Protocol = map[string]string{"codec": "json", "weight": "50"}
	u, err := c.ExportURL(config.Service{Interface: "demo.Greeter", Params: map[string]string{"weight": "200", "version": "1.0"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := u.String(); got != "airnode://:20880/demo.Greeter?codec=json&version=1.0&weight=200" {
		t.Fatalf("ExportURL = %s", got)
	}
}

// A YAML syntax error names the line it is on, with its text: yaml.v3
// itself says "line 2" (the line before, where the mapping began) for a
// mis-indented key on line 3, and "line 1" for a bracket left open on
// line 2.
func TestYAMLErrorNamesItsLine(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"shutdown:\n  timeout: 5s\n wait: 1s\nlisten: \":1\"\n", `yaml: line 3: did not find expected key (line 3 is " wait: 1s")`},
		{"listen: \":1\"\nshutdown:\n timeout: 5s\n  wait: 1s\n", `yaml: line 4: mapping values are not allowed in this context (line 4 is "  wait: 1s")`},
		{"listen: \":1\"\nprotocol: {timeout: 1s\n", `yaml: line 2: did not find expected ',' or '}' (line 2 is "protocol: {timeout: 1s")`},
		{"protocol: {timeout: 1s,\n  retries: \"2\"}\nshutdown:\n  timeout: 5s\n wait: 1s\n", `yaml: line 5: did not find expected key (line 5 is " wait: 1s")`},
		{"listen: \":1\"\n\tregistry: memory://\n", `yaml: line 2: found character that cannot start any token (line 2 is "\tregistry: memory://")`},
		// on line 1 yaml.v3 names no line at all (tester nu54 finding 5)
		{"\tlisten: \":1\"\n", `yaml: line 1: found character that cannot start any token (line 1 is "\tlisten: \":1\"")`},
		{"@listen: x\nregistry: memory://\n", `yaml: line 1: found character that cannot start any token (line 1 is "@listen: x")`},
	}
	for _, tt := range tests {
		file := writeFile(t, tt.yaml)
		_, err := config.Load(config.Source{File: file})
		if want := "config: " + file + ": " + tt.want + yamlNote; err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", tt.yaml, err, want)
		}
	}
}

// A map where plugins.yaml wants a URL key's value says how to write the
// key flat, for protocol and for services' and references' params.
func TestNestedURLKeysSayToWriteThemFlat(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"protocol: {heartbeat: {interval: 60s}}\n",
			`key "protocol.heartbeat": want a value, got a map: write the URL key flat, "heartbeat.interval: 60s"`},
		{"protocol:\n  timeout: 1s\n  heartbeat:\n    interval: 60s\n    ping: {timeout: 5s}\n",
			`key "protocol.heartbeat": want a value, got a map: write the URL key flat, "heartbeat.interval: 60s", "heartbeat.ping.timeout: 5s"`},
		{"services:\n  - interface: demo.Echo\n    params:\n      methods: {Echo: {timeout: 200ms}}\n",
			`key "services[0].params.methods": want a value, got a map: write the URL key flat, "methods.Echo.timeout: 200ms"`},
		{"references: [{interface: demo.Echo, params: {hash: {nodes: 80}}}]\n",
			`key "references[0].params.hash": want a value, got a map: write the URL key flat, "hash.nodes: 80"`},
		{"plugins: [{name: a, point: filter, command: x, env: {ACME: {MODE: fast}}}]\n",
			`key "plugins[0].env.ACME": want a value, got a map: write the variable flat, "ACME.MODE: fast"`},
	}
	for _, tt := range tests {
		file := writeFile(t, tt.yaml)
		_, err := config.Load(config.Source{File: file})
		if want := "config: " + file + ": " + tt.want; err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", tt.yaml, err, want)
		}
	}
	// The flat spelling loads.
	c, err := config.Load(config.Source{File: writeFile(t, "protocol: {heartbeat.interval: 60s, heartbeat: idle}\n")})
	if err != nil || c.Protocol["heartbeat.interval"] != "60s" || c.Protocol["heartbeat"] != "idle" {
		t.Fatalf("flat keys: %v, %v", c.Protocol, err)
	}
}

// Tester8 #10: plugins.yaml's timeout values are refused saying why, as
// the kernel refuses them: too large, or under a millisecond.
func TestTimeoutBoundsInParams(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"10us", "at least 1ms"},
		{"9999999999h", "at most 9223372036854"},
	} {
		_, err := config.Load(config.Source{File: writeFile(t, "references:\n  - {interface: demo.Echo, params: {timeout: "+tc.value+"}}\n")})
		if err == nil || !strings.Contains(err.Error(), "references[0].params") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("timeout: %s: %v, want %q", tc.value, err, tc.want)
		}
	}
}

// Tester8 #10: a bad shutdown.timeout is the one error reported; the
// wait's bound, which derives from it, is not a second one.
func TestShutdownTimeoutZeroIsOneError(t *testing.T) {
	_, err := config.Load(config.Source{File: writeFile(t, "shutdown: {timeout: 0s}\n")})
	if err == nil || !strings.Contains(err.Error(), `"shutdown.timeout"`) || strings.Contains(err.Error(), "shutdown.wait") {
		t.Fatalf("shutdown.timeout 0s: %v, want one error about shutdown.timeout", err)
	}
	_, err = config.Load(config.Source{File: writeFile(t, "shutdown: {timeout: 1s, wait: 2s}\n")})
	if err == nil || !strings.Contains(err.Error(), `"shutdown.wait"`) {
		t.Fatalf("wait over timeout: %v", err)
	}
}
