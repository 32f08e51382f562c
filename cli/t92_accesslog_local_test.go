package cli

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testaddr"
)

// TestT92_AccessLogPathIsNotPublished (tester92 #5): serve -p
// accesslog=/path published the provider's own file path in its registry
// entry (as the TLS file paths are not). The entry, serve's "exported"
// and "serving" lines and registry ls now leave it out, while the
// provider still writes its access lines to the file: on port 0 (the
// filters built again once the port is known) and on a fixed port.
func TestT92_AccessLogPathIsNotPublished(t *testing.T) {
	for _, listen := range []string{"127.0.0.1:0", testaddr.Reserved(t)} {
		dir := t.TempDir()
		logFile := filepath.Join(t.TempDir(), "access.log")
		p := serve(t, listen, dir, "-p", "accesslog="+logFile)
		for _, e := range providerEntries(t, dir, "demo.Echo") {
			if name, _ := url.QueryUnescape(e); strings.Contains(name, "accesslog") || strings.Contains(name, logFile) {
				t.Errorf("%s: registry entry %s publishes the access log", listen, name)
			}
		}
		for _, l := range strings.Split(p.logText(), "\n") {
			if strings.Contains(l, "msg=exported") || strings.Contains(l, `serving"`) {
				if strings.Contains(l, "accesslog") {
					t.Errorf("%s: serve logs the access log path as published: %s", listen, l)
				}
			}
		}
		ls := runCommand(t, 20*time.Second, nil, "registry", "ls", "--registry", "file://"+dir, "--json")
		if ls.code != 0 || strings.Contains(ls.stdout, "accesslog") || !strings.Contains(ls.stdout, p.addr) {
			t.Errorf("%s: registry ls --json: exit %d, %s; want the provider, without accesslog", listen, ls.code, ls.stdout)
		}
		r := runCommand(t, 20*time.Second, nil, "call", "--registry", "file://"+dir, "demo.Echo", "Echo", `"hi"`)
		if r.code != 0 {
			t.Fatalf("%s: call: exit %d, %s", listen, r.code, r.stderr)
		}
		var lines string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			b, _ := os.ReadFile(logFile)
			if lines = string(b); strings.Contains(lines, "side=provider") && strings.Contains(lines, "method=Echo") {
				break
			}
		}
		if !strings.Contains(lines, "side=provider") || !strings.Contains(lines, "method=Echo") {
			t.Errorf("%s: the provider wrote no access line of the call to %s: %q", listen, logFile, lines)
		}
	}
}
