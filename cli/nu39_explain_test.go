package cli

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
)

// nu39 #10: list --explain of a URL call would refuse for a value out of
// bounds prints the error alone and exits 2 (a value of the command
// line's URL: fix-bs), as for an unknown extension:
// after some 80 rows, an ordinary-looking "hash.nodes 0" row hid it.
func TestListExplainInvalidValueAlone(t *testing.T) {
	for url, want := range map[string]string{
		"airnode://127.0.0.1:38573/demo.Echo?loadbalance=consistenthash&hash.nodes=0": `invalid value "0" for URL key "hash.nodes"`,
		"airnode://127.0.0.1:38573/demo.Echo?warmup=abc":                              `invalid value "abc" for URL key "warmup"`,
	} {
		code, out, errOut := airnode(t, bundle.Catalogs, "list", "--explain", url)
		if code != exitUsage || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("list --explain %s: exit %d, stderr %q, want exit 2, %q and no table; stdout:\n%s", url, code, errOut, want, out)
		}
	}
}
