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
			// the file may be named as the source of the wait's bound
			// (tester92 #4), never as the bad value's
			msg := strings.ReplaceAll(err.Error(), "shutdown.timeout in "+tt.src.File, "")
			if strings.Contains(msg, "defaults") || (tt.name != "file" && tt.src.File != "" && strings.Contains(msg, tt.src.File)) {
				t.Errorf("error %v names the wrong source", err)
			}
		})
	}
}

// A reference's url names its providers and bypasses the registry, as
// Dubbo's <dubbo:reference url=...> (tester8 #2: it was accepted and
// ignored, so calls went to whatever the registry listed).
func TestReferenceURLNamesTheProviders(t *testing.T) {
	c, err := config.Load(config.Source{File: writeFile(t, `
references:
  - {interface: demo.Echo, url: "airnode://127.0.0.1:24081,127.0.0.1:24082/demo.Echo", params: {timeout: 2s}}
  - {interface: demo.Other, url: "airnode://[::1]:24083"}
  - {interface: demo.Plain, params: {retries: "0"}}
`)})
	if err != nil {
		t.Fatal(err)
	}
	u, added := c.ApplyReference(mustParse(t, "airnode:///demo.Echo?group=g"))
	if got := u.Addresses(); !reflect.DeepEqual(got, []string{"127.0.0.1:24081", "127.0.0.1:24082"}) {
		t.Errorf("ApplyReference(service key) addresses = %v, want the reference url's two", got)
	}
	if u.Path() != "demo.Echo" || u.Scheme() != "airnode" || u.ParamOr("group", "") != "g" || u.ParamOr("timeout", "") != "2s" {
		t.Errorf("ApplyReference = %s, want the service key's path and group with the reference's timeout", u)
	}
	if !reflect.DeepEqual(added, []string{"timeout"}) {
		t.Errorf("added %v, want [timeout]", added)
	}
	// A URL naming its own provider keeps it.
	if u, _ := c.ApplyReference(mustParse(t, "airnode://10.0.0.9:1/demo.Echo")); u.Address() != "10.0.0.9:1" || len(u.Hosts()) != 1 {
		t.Errorf("a URL's own host was replaced: %s", u)
	}
	if u, _ := c.ApplyReference(mustParse(t, "airnode:///demo.Other")); u.Address() != "[::1]:24083" || u.Path() != "demo.Other" {
		t.Errorf("url without path: %s", u)
	}
	if u, _ := c.ApplyReference(mustParse(t, "airnode:///demo.Plain")); u.Host() != "" {
		t.Errorf("a reference without url gave hosts: %s", u)
	}
	if got, ok := c.ReferenceURL("demo.Echo"); !ok || got.String() != "airnode://127.0.0.1:24081,127.0.0.1:24082/demo.Echo" {
		t.Errorf("ReferenceURL(demo.Echo) = %s, %v", got, ok)
	}
	if _, ok := c.ReferenceURL("demo.Plain"); ok {
		t.Error("ReferenceURL of a reference without url reported one")
	}
}

// A url that is not an airnode URL naming providers is refused at load,
// naming the key and what is allowed.
func TestReferenceURLMustNameProviders(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"127.0.0.1:24081", "is not a URL"},
		{"direct://127.0.0.1:24081", `scheme "direct" is not airnode`},
		{"zookeeper://127.0.0.1:2181", `scheme "zookeeper" is not airnode`},
		{"airnode:///demo.Echo", "names no provider"},
		{"airnode://127.0.0.1/demo.Echo", `provider "127.0.0.1" has no port`},
		{"airnode://127.0.0.1:1,127.0.0.2/demo.Echo", `provider "127.0.0.2" has no port`},
		{"airnode://127.0.0.1:1/demo.Other", `names service "demo.Other", but the reference's interface is "demo.Echo"`},
		{"airnode://127.0.0.1:1/demo.Echo?timeout=1s", "put them under params"},
	} {
		_, err := config.Load(config.Source{File: writeFile(t, "references:\n  - {interface: demo.Echo, url: \""+tc.url+"\"}\n")})
		if err == nil || !strings.Contains(err.Error(), `key "references[0].url"`) || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), "airnode://host:port") && !strings.Contains(tc.want, "interface") {
			t.Errorf("url %q: %v, want an error naming references[0].url, %q and the allowed form", tc.url, err, tc.want)
		}
	}
}

// tester79 #2: a reference for a misspelt interface is not applied to the
// interface meant; ReferenceMisspelt names both and the file key. A
// longer name (another service) and an exact match give none.
func TestReferenceMisspelt(t *testing.T) {
	c, err := config.Load(config.Source{File: writeFile(t, `
references:
  - {interface: shop.Orders, params: {retries: "0"}}
  - {interface: shop.Invetory, params: {timeout: 2s}}
`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, added := c.ApplyReference(mustParse(t, "airnode:///shop.Inventory")); len(added) != 0 {
		t.Errorf("ApplyReference(shop.Inventory) added %v", added)
	}
	want := "the configuration has a reference for shop.Invetory (references[1].interface) and none for shop.Inventory: its params are not applied; did you mean shop.Inventory there?"
	if got := c.ReferenceMisspelt("shop.Inventory"); got != want {
		t.Errorf("ReferenceMisspelt(shop.Inventory) = %q, want %q", got, want)
	}
	for _, iface := range []string{"shop.Invetory", "shop.Orders", "shop.OrdersArchive", "demo.Echo"} {
		if got := c.ReferenceMisspelt(iface); got != "" {
			t.Errorf("ReferenceMisspelt(%s) = %q, want none", iface, got)
		}
	}
}
