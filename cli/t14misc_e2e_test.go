package cli

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// tester14 finding 6: with --log-format json every line of serve and of
// call is JSON, the accesslog lines and the failsafe warning included
// (they went through their own text handler, or slog's default), and the
// consumer's access line of the call failsafe swallowed says so.
func TestT14_6_LogFormatJSONGivesOnlyJSONLines(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--registry", "file://"+dir,
		"--log-format", "json", "-p", "accesslog=true")
	cmd.Env = append(cmd.Environ(), "XDG_RUNTIME_DIR="+dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var serveLines []string
	addr := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			serveLines = append(serveLines, sc.Text())
			mu.Unlock()
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == "airnode serve: serving" {
				if a, ok := m["addr"].(string); ok {
					select {
					case addr <- a:
					default:
					}
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
	})
	var a string
	select {
	case a = <-addr:
	case <-done:
		t.Fatalf("serve exited:\n%s", strings.Join(serveLines, "\n"))
	case <-time.After(15 * time.Second):
		t.Fatal("serve not ready after 15s")
	}

	// tester82 #1: a business error (Fail's SERVICE_ERROR) is not
	// swallowed, as in Dubbo; a framework failure (Sleep's SERVER_TIMEOUT)
	// is.
	r := call(t, nil, "--log-format", "json", "--log-level", "info",
		"airnode://"+a+"/demo.Echo?cluster=failsafe&accesslog=true", "Fail", `"db down"`)
	if r.code == 0 || !strings.Contains(r.stderr, "SERVICE_ERROR") || !strings.Contains(r.stderr, "db down") || strings.Contains(r.stderr, "returning the zero result") {
		t.Fatalf("failsafe call of Fail: exit %d, stderr %q; want the business error SERVICE_ERROR db down, exit 1", r.code, r.stderr)
	}
	r = call(t, nil, "--log-format", "json", "--log-level", "info",
		"airnode://"+a+"/demo.Echo?cluster=failsafe&accesslog=true&timeout=300ms", "Sleep", "1500")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "null" {
		t.Fatalf("failsafe call: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	lines := jsonLines(t, "call", r.stderr)
	if !hasLine(lines, "call failed, returning the zero result", map[string]string{"level": "WARN", "component": "cluster", "cluster": "failsafe", "method": "Sleep", "status": "SERVER_TIMEOUT"}) {
		t.Errorf("call: no JSON failsafe warning in\n%s", r.stderr)
	}
	if !hasLine(lines, "access", map[string]string{"side": "consumer", "status": "SERVER_TIMEOUT", "swallowed": "true"}) {
		t.Errorf("call: no JSON consumer access line with status=SERVER_TIMEOUT swallowed=true in\n%s", r.stderr)
	}
	// The provider's access line is written after its answer: wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		text := strings.Join(serveLines, "\n")
		mu.Unlock()
		sl := jsonLines(t, "serve", text)
		if hasLine(sl, "access", map[string]string{"side": "provider", "method": "Fail", "status": "SERVICE_ERROR"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve: no JSON provider access line in\n%s", text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jsonLines decodes every non-empty line of text, failing t on one that
// is not a JSON object.
func jsonLines(t *testing.T, who, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: a line is not JSON (%v): %q", who, err, l)
		}
		out = append(out, m)
	}
	return out
}

// hasLine reports whether a line's msg starts with msg and its fields
// include want's (as text).
func hasLine(lines []map[string]any, msg string, want map[string]string) bool {
next:
	for _, l := range lines {
		if s, _ := l["msg"].(string); !strings.HasPrefix(s, msg) {
			continue
		}
		for k, v := range want {
			if s, ok := l[k].(string); ok && s == v {
				continue
			}
			if b, ok := l[k].(bool); ok && (b && v == "true" || !b && v == "false") {
				continue
			}
			continue next
		}
		return true
	}
	return false
}
