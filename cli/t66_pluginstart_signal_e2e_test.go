package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// running returns the pids of the processes running the binary path
// with mark (KEY=VALUE) in their environment (the binary is shared by
// parallel tests).
func running(t *testing.T, path, mark string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, d := range dirs {
		if exe, err := os.Readlink(d + "/exe"); err != nil || exe != path {
			continue
		}
		if env, err := os.ReadFile(d + "/environ"); err == nil && bytes.Contains(append([]byte{0}, env...), []byte("\x00"+mark+"\x00")) {
			pids = append(pids, filepath.Base(d))
		}
	}
	return pids
}

// waitStarted waits for a process of path with mark to run.
func waitStarted(t *testing.T, path, mark string) {
	t.Helper()
	waitFor(t, filepath.Base(path)+" running", func() bool { return len(running(t, path, mark)) > 0 })
}

// tester66 F16: a SIGTERM while serve starts a slow service plugin
// (20 s before its handshake, start_timeout 30s) cuts the start short:
// the plugin process is stopped and serve exits 0 at once, not when the
// plugin has started (18.7 s measured).
func TestSignalDuringServePluginStartStopsAtOnce(t *testing.T) {
	t.Parallel()
	plugin := hangPlugin(t)
	cfg := writeConfig(t, "plugins:\n  - {name: hang, point: service, command: "+plugin+", start_timeout: 30s, env: {START_DELAY: 20s, T66_MARK: "+t.Name()+"}}\n")
	mark := "T66_MARK=" + t.Name()
	p, _ := launchServe(t, binary, "127.0.0.1:0", "file://"+filepath.Join(t.TempDir(), "reg"), noAirnodeEnv, "", "--config", cfg, "--shutdown-wait", "0")
	waitStarted(t, plugin, mark)
	signalled := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Errorf("serve exited %d, want 0 (a stop during startup)", code)
	}
	if took := time.Since(signalled); took > 5*time.Second {
		t.Errorf("serve exited %v after the SIGTERM; want at once, not after the plugin's 20 s start", took.Round(time.Millisecond))
	}
	out := p.logText()
	if !strings.Contains(out, "SIGTERM received during startup, while starting plugins: stopping before serving") ||
		!strings.Contains(out, "its start was cut short after") {
		t.Errorf("serve's log does not say the signal cut the plugin's start short:\n%s", out)
	}
	if pids := running(t, plugin, mark); len(pids) > 0 {
		t.Errorf("plugin processes %v outlived serve", pids)
	}
}

// tester66 F16: a SIGINT while call starts a slow filter plugin exits
// 130 at once, saying so, the plugin process stopped (it waited for the
// plugin's whole start and exited 1).
func TestSignalDuringCallPluginStartExits130(t *testing.T) {
	t.Parallel()
	moody := buildPlugin(t, "github.com/airnode/airnode/sdk/pluginrpc/testdata/moody")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.moody, point: filter, command: "+moody+", start_timeout: 30s, env: {START_DELAY: 20s, T66_MARK: "+t.Name()+"}}\n")
	mark := "T66_MARK=" + t.Name()
	cmd := exec.Command(binary, "call", "--config", cfg, "airnode://127.0.0.1:1/demo.Echo", "Echo", `"x"`)
	cmd.Env = append(hostEnviron(), noAirnodeEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitStarted(t, moody, mark)
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("call still running 15 s after SIGINT\n%s", stderr.String())
	}
	if took := time.Since(signalled); took > 5*time.Second {
		t.Errorf("call exited %v after the SIGINT; want at once", took.Round(time.Millisecond))
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "call: interrupted by SIGINT while starting plugins") {
		t.Errorf("call: %v, stderr:\n%s\nwant exit 130 saying it was interrupted while starting plugins", err, stderr.String())
	}
	if pids := running(t, moody, mark); len(pids) > 0 {
		t.Errorf("plugin processes %v outlived call", pids)
	}
}
