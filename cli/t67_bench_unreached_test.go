package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// tester67 #3: a provider killed (-9) just before a bench: its ephemeral
// ZooKeeper entry stays listed until its session expires, during the
// run. The bench read "only 1 of 2 connection(s) up (the others got no
// answer to their first ping ... out of file descriptors ...)" though
// both providers listed at the end served from the start: the dead one's
// never-up connection was counted against them. It is now counted apart,
// as a provider listed that was never reachable and left the registry.
// Real ZooKeeper, real binaries.
func TestT67_3_BenchDeadEntryIsNotCountedAgainstTheOthers(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	reg := zks.URL("session.timeout=4s")
	serveWith(t, "127.0.0.1:0", reg, "-p", "warmup=0")
	serveWith(t, "127.0.0.1:0", reg, "-p", "warmup=0")
	dead := serveWith(t, "127.0.0.1:0", reg, "-p", "warmup=0")
	dead.kill9(t)
	time.Sleep(300 * time.Millisecond)
	r := runCommand(t, 60*time.Second, noAirnodeEnv, "bench", "--registry", zks.URL(""), "--duration", "10s", "-c", "4", "--json", "demo.Echo")
	t.Logf("bench --json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	var o struct {
		Up        int    `json:"connections_up"`
		Asked     int    `json:"connections_asked"`
		Left      int    `json:"providers_left"`
		Unreached int    `json:"providers_unreached_left"`
		Why       string `json:"unreached_error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
		t.Fatalf("bench --json: %v", err)
	}
	if o.Up != 2 || o.Asked != 2 || o.Left != 0 || o.Unreached != 1 {
		t.Errorf("connections %d of %d, providers_left %d, providers_unreached_left %d; want 2 of 2, 0, 1", o.Up, o.Asked, o.Left, o.Unreached)
	}
	if !strings.Contains(o.Why, "connection refused") {
		t.Errorf("unreached_error %q; want the dial's connection refused", o.Why)
	}
}

// The summary's connections text counts a provider never reachable that
// left apart from the connections, naming why it was not reachable.
func TestT67_3_ConnectionsTextUnreached(t *testing.T) {
	o := benchOutcome{ConnectionsUp: 2, ConnectionsAsked: 2, ProvidersUnreachedLeft: 1,
		UnreachedError: "kernel: provider 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused"}
	got := connectionsText(o, 1)
	want := "1 connection(s) per provider; 1 provider(s) listed were never reachable (kernel: provider 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused) and left the registry during the run (not counted above)"
	if got != want {
		t.Errorf("connectionsText = %q\nwant %q", got, want)
	}
}
