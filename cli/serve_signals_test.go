package cli

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleepInFlight starts a Sleep of ms on ref's provider and waits until
// the provider has it; the returned channel gets its error.
func sleepInFlight(t *testing.T, addr string, ms int) <-chan error {
	t.Helper()
	ref := refer(t, "airnode://"+addr+"/demo.Echo?timeout=30s")
	if _, err := ref.Invoke(context.Background(), "Echo", 0); err != nil {
		t.Fatal(err)
	}
	called := make(chan error, 1)
	go func() {
		_, err := ref.Invoke(context.Background(), "Sleep", ms)
		called <- err
	}()
	inv := ref.Providers()[0]
	waitFor(t, "the Sleep call in flight", func() bool { return inv.Stats().Active() == 1 })
	return called
}

// answered fails t unless the call on called succeeded within 10 s.
func answered(t *testing.T, called <-chan error) {
	t.Helper()
	select {
	case err := <-called:
		if err != nil {
			t.Errorf("the call in flight failed: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the call in flight was not answered")
	}
}

// Tester16 finding 2: with serve's stderr a pipe whose reader exits
// (`serve 2>&1 | logger`, a log shipper restarting), serve died at its
// next log line with SIGPIPE (exit 141), cutting the call in flight. Now
// the line is dropped; the call and a graceful SIGTERM stop work as
// without a log reader: exit 0, the call answered.
func TestPipe_ServeOutlivesItsLogReader(t *testing.T) {
	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--registry", "file://"+dir,
		"--shutdown-wait", "200ms", "-p", "accesslog=true")
	cmd.Env = append(cmd.Environ(), "XDG_RUNTIME_DIR="+dir)
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	lines := bufio.NewScanner(r)
	addr := ""
	for addr == "" && lines.Scan() {
		if m := servingLine.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatal("no serving line")
	}
	r.Close()                              // the log reader goes away
	called := sleepInFlight(t, addr, 1000) // the Echo before it logs an access line: EPIPE
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		done <- err // for the cleanup
		if err != nil {
			t.Errorf("serve with its log reader gone ended %v; want exit 0 after the drain", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop within 20s of SIGTERM")
	}
	answered(t, called)
}

// lossyWriter drops what it cannot write and, once a write works again,
// says how many lines were lost first.
func TestPipe_LossyWriterCountsLostLines(t *testing.T) {
	var fw flakyWriter
	l := &lossyWriter{w: &fw}
	fw.fail = true
	for range 3 {
		if n, err := l.Write([]byte("lost\n")); n != 5 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	fw.fail = false
	l.Write([]byte("back\n"))
	if got, want := fw.b.String(), "airnode: 3 log lines lost: writing stderr failed: broken pipe\nback\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

type flakyWriter struct {
	fail bool
	b    strings.Builder
}

func (f *flakyWriter) Write(p []byte) (int, error) {
	if f.fail {
		return 0, syscall.EPIPE
	}
	return f.b.Write(p)
}

// Tester16 finding 6: SIGHUP (an ssh session closing; logrotate's
// postrotate) killed serve at once, exit 129, the call in flight cut. Now
// it reopens the access-log file, says so, and serves on: the call in
// flight is answered, the next lines go to the new file, and SIGTERM
// still stops serve gracefully.
func TestHup_ServeReopensTheAccessLogAndServesOn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	g := startGroupServe(t, "--shutdown-wait", "200ms", "-p", "accesslog="+path)
	ref := refer(t, "airnode://"+g.addr+"/demo.Echo?timeout=30s")
	if _, err := ref.Invoke(context.Background(), "Echo", "before"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	called := sleepInFlight(t, g.addr, 1000)
	if err := syscall.Kill(g.cmd.Process.Pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the SIGHUP line", func() bool {
		return strings.Contains(g.log.String(), "SIGHUP: access-log files reopened; serving on")
	})
	if !strings.Contains(g.log.String(), "files=1") {
		t.Errorf("the SIGHUP line does not count 1 file:\n%s", g.log.String())
	}
	if _, err := ref.Invoke(context.Background(), "Echo", "after"); err != nil {
		t.Fatal(err)
	}
	answered(t, called)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no new access log after SIGHUP: %v", err)
	}
	if !strings.Contains(string(data), "method=Sleep") || !strings.Contains(string(data), "method=Echo") {
		t.Errorf("new access log:\n%s", data)
	}
	if err := syscall.Kill(g.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := g.exitCode(t, 20*time.Second); code != 0 {
		t.Errorf("serve exited %d on SIGTERM after a SIGHUP; want 0", code)
	}
}

// Tester16 finding 6: `kill -3` (a JVM's thread dump) killed serve with
// a 444-line dump, exit 2. serve writes every goroutine's stack to stderr
// between two marker lines and serves on, as a JVM does.
func TestSignalQuit_DumpsGoroutinesAndServesOn(t *testing.T) {
	g := startGroupServe(t, "--shutdown-wait", "200ms")
	if err := syscall.Kill(g.cmd.Process.Pid, syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the goroutine dump", func() bool {
		return strings.Contains(g.log.String(), "airnode: serve: end of goroutine dump")
	})
	log := g.log.String()
	for _, want := range []string{"SIGQUIT: goroutine dump (serve keeps running", "goroutine 1 [", "main.main()"} {
		if !strings.Contains(log, want) {
			t.Errorf("the dump lacks %q:\n%s", want, log)
		}
	}
	ref := refer(t, "airnode://"+g.addr+"/demo.Echo?timeout=30s")
	if _, err := ref.Invoke(context.Background(), "Echo", "still here"); err != nil {
		t.Fatalf("after SIGQUIT: %v", err)
	}
	if err := syscall.Kill(g.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := g.exitCode(t, 20*time.Second); code != 0 {
		t.Errorf("serve exited %d on SIGTERM after a SIGQUIT; want 0", code)
	}
}

// Tester16 finding 11: an access log that cannot be opened was reported
// only at the first call; serve now refuses to start, having listened on
// nothing.
func TestAccess_ServeRefusesAnUnopenableAccessLog(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "nonexistent", "dir", "a.log")
	r := runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, "serve", "--listen", "127.0.0.1:0",
		"--registry", "file://"+dir, "-p", "accesslog="+bad)
	if r.code != 1 || !strings.Contains(r.stderr, "cannot open the access log "+bad) || strings.Contains(r.stderr, "serving") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 naming %s before serving", r.code, r.stderr, bad)
	}
}

// bench, the other long-running command, also outlives its log reader:
// with every call's access line on a stderr whose reader closed, it runs
// to the end, prints its report and exits 0.
func TestPipe_BenchOutlivesItsLogReader(t *testing.T) {
	g := startGroupServe(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone before bench writes its first line
	var out strings.Builder
	cmd := exec.Command(binary, "bench", "airnode://"+g.addr+"/demo.Echo", "-n", "200", "-c", "2", "--warmup", "0",
		"--log-level", "info", "-p", "accesslog=true", "--json")
	cmd.Stdout, cmd.Stderr = &out, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), `"calls"`) {
			t.Errorf("bench with its log reader gone: %v, stdout %q; want exit 0 and the report", err, out.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("bench did not finish within 30s")
	}
}
