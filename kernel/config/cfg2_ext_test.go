package config_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// Two references: entries naming one interface are refused, naming both
// entries, whatever their group or version: a reference is found by its
// interface alone, so the second would never apply. Different interfaces
// pass.
func TestCfg2_DuplicateReferenceRefused(t *testing.T) {
	for _, body := range []string{
		`references:
  - {interface: demo.Echo, url: "airnode://127.0.0.1:39043", params: {timeout: 100ms}}
  - {interface: demo.Echo, params: {timeout: 900ms, loadbalance: p2c}}
`,
		`references:
  - {interface: demo.Echo, params: {group: a}}
  - {interface: demo.Other}
  - {interface: demo.Echo, params: {group: b, version: "2.0"}}
`,
	} {
		f := writeFile(t, body)
		_, err := config.Load(config.Source{File: f})
		if err == nil {
			t.Fatalf("%s: loaded, want an error", body)
		}
		msg := err.Error()
		last := strings.Count(body, "interface:") - 1
		for _, want := range []string{f, `key "references[` + string(rune('0'+last)) + `]"`, `interface "demo.Echo" already has a reference, references[0]`, "merge the two entries"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error %q lacks %q", body, msg, want)
			}
		}
		if n := strings.Count(msg, "already has a reference"); n != 1 {
			t.Errorf("%d duplicate errors, want 1: %s", n, msg)
		}
	}
	if _, err := config.Load(config.Source{File: writeFile(t, "references: [{interface: demo.Echo}, {interface: demo.Other}]\n")}); err != nil {
		t.Errorf("two interfaces: %v", err)
	}
}

// services, references or plugins written as something other than a list
// of entries get an example of the list, not the decoder's wording.
func TestCfg2_ListShapeErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"services: demo.Echo\n", `key "services": services must be a list of entries, e.g. services: [{interface: demo.Echo`},
		{"services: demo.Echo\n", `got the string "demo.Echo"`},
		{"references: demo.Echo\n", `key "references": references must be a list of entries, e.g. references: [{interface: demo.Echo`},
		{"plugins: {name: acme.p2c}\n", `key "plugins": plugins must be a list of entries, e.g. plugins: [{name: acme.p2c`},
		{"plugins: {name: acme.p2c}\n", `put "- " before its first key`},
		{"services: [demo.Echo]\n", `key "services[0]": each entry of services is a mapping, e.g. {interface: demo.Echo`},
	} {
		_, err := config.Load(config.Source{File: writeFile(t, tc.body)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.body, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "source data") {
			t.Errorf("%q: decoder wording: %v", tc.body, err)
		}
	}
	for _, body := range []string{"services:\n", "services: []\n", "services:\n  - interface: demo.Echo\n"} {
		if _, err := config.Load(config.Source{File: writeFile(t, body)}); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
}

// demo takes YAML 1.1's yes/no/on/off and 1/0 besides true/false, in the
// file and in AIRNODE_DEMO; anything else names every form allowed.
func TestCfg2_DemoBoolSpellings(t *testing.T) {
	for body, want := range map[string]bool{
		"demo: yes\n": true, "demo: No\n": false, "demo: ON\n": true, "demo: off\n": false,
		"demo: 1\n": true, "demo: 0\n": false, "demo: false\n": false, `demo: "true"` + "\n": true,
	} {
		c, err := config.Load(config.Source{File: writeFile(t, body)})
		if err != nil || c.Demo != want {
			t.Errorf("%q: demo %v, %v; want %v", body, c.Demo, err, want)
		}
	}
	c, err := config.Load(config.Source{Environ: []string{"AIRNODE_DEMO=no"}})
	if err != nil || c.Demo {
		t.Errorf("AIRNODE_DEMO=no: demo %v, %v", c.Demo, err)
	}
	for _, body := range []string{"demo: maybe\n", "demo: 2\n", "demo: 1.5\n", "demo: y\n"} {
		_, err := config.Load(config.Source{File: writeFile(t, body)})
		if err == nil || !strings.Contains(err.Error(), `key "demo"`) || !strings.Contains(err.Error(), "want true or false (also yes/no, on/off, 1/0, t/f)") {
			t.Errorf("%q: %v", body, err)
		}
	}
}
