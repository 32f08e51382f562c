package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testbin"
)

// tester nu77 #3: a provider filter plugin whose restarts keep failing
// (its binary replaced by one that exits at start, or by one that
// provides another point) is retried forever, and every call of the
// services whose chain holds it fails meanwhile: /ready answers 503 and
// airnode_ready is 0 naming the service and the plugin, as airnode
// health's NOT_SERVING does, until a good binary is back (200, 1). It
// was 200 and 1 throughout.
func TestNu77FilterPluginFailingRestartsMakeTheNodeNotReady(t *testing.T) {
	good := plug3aPlugin(t)
	wrongPoint := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/keyslb")
	exitsAtStart := filepath.Join(t.TempDir(), "exits")
	if err := os.WriteFile(exitsAtStart, []byte("#!/bin/sh\necho 'plug3a: config missing' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, bad, reason string }{
		{"ExitsAtStart", exitsAtStart, "exited with status 1"},
		{"WrongPoint", wrongPoint, "does not provide point"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "plug3a")
			testbin.ReplaceFile(t, good, bin)
			cfg := writeConfig(t, "plugins:\n  - {name: acme.plug3a, point: filter, command: "+bin+"}\n")
			regDir := filepath.Join(dir, "reg")
			p := serve(t, "127.0.0.1:0", regDir, "--config", cfg, "--metrics", "127.0.0.1:0")
			addr := metricsAddr(t, p)
			waitProbe(t, addr, "/ready", http.StatusOK, "serving", 5*time.Second)
			waitProbe(t, addr, "/metrics", http.StatusOK, "\nairnode_ready 1", time.Second)
			m := pluginPID.FindStringSubmatch(p.logText())
			if m == nil || m[1] != "acme.plug3a" {
				t.Fatalf("serve did not start the plugin:\n%s", p.logText())
			}
			pid, _ := strconv.Atoi(m[2])

			testbin.ReplaceFile(t, tc.bad, bin)
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			body := waitProbe(t, addr, "/ready", http.StatusServiceUnavailable, `demo.Echo: filter plugin "acme.plug3a" restarting: `, 10*time.Second)
			t.Logf("/ready: %q", body)
			waitProbe(t, addr, "/metrics", http.StatusOK, "\nairnode_ready 0", time.Second)
			// still so after failed restarts, with the reason of the last
			waitFor(t, "a failed restart", func() bool {
				return containsAll(p.logText(), []string{"plugin restart failed; trying again", tc.reason})
			})
			waitProbe(t, addr, "/ready", http.StatusServiceUnavailable, tc.reason, 10*time.Second)
			if r := runCommand(t, 10*time.Second, nil, "health", p.addr); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "NOT_SERVING") {
				t.Errorf("airnode health: exit %d, %q %q; want NOT_SERVING, exit 1", r.code, r.stdout, r.stderr)
			}

			testbin.ReplaceFile(t, good, bin)
			waitProbe(t, addr, "/ready", http.StatusOK, "serving", 20*time.Second)
			waitProbe(t, addr, "/metrics", http.StatusOK, "\nairnode_ready 1", time.Second)
			expectOK(t, call(t, nil, p.url("demo.Echo"), "Echo", "1"), "1")
		})
	}
}
