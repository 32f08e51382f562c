package cli

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
)

// list --json (cli2 #3): one JSON object on stdout with what list prints,
// the points with their extensions (a plugin's origin its binary's path,
// a filter's activation) and the plugins with their state, running and
// failed; not taken with --keys, POINT or --explain (exit 2). Real binary,
// real plugin processes.
func TestCli2_ListJSON(t *testing.T) {
	dir := t.TempDir()
	exit2 := writeScript(t, dir, "exit2.sh", "echo 'plugin: config missing, exiting' >&2\nexit 2\n")
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	cfg := writeConfig(t, "plugins:\n"+
		"  - {name: acme.p2c, point: loadbalance, command: "+p2c+"}\n"+
		"  - {name: acme.broken, point: loadbalance, command: "+exit2+"}\n")
	code, stdout, stderr := runBin(t, "", "--config", cfg, "list", "--json")
	if code != 0 {
		t.Fatalf("list --json: exit %d\n%s%s", code, stdout, stderr)
	}
	type ext struct {
		Name, Origin, Notes string
		Default             bool
		WireID              *int `json:"wire_id"`
		Activation          *struct {
			Sides []string
			Key   string
			Order int
		}
	}
	var got struct {
		Points []struct {
			Name, Key, Default string
			Extensions         []ext
		}
		Plugins []struct {
			Name, Point, Binary, State, Reason string
			Protocol, PID, Restarts            int
			Provides                           []string
		}
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout is not the documented object: %v\n%s", err, stdout)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
	}
	var names []string
	find := func(point, name string) *ext {
		for _, p := range got.Points {
			for i, e := range p.Extensions {
				if p.Name == point && e.Name == name {
					return &p.Extensions[i]
				}
			}
		}
		t.Fatalf("no extension %s %s in\n%s", point, name, stdout)
		return nil
	}
	for _, p := range got.Points {
		names = append(names, p.Name)
		if p.Name == "loadbalance" && (p.Key != "loadbalance" || p.Default != "random") || p.Name == "registry" && p.Key != "" {
			t.Errorf("point %+v", p)
		}
	}
	if !slices.IsSorted(names) || !slices.Contains(names, "filter") || !slices.Contains(names, "transport") {
		t.Errorf("points %v: want every point, sorted", names)
	}
	if e := find("loadbalance", "random"); e.Origin != "bundled" || !e.Default || e.Notes != "default" {
		t.Errorf("random: %+v", e)
	}
	if e := find("codec", "msgpack"); e.WireID == nil || *e.WireID != 1 || e.Notes != "wire id 1, default" || !e.Default {
		t.Errorf("msgpack: %+v, want wire id 1, the default", e)
	}
	if e := find("codec", "protobuf"); e.WireID == nil || *e.WireID != 3 || e.Notes != "wire id 3" {
		t.Errorf("protobuf: %+v, want wire id 3", e)
	}
	if e := find("loadbalance", "random"); e.WireID != nil {
		t.Errorf("random: %+v, want no wire id", e)
	}
	if e := find("loadbalance", "acme.p2c"); e.Origin != p2c || e.Default {
		t.Errorf("acme.p2c: %+v, want origin %s", e, p2c)
	}
	if e := find("filter", "accesslog"); e.Activation == nil || e.Activation.Key != "accesslog" || !slices.Equal(e.Activation.Sides, []string{"consumer", "provider"}) ||
		!strings.HasPrefix(e.Notes, "activated on consumer,provider") {
		t.Errorf("accesslog: %+v", e)
	}
	if len(got.Plugins) != 2 {
		t.Fatalf("plugins %+v, want 2", got.Plugins)
	}
	for _, p := range got.Plugins {
		switch p.Name {
		case "acme.p2c":
			if p.State != "running" || p.Point != "loadbalance" || p.Binary != p2c || p.Protocol == 0 || p.PID == 0 || len(p.Provides) == 0 || p.Reason != "" {
				t.Errorf("acme.p2c plugin %+v", p)
			}
		case "acme.broken":
			if p.State != "failed" || p.PID != 0 || !strings.Contains(p.Reason, "exited with status 2 before the handshake") || p.Provides == nil {
				t.Errorf("acme.broken plugin %+v", p)
			}
		default:
			t.Errorf("plugin %+v", p)
		}
	}
	// the table says the same
	_, table, _ := runBin(t, "", "--config", cfg, "list")
	if !strings.Contains(table, "acme.p2c") || !strings.Contains(table, "failed: ") {
		t.Errorf("list:\n%s", table)
	}
	for _, args := range [][]string{{"--keys"}, {"loadbalance"}, {"--explain", "demo.Echo"}} {
		code, out, errOut := runBin(t, "", append([]string{"list", "--json"}, args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "list: --json prints the plain listing") {
			t.Errorf("list --json %v: exit %d, stdout %q, stderr %q; want exit 2", args, code, out, errOut)
		}
	}
	// no plugins: an empty array, not null
	_, stdout, _ = runBin(t, "", "list", "--json")
	if !strings.Contains(stdout, `"plugins": []`) {
		t.Errorf("list --json without plugins:\n%s", stdout)
	}
}
