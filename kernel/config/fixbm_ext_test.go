package config_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// Two slips in a plugins entry are told in plugins.yaml's words
// (tester88 #3): args written as one string (the decoder said "source
// data must be an array or slice, got string") gets the list to write,
// and an unquoted digest of digits only, which YAML reads as a number
// (and a float shortened: the start then failed with a "sha256 mismatch"
// against 1234567890123456800000...), is refused, saying to quote it.
func TestFixbmPluginArgsStringAndNumericSHA256(t *testing.T) {
	const entry = "plugins:\n  - {name: acme.p2c, point: loadbalance, command: /opt/p2c, "
	for _, tc := range []struct{ body, want, not string }{
		{entry + `args: "--x 1"}` + "\n",
			`key "plugins[0].args": args is a list, one argument per item: args: ["--x", "1"] (or one "- ARG" line per argument); got the string "--x 1"`,
			"source data"},
		{entry + "sha256: 1234567890123456789012345678901234567890123456789012345678901234}\n",
			`key "plugins[0].sha256": want the digest as a string, got the number 1.2345678901234568e+63: YAML reads an unquoted digest of digits only as a number, which loses digits; quote it: sha256: "<its 64 hexadecimal digits>"`,
			"hexadecimal digits\n"},
		{entry + "sha256: 123456}\n", `key "plugins[0].sha256": want the digest as a string, got the number 123456`, "not 64"},
	} {
		_, err := config.Load(config.Source{File: writeFile(t, tc.body)})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
			t.Errorf("%q: %v; want %q", tc.body, err, tc.want)
		}
	}
	// the right forms load
	c, err := config.Load(config.Source{File: writeFile(t, entry+`args: ["--x", "1"], sha256: "`+strings.Repeat("1", 64)+`"}`+"\n")})
	if err != nil || len(c.Plugins) != 1 || strings.Join(c.Plugins[0].Args, " ") != "--x 1" || c.Plugins[0].SHA256 != strings.Repeat("1", 64) {
		t.Fatalf("%v %+v", err, c.Plugins)
	}
}
