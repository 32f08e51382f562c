package archtest

import (
	"bytes"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/airnode/airnode"

// rule forbids packages matching From to depend, directly or not, on
// packages matching To.
type rule struct {
	name   string
	from   func(pkg string) bool
	to     func(pkg string) bool
	exempt func(pkg string) bool
}

func under(prefix string) func(string) bool {
	p := module + "/" + prefix
	return func(pkg string) bool { return pkg == p || strings.HasPrefix(pkg, p+"/") }
}

func is(path string) func(string) bool {
	p := module + "/" + path
	return func(pkg string) bool { return pkg == p }
}

func airnodePkg(pkg string) bool { return pkg == module || strings.HasPrefix(pkg, module+"/") }

var rules = []rule{
	{name: "spi imports nothing of airnode", from: is("spi"), to: airnodePkg},
	{name: "kernel never imports a concrete extension", from: under("kernel"), to: under("extensions")},
	{name: "extensions never import the kernel", from: under("extensions"), to: under("kernel"), exempt: is("extensions/bundle")},
	{name: "an extension imports no other extension", from: under("extensions"), to: anExtension, exempt: is("extensions/bundle")},
}

// anExtension reports whether pkg is a registered extension's package,
// extensions/KIND/NAME: not an internal package, and not lb/warmup, the
// warm-up weights every balancer (a third party's too) shares.
func anExtension(pkg string) bool {
	parts := strings.Split(strings.TrimPrefix(pkg, module+"/"), "/")
	return airnodePkg(pkg) && len(parts) == 3 && parts[0] == "extensions" && parts[1] != "internal" && parts[2] != "internal" &&
		pkg != module+"/extensions/lb/warmup"
}

// graph maps a package to its direct imports.
type graph map[string][]string

// violations returns, for every package matching r.from, each forbidden
// dependency with the import chain that reaches it.
func (g graph) violations(r rule) []string {
	var out []string
	var pkgs []string
	for p := range g {
		if r.from(p) && (r.exempt == nil || !r.exempt(p)) {
			pkgs = append(pkgs, p)
		}
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		// breadth-first, remembering how each package was reached
		prev := map[string]string{p: ""}
		queue := []string{p}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, dep := range g[cur] {
				if _, seen := prev[dep]; seen {
					continue
				}
				prev[dep] = cur
				if r.to(dep) && dep != p {
					chain := []string{dep}
					for at := cur; at != ""; at = prev[at] {
						chain = append([]string{at}, chain...)
					}
					out = append(out, fmt.Sprintf("%s: %s", r.name, strings.Join(trim(chain), " -> ")))
					continue
				}
				queue = append(queue, dep)
			}
		}
	}
	return out
}

func trim(pkgs []string) []string {
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		out[i] = strings.TrimPrefix(p, module+"/")
	}
	return out
}

// load lists every package of the module with its non-test imports.
func load(t *testing.T) graph {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	g := graph{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			g[f[0]] = f[1:]
		}
	}
	return g
}

func TestImportRules(t *testing.T) {
	g := load(t)
	for _, p := range []string{"spi", "kernel/extension", "kernel/config", "extensions/bundle"} {
		if _, ok := g[module+"/"+p]; !ok {
			t.Fatalf("go list did not report %s: the check would be vacuous", p)
		}
	}
	for _, r := range rules {
		for _, v := range g.violations(r) {
			t.Error(v)
		}
	}
}

// TestRulesCatchViolations proves the checker finds direct and indirect
// forbidden imports and honours the exemption.
func TestRulesCatchViolations(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	g := graph{
		m("spi"):                                {"fmt", m("internal/x")},
		m("internal/x"):                         {"strings"},
		m("kernel"):                             {m("kernel/extension"), m("internal/y")},
		m("kernel/extension"):                   {m("spi")},
		m("internal/y"):                         {m("extensions/lb/random")},
		m("extensions/lb/random"):               {m("spi")},
		m("extensions/codec/json"):              {m("kernel/protocol")},
		m("kernel/protocol"):                    {m("spi")},
		m("extensions/bundle"):                  {m("kernel/extension"), m("extensions/lb/random")},
		m("extensions/codec/protobuf"):          {m("extensions/codec/internal/jsonwire"), m("extensions/lb/warmup"), m("extensions/codec/internal/bad")},
		m("extensions/codec/internal/bad"):      {m("extensions/lb/random")},
		m("extensions/codec/internal/jsonwire"): {m("spi")},
	}
	var got []string
	for _, r := range rules {
		got = append(got, g.violations(r)...)
	}
	want := []string{
		"spi imports nothing of airnode: spi -> internal/x",
		"kernel never imports a concrete extension: kernel -> internal/y -> extensions/lb/random",
		"extensions never import the kernel: extensions/codec/json -> kernel/protocol",
		"an extension imports no other extension: extensions/codec/internal/bad -> extensions/lb/random",
		"an extension imports no other extension: extensions/codec/protobuf -> extensions/codec/internal/bad -> extensions/lb/random",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("violations\n got %q\nwant %q", got, want)
	}
}
