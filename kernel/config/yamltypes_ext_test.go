package config_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// A value of the wrong YAML shape is named in YAML's words (a string, a
// list, a mapping), not Go's ('[]interface {}', "slice"): tester34 saw
// `key "listen": expected type 'string', got unconvertible type
// '[]interface {}'`.
func TestYAMLTypesInDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"listen: [1, 2]\n", `key "listen": want a string, got a list`},
		{"registry: {a: 1}\n", `key "registry": want a string, got a mapping`},
		{"shutdown: [1]\n", `key "shutdown": want a mapping (key: value lines, or {key: value}), got a list`},
	} {
		_, err := config.Load(config.Source{File: writeFile(t, tc.body)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.body, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "interface {}") || strings.Contains(err.Error(), "unconvertible")) {
			t.Errorf("%q: Go's type words: %v", tc.body, err)
		}
	}
}
