package config_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
)

func TestReferenceParamsAreDefaults(t *testing.T) {
	c, err := config.Load(config.Source{File: writeFile(t, `
references:
  - {interface: demo.Echo, params: {loadbalance: roundrobin, timeout: 200ms}}
  - {interface: demo.Other, params: {retries: "0"}}
`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ReferenceParams("demo.Echo"); !reflect.DeepEqual(got, map[string]string{"loadbalance": "roundrobin", "timeout": "200ms"}) {
		t.Errorf("ReferenceParams(demo.Echo) = %v", got)
	}
	if got := c.ReferenceParams("demo.Nope"); got != nil {
		t.Errorf("ReferenceParams(demo.Nope) = %v, want nil", got)
	}
	u, added := c.ApplyReference(mustParse(t, "airnode://h:1/demo.Echo?timeout=3s"))
	if lb, _ := u.Param("loadbalance"); lb != "roundrobin" {
		t.Errorf("loadbalance = %q, want the reference's roundrobin", lb)
	}
	if to, _ := u.Param("timeout"); to != "3s" {
		t.Errorf("timeout = %q, want the URL's 3s", to)
	}
	if !reflect.DeepEqual(added, []string{"loadbalance"}) {
		t.Errorf("added %v", added)
	}
	if u, added := c.ApplyReference(mustParse(t, "airnode://h:1/demo.Nope")); len(added) != 0 || len(u.Params()) != 0 {
		t.Errorf("no reference: %v %v", u, added)
	}
}

func TestCheckReferencesSuggests(t *testing.T) {
	cat := extensiontest.Catalogs()
	c := config.DefaultConfig()
	c.References = []config.Reference{
		{Interface: "demo.Echo", Params: map[string]string{"loadbalance": "roundrobin"}},
		{Interface: "demo.Other", Params: map[string]string{"loadbalance": "rundrobin"}},
	}
	err := c.CheckReferences(cat)
	if err == nil || !strings.Contains(err.Error(), `config: references[1].params: unknown loadbalance "rundrobin"`) ||
		!strings.Contains(err.Error(), `did you mean "roundrobin"?`) || strings.Contains(err.Error(), "references[0]") {
		t.Fatalf("CheckReferences: %v", err)
	}
	c.References = c.References[:1]
	if err := c.CheckReferences(cat); err != nil {
		t.Fatal(err)
	}
}

// An error names the source of the bad value: the environment variable or
// the flag that set it, not the file or "defaults".
func TestErrorsNameTheirSource(t *testing.T) {
	file := writeFile(t, "listen: \":1\"\nshutdown: {timeout: 10s}\n")
	flags := func(args ...string) *pflag.FlagSet {
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		config.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	tests := []struct {
		name string
		src  config.Source
		want string
	}{
		{"env over file", config.Source{File: file, Environ: []string{"AIRNODE_SHUTDOWN_TIMEOUT=abc"}},
			`config: environment AIRNODE_SHUTDOWN_TIMEOUT: "abc" is not a duration`},
		{"env listen", config.Source{Environ: []string{"AIRNODE_LISTEN=nope"}}, `config: environment AIRNODE_LISTEN: "nope" is not host:port`},
		{"flag listen", config.Source{Flags: flags("--listen", "127.0.0.1:99999")}, `config: flag --listen: port "99999" of "127.0.0.1:99999" must be 0-65535`},
		{"flag shutdown-wait", config.Source{File: file, Flags: flags("--shutdown-wait", "-1s")}, `config: flag --shutdown-wait: -1s must be between 0 and shutdown.timeout`},
		{"file", config.Source{File: writeFile(t, "listen: nope\n")}, `: key "listen": "nope" is not host:port`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "defaults") || (tt.name != "file" && tt.src.File != "" && strings.Contains(err.Error(), tt.src.File)) {
				t.Errorf("error %v names the wrong source", err)
			}
		})
	}
}
