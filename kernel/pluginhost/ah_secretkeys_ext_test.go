package pluginhost_test

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// A plugin's new process (a handover into another build,
// testdata/secretkeyfilter) that declares URL keys its first process
// did not has them claimed as Register claims the first process's: its
// new Secret key "acme.ah.password" is marked secret, so printed URLs
// hide its value; its Secret "timeout" (the kernel's key) and
// "accesslog" (the bundled accesslog filter's) are ignored, each with a
// warning naming the key, the plugin and the key's owner, and the plugin
// keeps running. Before, no new key was marked or checked: the password
// showed in printed URLs.
func TestAHRedeclaredKeysAreClaimedAsAtRegistration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keyfilter")
	testbin.ReplaceFile(t, binary("keyfilter"), path)
	var log logbuf.Buffer
	h, cat, err := startHostLogging(t, slog.New(slog.NewTextHandler(&log, nil)),
		config.Plugin{Name: "acme.keys", Point: pluginrpc.PointFilter, Command: path})
	if err != nil {
		t.Fatal(err)
	}
	u := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?acme.a=on&acme.ah.password=hunter2&accesslog=true&timeout=1500")
	if spi.IsSecretKey("acme.ah.password") {
		t.Fatal("acme.ah.password is secret before any process declared it so")
	}

	handOver(t, h, "acme.keys", path, "secretkeyfilter")
	if !spi.IsSecretKey("acme.ah.password") {
		t.Errorf("after the handover to a build declaring acme.ah.password Secret: it is not a secret key")
	}
	r := u.Redacted()
	if strings.Contains(r, "hunter2") {
		t.Errorf("Redacted() = %q shows the new Secret key's value", r)
	}
	for _, k := range []string{"timeout", "accesslog"} {
		if spi.IsSecretKey(k) {
			t.Errorf("%q is secret: the plugin's new process may not hide a key of the kernel or of another extension", k)
		}
	}
	if !strings.Contains(r, "timeout=1500") || !strings.Contains(r, "accesslog=true") {
		t.Errorf("Redacted() = %q hides the kernel's or accesslog's value", r)
	}
	if st := info(t, h, "acme.keys").State; st != pluginhost.StateRunning {
		t.Errorf("plugin state %v after the handover; want running", st)
	}
	if _, err := cat.Filter.Get("acme.keys"); err != nil {
		t.Errorf("the filter after the handover: %v", err)
	}
	text := log.String()
	for _, want := range []struct{ key, owner string }{
		{"timeout", "the kernel"},
		{"accesslog", `filter \"accesslog\" (bundled)`},
	} {
		var line string
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, "the key is ignored") && strings.Contains(l, `\"`+want.key+`\"`) {
				line = l
			}
		}
		for _, s := range []string{"level=WARN", "plugin=acme.keys", `\"acme.keys\"`, want.owner} {
			if !strings.Contains(line, s) {
				t.Errorf("the warning about %q lacks %q: %q\nlog:\n%s", want.key, s, line, text)
			}
		}
	}
}
