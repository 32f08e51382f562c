package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// examples/tenant, as its README shows it (nu48 finding 9): the README's
// plugins.yaml with the example's binary, a provider serving tenants acme
// and globex, and real `airnode call`s through the consumer-side filter.
// Tenant acme's call is answered; a call naming no tenant or another is
// refused with the plugin's BAD_REQUEST, and airnode stats counts those as
// denied by a filter plugin, not as calls or failures of Echo.
func TestExampleTenantFilterPlugin(t *testing.T) {
	readme, err := os.ReadFile("../examples/tenant/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```yaml\n")
	yaml, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 || !strings.Contains(yaml, "command: ./bin/tenant") {
		t.Fatalf("examples/tenant/README.md has no plugins.yaml block running ./bin/tenant:\n%s", yaml)
	}
	bin := buildPlugin(t, "github.com/airnode/airnode/examples/tenant/cmd/tenant")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(yaml, "./bin/tenant", bin, 1)), 0o644); err != nil {
		t.Fatal(err)
	}

	p := serve(t, "127.0.0.1:0", dir, "--config", cfg, "--metrics", "127.0.0.1:0", "-p", "tenant=acme,globex")
	m := regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatalf("no metrics address in the log:\n%s", p.logText())
	}
	url := p.url("demo.Echo")
	// The README declares the binary's own name (nu50 finding 5): no
	// "calls itself ... but is declared as" note.
	if strings.Contains(p.logText(), "calls itself") {
		t.Errorf("the README's declared name differs from the plugin's own:\n%s", p.logText())
	}

	expectOK(t, call(t, nil, "--config", cfg, "-p", "tenant=acme", url, "Echo", `"hi"`), `"hi"`)
	expectFail(t, call(t, nil, "--config", cfg, "-p", "tenant=initech", url, "Echo", `"hi"`),
		`BAD_REQUEST: tenant: demo.Echo.Echo refused: tenant "initech" is not served here`)
	expectFail(t, call(t, nil, url, "Echo", `"hi"`), // no tenant=: no consumer filter, no attachment
		`BAD_REQUEST: tenant: demo.Echo.Echo refused: no tenant (set tenant=... on the reference)`)

	if l := runCommand(t, 20*time.Second, nil, "--config", cfg, "list"); l.code != 0 || strings.Contains(l.stdout+l.stderr, "differs") {
		t.Errorf("airnode list: exit %d, a \"differs\" note or an error:\n%s%s", l.code, l.stdout, l.stderr)
	}

	r := runCommand(t, 20*time.Second, nil, "stats", m[1])
	if r.code != 0 {
		t.Fatalf("stats: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("airnode stats:\n%s", r.stdout)
	row := regexp.MustCompile(`(?m)^provider +demo\.Echo +Echo +(\d+) +(\S+)`).FindStringSubmatch(r.stdout)
	if row == nil || row[1] != "1" || row[2] != "100.00%" {
		t.Errorf("provider's Echo row %q; want 1 call, 100.00%% successful (the refusals are not calls of Echo)", row)
	}
	if !strings.Contains(r.stdout, "provider requests rejected before the service: denied by a filter plugin 2") {
		t.Errorf("stats does not count the 2 refusals as denied by a filter plugin:\n%s", r.stdout)
	}
}
