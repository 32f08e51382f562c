package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/file/filetest"
)

// TestFix35_ServiceOfOnlyInvalidEntriesIsListed, through the binary: a
// service whose providers directory holds only invalid entries was left
// out of `registry ls` (shown only when named), so the junk a person left
// in it went unseen. It is now listed with its invalid entries in the
// table, counted in --summary and given in --json, and counted in the
// total line's services; a service with an empty providers directory is
// still hidden.
func TestFix35_ServiceOfOnlyInvalidEntriesIsListed(t *testing.T) {
	t.Parallel()
	regDir := t.TempDir()
	reg := "file://" + regDir
	dir := func(svc string) string {
		d := filepath.Join(regDir, svc, "providers")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	filetest.HandEntry(t, dir("demo.Echo"), "hand-good", "airnode://127.0.0.1:37011/demo.Echo?side=provider\n")
	junk := filetest.JunkEntries(t, dir("only.Bad"), "only.Bad")
	dir("empty.Svc")

	r := runCommand(t, 20*time.Second, noAirnodeEnv, "registry", "ls", "--registry", reg)
	head := regexp.MustCompile(fmt.Sprintf(`(?m)^only\.Bad +\(0 providers, %d invalid entries\)$`, len(junk)))
	if r.code != 0 || !head.MatchString(r.stdout) {
		t.Errorf("registry ls: exit %d, stdout:\n%s\nwant a line matching %s", r.code, r.stdout, head)
	}
	for _, j := range junk {
		if !strings.Contains(r.stdout, "  invalid entry "+j.Path+" (consumers skip it): ") {
			t.Errorf("registry ls does not show %s:\n%s", j.Path, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "\n2 services, 1 provider on 1 address, 0 consumers\n") || strings.Contains(r.stdout, "empty.Svc") {
		t.Errorf("registry ls: want demo.Echo and only.Bad counted, empty.Svc hidden:\n%s", r.stdout)
	}

	r = runCommand(t, 20*time.Second, noAirnodeEnv, "registry", "ls", "--summary", "--registry", reg)
	line := regexp.MustCompile(fmt.Sprintf(`(?m)^only\.Bad +0 \(%d invalid\) +0$`, len(junk)))
	if r.code != 0 || !line.MatchString(r.stdout) || !strings.Contains(r.stdout, "\n2 services, 1 provider") || strings.Contains(r.stdout, "empty.Svc") {
		t.Errorf("registry ls --summary: exit %d, stdout:\n%s\nwant a line matching %s", r.code, r.stdout, line)
	}

	r = runCommand(t, 20*time.Second, noAirnodeEnv, "registry", "ls", "--json", "--registry", reg)
	var out lsJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); r.code != 0 || err != nil {
		t.Fatalf("registry ls --json: exit %d, %v:\n%s", r.code, err, r.stdout)
	}
	var names []string
	for _, s := range out.Services {
		names = append(names, s.Service)
		if s.Service == "only.Bad" && (len(s.Providers) != 0 || len(s.Invalid) != len(junk)) {
			t.Errorf("--json only.Bad: %d providers, %d invalid; want 0 and %d", len(s.Providers), len(s.Invalid), len(junk))
		}
	}
	if strings.Join(names, " ") != "demo.Echo only.Bad" {
		t.Errorf("--json lists %v, want [demo.Echo only.Bad]", names)
	}
}
