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

// tester82 #10: registry ls called a genuine Dubbo provider (a dubbo://
// entry under /dubbo/X/providers, a Java provider in a shared tree) an
// "invalid entry ... scheme "dubbo", which no transport serves". It is
// shown as a Dubbo provider now, not callable by airnode (text, --summary,
// --json); a dubbo:// entry with no port stays an invalid entry. Real
// ZooKeeper, the real binary.
func TestAX_ZooKeeperLsShowsDubboProviders(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	c := zkClient(t, zks)
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	good := "airnode://127.0.0.1:20881/t.Svc?category=providers&interface=t.Svc&methods=Echo&side=provider&timestamp=" + now
	java := "dubbo://127.0.0.1:37699/t.Svc?anyhost=true&application=java&dubbo=2.0.2&interface=t.Svc&methods=work&release=2.7.8&side=provider&timestamp=" + now
	portless := "dubbo://127.0.0.1/t.Svc?interface=t.Svc&side=provider"
	for _, p := range []string{"/dubbo", "/dubbo/t.Svc", "/dubbo/t.Svc/providers"} {
		if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(p, err)
		}
	}
	for _, name := range []string{good, java, portless} {
		if _, err := c.Create("/dubbo/t.Svc/providers/"+url.QueryEscape(name), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(name, err)
		}
	}
	reg := zks.URL("root=/dubbo")
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "registry", "ls", "--registry", reg, "t.Svc")
	t.Logf("ls:\n%s%s", r.stdout, r.stderr)
	for _, w := range []string{
		"t.Svc  (1 provider, 1 invalid entry, 1 Dubbo provider (dubbo:// protocol, not callable by airnode))",
		"Dubbo provider dubbo://127.0.0.1:37699/t.Svc?",
		"invalid entry dubbo://127.0.0.1/t.Svc?side=provider (consumers skip it): no port",
	} {
		if r.code != 0 || !strings.Contains(r.stdout, w) {
			t.Errorf("ls: exit %d, does not say %q", r.code, w)
		}
	}
	if strings.Contains(r.stdout, "37699 (consumers skip it): scheme") {
		t.Errorf("ls calls the Dubbo provider an invalid entry")
	}

	r = runCommand(t, 30*time.Second, noAirnodeEnv, "registry", "ls", "--summary", "--registry", reg, "t.Svc")
	if r.code != 0 || !row("t.Svc", "1 (1 invalid) (1 Dubbo)", "0").MatchString(r.stdout) {
		t.Errorf("ls --summary: exit %d; want t.Svc 1 (1 invalid) (1 Dubbo) 0:\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = runCommand(t, 30*time.Second, noAirnodeEnv, "registry", "ls", "--json", "--registry", reg, "t.Svc")
	var out struct {
		Services []struct {
			Invalid []struct{ Path string }
			Dubbo   []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Services) != 1 {
		t.Fatalf("ls --json: exit %d, %v:\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if s := out.Services[0]; len(s.Dubbo) != 1 || !strings.HasPrefix(s.Dubbo[0], "dubbo://127.0.0.1:37699/t.Svc?") || len(s.Invalid) != 1 {
		t.Errorf("ls --json: dubbo %q, invalid %v; want the Java provider under dubbo and the portless entry invalid", s.Dubbo, s.Invalid)
	}
}
