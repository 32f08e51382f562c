package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// attService is att.Svc, exported by the kernel in process: its methods
// set response attachments (spi.SetResponseAttachments).
type attService struct{}

// Page answers n and a cursor past it, with a value that needs quoting.
func (attService) Page(ctx context.Context, n int) (int, error) {
	return n, spi.SetResponseAttachments(ctx, "cursor", fmt.Sprint(n+10), "server-timing", "db;dur=1", "note", "two words")
}

// Plain sets none.
func (attService) Plain(context.Context) (string, error) { return "plain", nil }

// Refuse fails, with a reason code in its answer's attachments.
func (attService) Refuse(ctx context.Context) (string, error) {
	if err := spi.SetResponseAttachments(ctx, "reason-code", "E42"); err != nil {
		return "", err
	}
	return "", errors.New("refused")
}

// `airnode call` showed nothing of the attachments a provider's method
// sets on its answer (cli4 finding 1). --show-attachments prints them on
// stderr, sorted, quoted where needed, before a failure's error line,
// one JSON record under --log-format json; stdout stays the result.
func TestCallShowAttachmentsPrintsTheAnswers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prov := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = prov.Close() })
	exp, err := prov.Export(ctx, attService{}, spi.MustParse("airnode://127.0.0.1:0/att.Svc"))
	if err != nil {
		t.Fatal(err)
	}
	u := "airnode://" + exp.URL().Address() + "/att.Svc"

	r := call(t, nil, u, "Page", "2")
	if r.code != 0 || r.stdout != "2\n" || strings.Contains(r.stderr, "attachment") {
		t.Fatalf("without the flag: exit %d, stdout %q, stderr %q; want 2 and no attachment on stderr", r.code, r.stdout, r.stderr)
	}
	r = call(t, nil, u, "Page", "2", "--show-attachments")
	want := "attachment cursor=12\nattachment note=\"two words\"\nattachment server-timing=db;dur=1\n"
	if r.code != 0 || r.stdout != "2\n" || r.stderr != want {
		t.Fatalf("exit %d, stdout %q, stderr %q; want stdout 2 and stderr %q", r.code, r.stdout, r.stderr, want)
	}
	r = call(t, nil, u, "Plain", "--show-attachments")
	if r.code != 0 || r.stdout != "\"plain\"\n" || r.stderr != "no response attachments\n" {
		t.Fatalf("Plain: exit %d, stdout %q, stderr %q; want \"no response attachments\"", r.code, r.stdout, r.stderr)
	}
	r = call(t, nil, u, "Refuse", "--show-attachments")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "attachment reason-code=E42\n") || !strings.Contains(r.stderr, "refused") {
		t.Fatalf("Refuse: exit %d, stderr %q; want exit 1, the attachment line, then the error", r.code, r.stderr)
	}

	// --log-format json: one record, the object always there
	for method, want := range map[string]map[string]string{
		"Page":  {"cursor": "12", "note": "two words", "server-timing": "db;dur=1"},
		"Plain": {},
	} {
		args := []string{u, method, "--show-attachments", "--log-format", "json"}
		if method == "Page" {
			args = append(args, "2")
		}
		r = call(t, nil, args...)
		var rec struct {
			Level, Msg  string
			Attachments map[string]string
		}
		if err := json.Unmarshal([]byte(r.stderr), &rec); err != nil || r.code != 0 {
			t.Fatalf("%s: exit %d, stderr %q (%v); want one JSON record", method, r.code, r.stderr, err)
		}
		if rec.Msg != "response attachments" || rec.Attachments == nil || !maps.Equal(rec.Attachments, want) {
			t.Fatalf("%s: record %s; want msg \"response attachments\" and attachments %v", method, r.stderr, want)
		}
	}
}

// A plugin declared under a point its binary does not provide (the p2c
// balancer as a registry) left `airnode list` at exit 0, the mistake
// only in the STATE column (cli4 finding 2). list still prints it all,
// then fails naming the plugin, its key, the point declared and the one
// the binary implements; a plugin declared right lists as before.
func TestListFailsForAPluginDeclaredUnderTheWrongPoint(t *testing.T) {
	bin := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	cfg := filepath.Join(t.TempDir(), "plugins.yaml")
	yaml := "plugins:\n  - {name: acme.p2c, point: loadbalance, command: " + bin + "}\n  - {name: acme.wrong, point: registry, command: " + bin + "}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	wantErr := `list: plugin "acme.wrong" is declared under point registry (` + cfg + `: key "plugins[1].point"), but its binary ` + bin + ` implements loadbalance, not registry: declare it with point: loadbalance`
	r := runCommand(t, 60*time.Second, nil, "list", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, wantErr) {
		t.Fatalf("exit %d, stderr %q; want exit 1 and %q", r.code, r.stderr, wantErr)
	}
	for _, s := range []string{"POINT ", "roundrobin", "acme.p2c ", "running", "acme.wrong ", `does not provide point "registry"`} {
		if !strings.Contains(r.stdout, s) {
			t.Fatalf("stdout lacks %q:\n%s", s, r.stdout)
		}
	}
	r = runCommand(t, 60*time.Second, nil, "list", "--config", cfg, "--json")
	var doc struct {
		Plugins []struct{ Name, State string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 1 || len(doc.Plugins) != 2 || !strings.Contains(r.stderr, wantErr) {
		t.Fatalf("--json: exit %d, stdout %q (%v), stderr %q; want both plugins listed, then exit 1", r.code, r.stdout, err, r.stderr)
	}

	if err := os.WriteFile(cfg, []byte("plugins:\n  - {name: acme.p2c, point: loadbalance, command: "+bin+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r = runCommand(t, 60*time.Second, nil, "list", "--config", cfg); r.code != 0 {
		t.Fatalf("declared right: exit %d, stderr %q; want 0", r.code, r.stderr)
	}
}
