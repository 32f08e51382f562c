package cli

import (
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangPlugin builds testdata/hangplugin: service hang.Svc, whose Hang
// never returns, started after $START_DELAY.
func hangPlugin(t *testing.T) string {
	return buildPlugin(t, "github.com/airnode/airnode/cli/testdata/hangplugin")
}

// tester66 F2: a service plugin's method still running at the call's
// deadline is SERVER_TIMEOUT worded as for an in-process method, not
// gRPC's "stream terminated by RST_STREAM with error code: CANCEL".
func TestHungServicePluginCallSaysTheConsumersDeadline(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "plugins:\n  - {name: hang, point: service, command: "+hangPlugin(t)+"}\n")
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--config", cfg)
	p.waitServing(t, "hang.Svc")
	r := call(t, nil, p.url("hang.Svc"), "Hang")
	// The provider's answer, or, when it is late (a loaded CI machine),
	// the consumer's own timeout of the same second: both SERVER_TIMEOUT,
	// neither gRPC's words.
	// The provider's "after" is the time the request carried, which is
	// the consumer's second less what passed before it was sent (999ms on
	// a loaded machine).
	consumer := `^SERVER_TIMEOUT: exchange: call hang\.Svc\.Hang to ` + regexp.QuoteMeta(p.addr) + ` timed out after 1(\.\d+)?s waiting for the response`
	provider := `^SERVER_TIMEOUT: exchange: call hang\.Svc\.Hang timed out after (1s|9\d\d(\.\d+)?ms) on the provider \(the call's deadline passed while the method ran\)`
	if !regexp.MustCompile(consumer).MatchString(r.stderr) && !regexp.MustCompile(provider).MatchString(r.stderr) {
		t.Errorf("stderr %q; want the provider's or the consumer's SERVER_TIMEOUT of the call's second", r.stderr)
	}
	if r.code != 1 || strings.Contains(r.stderr, "RST_STREAM") {
		t.Errorf("stderr has gRPC's stream error: %q", r.stderr)
	}
}

// tester66 F12: a service plugin's call abandoned at shutdown says the
// host cancelled its call in the plugin, whose method had not returned,
// not "the method returned: ... context canceled".
func TestAbandonedServicePluginCallSaysItHadNotReturned(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "plugins:\n  - {name: hang, point: service, command: "+hangPlugin(t)+"}\n")
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--config", cfg, "--shutdown-wait", "0", "--shutdown-timeout", "1s", "--metrics", "127.0.0.1:0")
	p.waitServing(t, "hang.Svc")
	long := make(chan result, 1)
	go func() { long <- call(t, nil, "--timeout", "20s", p.url("hang.Svc"), "Hang") }()
	waitProbe(t, metricsAddr(t, p), "/metrics", http.StatusOK, `airnode_calls_in_flight{method="Hang",service="hang.Svc",side="provider"} 1`, 10*time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 1 {
		t.Errorf("serve exited %d, want 1 (a call abandoned)", code)
	}
	lr := <-long
	want := "the call was abandoned (service hang.Svc: the host cancelled its call of Hang in the plugin, whose method had not returned)"
	if lr.code == 0 || !strings.HasPrefix(lr.stderr, "SERVER_ERROR: ") || !strings.Contains(lr.stderr, want) || strings.Contains(lr.stderr, "the method returned") {
		t.Errorf("the abandoned call: exit %d, stderr %q; want SERVER_ERROR with %q", lr.code, lr.stderr, want)
	}
}
