package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// H-reg3 item 1 (tester29 6a): `registry ls` of several services ends with
// a total line (services, provider entries on how many addresses,
// consumer entries), and --summary prints one line per service instead of
// the provider tables. Two real serve processes, two real references (two
// nodes: two consumer entries), and one more service's provider entry.
func TestReg3_LsTotalAndSummary(t *testing.T) {
	dir := t.TempDir()
	serve(t, "127.0.0.1:0", dir)
	serve(t, "127.0.0.1:0", dir)
	reg := fileRegistry(t, dir)
	other := spi.MustParse("airnode://127.0.0.1:38512/demo.Other?side=provider&group=g&version=1.0&methods=A,B")
	if err := reg.Register(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
		t.Cleanup(func() { _ = n.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := n.Refer(ctx, spi.MustParse("airnode:///demo.Echo"), spi.MustParse("file://"+dir))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	const total = "2 services, 3 providers on 3 addresses, 2 consumers"
	code, out, errOut := airnode(t, nil, "registry", "ls", "--registry", "file://"+dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || lines[len(lines)-1] != total || !row("demo.Echo", "(2 providers)").MatchString(out) {
		t.Fatalf("ls: exit %d, want last line %q, got %q:\n%s%s", code, total, lines[len(lines)-1], out, errOut)
	}
	code, out, errOut = airnode(t, nil, "registry", "ls", "--summary", "--registry", "file://"+dir)
	if code != 0 || strings.Contains(out, "ADDRESS") {
		t.Fatalf("ls --summary: exit %d:\n%s%s", code, out, errOut)
	}
	for _, r := range [][]string{
		{"SERVICE", "PROVIDERS", "CONSUMERS"},
		{"demo.Echo", "2", "2"},
		{"g/demo.Other:1.0", "1", "0"},
		{total},
	} {
		if !row(r...).MatchString(out) {
			t.Errorf("--summary lacks row %q:\n%s", r, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 4 {
		t.Errorf("--summary printed %d lines, want 4 (header, 2 services, total):\n%s", n, out)
	}
	// one service asked for: its table only, no total line
	_, out, _ = airnode(t, nil, "registry", "ls", "--registry", "file://"+dir, "demo.Echo")
	if strings.Contains(out, "services,") || strings.Contains(out, "1 service,") {
		t.Errorf("ls SERVICE printed a total line:\n%s", out)
	}
	code, out, _ = airnode(t, nil, "registry", "ls", "--json", "--registry", "file://"+dir)
	var js lsJSON
	if err := json.Unmarshal([]byte(out), &js); code != 0 || err != nil || len(js.Services) != 2 {
		t.Fatalf("ls --json: exit %d, %v:\n%s", code, err, out)
	}
	for _, s := range js.Services {
		want := map[string]int{"demo.Echo": 2, "g/demo.Other:1.0": 0}[s.Service]
		if s.Consumers == nil || *s.Consumers != want {
			t.Errorf("--json %s consumers = %v, want %d", s.Service, s.Consumers, want)
		}
	}
}

// The memory registry lists no consumers: the total line says so rather
// than print 0.
func TestReg3_LsTotalWithoutConsumerListing(t *testing.T) {
	r, err := bundle.Catalogs().Registry.Get("memory")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := r.Build(spi.MustParse("memory://reg3"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	for _, u := range []string{"airnode://127.0.0.1:38513/a.A?side=provider", "airnode://127.0.0.1:38513/b.B?side=provider"} {
		if err := reg.Register(context.Background(), spi.MustParse(u)); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	if err := registryList(context.Background(), reg, "memory://reg3", nil, time.Now(), false, &b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), "\n2 services, 2 providers on 1 address; consumers not counted: the registry does not list them\n") {
		t.Fatalf("output:\n%s", b.String())
	}
}
