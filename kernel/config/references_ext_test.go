package config_test

import (
	"reflect"
	"strings"
	"testing"

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
