package cli

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// tester65 #11: registry ls on ZooKeeper counted a disabled entry
// (enabled=false) and an http:// entry as providers, both shown healthy,
// and hid a node name that is not a URL-encoded URL, while call skipped
// all three. ls now marks them as it marks the file registry's: the
// disabled one as disabled, not counted; the http one and the malformed
// one as invalid entries consumers skip (text, --summary, --json). Real
// ZooKeeper, the real binary.
func TestT65_11_ZooKeeperLsMarksDisabledAndInvalid(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	c := zkClient(t, zks)
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	good := "airnode://127.0.0.1:20881/zk.Dis?category=providers&interface=zk.Dis&methods=Echo&side=provider&timestamp=" + now
	off := "airnode://127.0.0.1:20880/zk.Dis?category=providers&interface=zk.Dis&enabled=false&methods=Echo&side=provider&timestamp=" + now
	for _, p := range []string{"/airnode", "/airnode/zk.Dis", "/airnode/zk.Dis/providers"} {
		if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(p, err)
		}
	}
	for _, name := range []string{url.QueryEscape(good), url.QueryEscape(off), "http%3A%2F%2F127.0.0.1%3A20880%2Fzk.Dis", "garbage%zz"} {
		if _, err := c.Create("/airnode/zk.Dis/providers/"+name, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(name, err)
		}
	}
	reg := zks.URL("")
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "registry", "ls", "--registry", reg, "zk.Dis")
	t.Logf("ls:\n%s%s", r.stdout, r.stderr)
	if r.code != 0 || !strings.Contains(r.stdout, "zk.Dis  (1 provider, 1 disabled, 2 invalid entries)") {
		t.Errorf("ls: exit %d; want the header to count 1 provider, 1 disabled, 2 invalid entries", r.code)
	}
	for _, w := range []string{
		`invalid entry /airnode/zk.Dis/providers/garbage%zz (consumers skip it): not a URL-encoded URL`,
		`invalid entry http://127.0.0.1:20880/zk.Dis (consumers skip it): scheme "http", which no transport serves (want airnode://)`,
	} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("ls does not say %q", w)
		}
	}
	if !row("127.0.0.1:20880", "100", "-", "-", "airnode  "+disabledNote).MatchString(r.stdout) &&
		!strings.Contains(r.stdout, "airnode  "+disabledNote) {
		t.Errorf("ls does not mark 127.0.0.1:20880 %s", disabledNote)
	}
	if strings.Contains(r.stdout, "   http") {
		t.Errorf("ls lists the http entry as a provider row")
	}

	r = runCommand(t, 30*time.Second, noAirnodeEnv, "registry", "ls", "--summary", "--registry", reg, "zk.Dis")
	t.Logf("ls --summary:\n%s%s", r.stdout, r.stderr)
	if r.code != 0 || !row("zk.Dis", "1 (1 disabled) (2 invalid)", "0").MatchString(r.stdout) {
		t.Errorf("ls --summary: exit %d; want zk.Dis 1 (1 disabled) (2 invalid) 0", r.code)
	}

	r = runCommand(t, 30*time.Second, noAirnodeEnv, "registry", "ls", "--json", "--registry", reg, "zk.Dis")
	var out struct {
		Services []struct {
			Service   string
			Providers []struct {
				Address         string
				Protocol        string
				EffectiveWeight *int64 `json:"effective_weight"`
				Disabled        bool
			}
			Invalid []struct{ Name, Path, Why string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Services) != 1 {
		t.Fatalf("ls --json: exit %d, %v:\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	s := out.Services[0]
	if len(s.Providers) != 2 || len(s.Invalid) != 2 {
		t.Fatalf("ls --json: %d providers, %d invalid; want 2 (one disabled) and 2:\n%s", len(s.Providers), len(s.Invalid), r.stdout)
	}
	for _, p := range s.Providers {
		if p.Protocol != "airnode" {
			t.Errorf("--json provider %s has protocol %s", p.Address, p.Protocol)
		}
		if wantOff := p.Address == "127.0.0.1:20880"; p.Disabled != wantOff || wantOff && (p.EffectiveWeight == nil || *p.EffectiveWeight != 0) {
			t.Errorf("--json provider %s: disabled %v, effective_weight %v; want disabled %v (and effective_weight 0 if so)", p.Address, p.Disabled, p.EffectiveWeight, wantOff)
		}
	}
}
