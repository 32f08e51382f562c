package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// `airnode list` catches a plugin declared under any point its binary
// does not provide, for every pair of the points a plugin may serve
// (loadbalance, registry, filter, service): a service plugin, which list
// does not run, is run once to ask it (nu48 report, plug6). Each is named
// on stderr with the point declared and the one its binary serves, shown
// failed in the PLUGINS table, left out of its point's extensions (text
// and --json), and list exits 1 once it has printed everything. Real
// binary, the four example plugins.
func TestListFailsForAPluginDeclaredUnderAnyWrongPoint(t *testing.T) {
	bins := map[string]string{ // the point each example serves -> its binary
		"loadbalance": buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c"),
		"registry":    buildPlugin(t, "github.com/airnode/airnode/examples/staticregistry/cmd/staticregistry"),
		"filter":      buildPlugin(t, "github.com/airnode/airnode/examples/tenant/cmd/tenant"),
		"service":     greeter,
	}
	points := []string{"loadbalance", "registry", "filter", "service"}
	type decl struct{ name, point, serves string }
	var right, wrong []decl
	for _, serves := range points {
		right = append(right, decl{"ok." + serves, serves, serves})
		for _, point := range points {
			if point != serves {
				wrong = append(wrong, decl{"bad." + serves + ".as." + point, point, serves})
			}
		}
	}
	yaml := func(ds []decl) string {
		s := "plugins:\n"
		for _, d := range ds {
			s += fmt.Sprintf("  - {name: %s, point: %s, command: %s}\n", d.name, d.point, bins[d.serves])
		}
		return s
	}
	all := append(append([]decl{}, right...), wrong...)
	cfg := writeConfig(t, yaml(all))

	// wrongLines checks r: exit 1 and each wrong declaration's error
	// line on stderr.
	wrongLines := func(args []string, r result) {
		t.Helper()
		if r.code != 1 {
			t.Fatalf("%v: exit %d; want 1\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
		}
		for i, d := range all {
			if d.point == d.serves {
				continue
			}
			want := fmt.Sprintf(`list: plugin %q is declared under point %s (%s: key "plugins[%d].point"), but its binary %s implements %s, not %s: declare it with point: %s`,
				d.name, d.point, cfg, i, bins[d.serves], d.serves, d.point, d.serves)
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, want, r.stderr)
			}
		}
	}
	r := runCommand(t, 120*time.Second, nil, "list", "--config", cfg)
	wrongLines([]string{"list"}, r)
	for _, d := range all {
		if d.point == d.serves {
			continue
		}
		state := fmt.Sprintf(`failed: pluginhost: plugin %q (%s): plugin does not provide point %q; it provides %s `, d.name, bins[d.serves], d.point, d.serves)
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(d.name) + ` +` + d.point + ` +` + regexp.QuoteMeta(bins[d.serves]) + ` .*` + regexp.QuoteMeta(state)).MatchString(r.stdout) {
			t.Errorf("PLUGINS table lacks %s failed with %q:\n%s", d.name, state, r.stdout)
		}
	}
	extensions, _, _ := strings.Cut(r.stdout, "\nPLUGIN ")
	if strings.Contains(extensions, "bad.") {
		t.Errorf("a plugin declared under a wrong point is listed as an extension:\n%s", extensions)
	}
	for _, d := range right[:3] { // a service plugin is no catalog extension
		if !strings.Contains(extensions, " "+d.name+" ") {
			t.Errorf("extensions lack %s:\n%s", d.name, extensions)
		}
	}
	if !row("ok.service", "service", bins["service"], "1", "greeter.Greeter", "checked: started once to check its point, then stopped; serve runs it").MatchString(r.stdout) {
		t.Errorf("the right service plugin is not shown checked:\n%s", r.stdout)
	}

	r = runCommand(t, 120*time.Second, nil, "list", "--config", cfg, "--json")
	var doc struct {
		Points []struct {
			Name       string
			Extensions []struct{ Name string }
		}
		Plugins []struct{ Name, State, Reason string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 1 || len(doc.Plugins) != len(all) {
		t.Fatalf("--json: exit %d, %v, %d plugins; want exit 1, all %d plugins\nstdout:\n%s\nstderr:\n%s", r.code, err, len(doc.Plugins), len(all), r.stdout, r.stderr)
	}
	for _, p := range doc.Points {
		for _, e := range p.Extensions {
			if strings.HasPrefix(e.Name, "bad.") {
				t.Errorf("--json lists %s as an extension of %s", e.Name, p.Name)
			}
		}
	}
	for _, p := range doc.Plugins {
		if strings.HasPrefix(p.Name, "bad.") != (p.State == "failed") {
			t.Errorf("--json: plugin %s is %s (%s)", p.Name, p.State, p.Reason)
		}
	}

	// --keys, POINT [EXTENSION] and --explain check the points the same
	// way (they used to list the wrong ones' keys and exit 0).
	for _, args := range [][]string{
		{"list", "--config", cfg, "--keys"},
		{"list", "--config", cfg, "loadbalance"},
		{"list", "--config", cfg, "--explain", "airnode://127.0.0.1:1/demo.Echo"},
	} {
		r := runCommand(t, 120*time.Second, nil, args[0], args[1:]...)
		wrongLines(args, r)
		if strings.Contains(r.stdout, "bad.") {
			t.Errorf("%v lists a plugin declared under a wrong point:\n%s", args, r.stdout)
		}
		if args[3] == "--keys" && !strings.Contains(r.stdout, "ok.loadbalance") {
			t.Errorf("%v lacks the right balancer plugin's keys:\n%s", args, r.stdout)
		}
	}

	// Declared right, list exits 0 (the service plugin is checked, not kept running).
	if r = runCommand(t, 120*time.Second, nil, "list", "--config", writeConfig(t, yaml(right))); r.code != 0 || r.stderr != "" {
		t.Fatalf("declared right: exit %d, stderr %q; want 0 and none", r.code, r.stderr)
	}
}

// A service plugin list could not run to check its point (its binary is
// missing) gets one warning line on stderr, as a plugin that fails to
// start does, besides its STATE; list, and list --keys, still exit 0:
// serve, which runs it, fails then.
func TestListWarnsOfAServicePluginItCouldNotCheck(t *testing.T) {
	cfg := writeConfig(t, "plugins:\n  - {name: acme.gone, point: service, command: /nonexistent/greeter}\n")
	for _, args := range [][]string{{"list", "--config", cfg}, {"list", "--config", cfg, "--keys"}} {
		r := runCommand(t, 60*time.Second, nil, args[0], args[1:]...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 0 || len(lines) != 1 || !strings.Contains(lines[0], `airnode: list: warning: service plugin failed to start, so list could not check its point; serve, which runs it, fails to start with it plugin=acme.gone point=service err="pluginhost: plugin \"acme.gone\" (/nonexistent/greeter): `) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 0 and one warning naming acme.gone", args, r.code, r.stderr)
		}
		if args[len(args)-1] == "--keys" {
			continue
		}
		if !regexp.MustCompile(`(?m)^acme\.gone +service +/nonexistent/greeter .*not started: list started it once to check its point, and it failed to start: fork/exec /nonexistent/greeter: no such file or directory; serve, which runs it, fails to start with it`).MatchString(r.stdout) {
			t.Errorf("list: STATE does not say why:\n%s", r.stdout)
		}
	}
}
