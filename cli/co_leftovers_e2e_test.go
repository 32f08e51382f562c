package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
)

// fix-co #1: call and bench of a direct address whose provider closed
// the default smux connection at its first ping retry once over tcp;
// when that fails too (a provider serving TLS, a server that is no
// airnode provider) the error was the first try's ~700 characters with
// "; call retried once over transport=tcp: ..." appended. It is now one
// short line saying both tries failed, the tcp try's cause first, the
// likely reason and the tls keys to try; health's is the same.
func TestCO_RetryOverTCPFailsTooSaysBothFailedShortly(t *testing.T) {
	ca := tlsconftest.NewCA(t, "airnode e2e CA")
	pCert, pKey := ca.Issue(t, "provider")
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--tls-cert", pCert, "--tls-key", pKey)
	closer := closingListener(t, false)

	for _, addr := range []string{p.addr, closer} {
		want := "CHANNEL_INACTIVE: " + addr + " closed the connection at its first ping over both transports, transport=tcp (the retry) and transport=smux (the default): likely TLS on the provider (try -p tls=true -p tls.ca=FILE) or not an airnode provider"
		r := call(t, nil, "airnode://"+addr+"/demo.Echo", "Echo", `"hi"`)
		if r.code != 1 || r.stderr != want+" (call demo.Echo.Echo)\n" {
			t.Errorf("call of %s: exit %d, stderr %q; want exit 1 and the one line %q", addr, r.code, r.stderr, want)
		}
		b := benchResult(t, "airnode://"+addr+"/demo.Echo", "-n", "10")
		if b.code != 1 || !strings.HasPrefix(b.stderr, "airnode: bench: no provider of demo.Echo available: "+want+"\n") {
			t.Errorf("bench of %s: exit %d, stderr %q; want exit 1 and %q", addr, b.code, b.stderr, want)
		}
		h := health(t, "--timeout", "1s", addr)
		if h.code != 1 || h.stderr != want+"\n" {
			t.Errorf("health of %s: exit %d, stderr %q; want exit 1 and the one line %q", addr, h.code, h.stderr, want)
		}
		for _, r := range []result{r, b, h} {
			if len(strings.SplitN(r.stderr, "\n", 2)[0]) > 320 || strings.Contains(r.stderr, "retried once") {
				t.Errorf("stderr %q: want one line of at most 320 bytes, without the first try's long text", r.stderr)
			}
			if r.elapsed > 5*time.Second {
				t.Errorf("took %v; want both tries within a few seconds", r.elapsed)
			}
		}
	}

	// the tcp retry fails otherwise (a server that closes smux
	// connections and holds tcp ones unanswered): its cause comes first
	hold := closingListener(t, true)
	r := health(t, "--timeout", "1s", hold)
	expectFail(t, r, "CHANNEL_INACTIVE: "+hold+" failed over both transports: transport=tcp (the retry): CHANNEL_INACTIVE: cannot connect to provider "+hold,
		"nothing answered the first ping", "; transport=smux (the default): closed the connection at its first ping\n")
}

// closingListener serves on a loopback port, closing every connection
// once it has read its first byte, but with holdTCP a connection whose
// first byte is the airnode tcp transport's (the frame magic's 0xA1),
// which it reads until the client closes, answering nothing. It returns
// the address; the listener and its connections close at cleanup.
func closingListener(t *testing.T, holdTCP bool) string {
	t.Helper()
	return closingListenerAfter(t, holdTCP, 0)
}

// closingListenerAfter is closingListener closing each connection delay
// after its first byte (a provider that closes at the first ping over a
// slow path).
func closingListenerAfter(t *testing.T, holdTCP bool, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 1)
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadFull(c, b); err == nil && holdTCP && b[0] == 0xA1 {
				conns = append(conns, c) // held until cleanup; the client closes its end
				continue
			}
			if delay > 0 {
				time.AfterFunc(delay, func() { c.Close() })
				continue
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// fix-co #2: a plugin binary replaced in place, then restarted, is
// refused for its sha256 with advice to set its sha256 "in plugins.yaml"
// whatever file declared it. The advice names serve's --config file.
func TestCO_SHA256AdviceNamesTheConfigFile(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "greeter")
	testbin.ReplaceFile(t, greeter, bin)
	pinned := sumOf(t, bin)
	cfg := filepath.Join(dir, "node.yaml")
	if err := os.WriteFile(cfg, []byte("plugins:\n  - {name: greeter, point: service, sha256: \""+pinned+"\", command: "+bin+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "127.0.0.1:0", filepath.Join(dir, "reg"), "--config", cfg)
	m := pluginPID.FindStringSubmatch(p.logText())
	if m == nil || m[1] != "greeter" {
		t.Fatalf("serve did not start the plugin:\n%s", p.logText())
	}
	pid, _ := strconv.Atoi(m[2])
	testbin.ReplaceFile(t, binary, bin) // the "upgrade"
	upgraded := sumOf(t, bin)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	want := "the binary changed since " + cfg + " pinned it: put back the binary whose sha256 is " + pinned +
		", or set this plugin's sha256 in " + cfg + " to " + upgraded + " and restart airnode"
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := health(t, p.addr, "greeter.Greeter")
		if strings.Contains(r.stderr, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health 10s after the kill: exit %d, stderr %q; want it to contain %q", r.code, r.stderr, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(p.logText(), "plugins.yaml") {
		t.Errorf("serve's log names plugins.yaml, which declares nothing here:\n%s", p.logText())
	}
}

// sumOf is the hex SHA-256 of the file at path.
func sumOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fix-co #3: a direct call whose service and method are the names of an
// exported service and one of its methods in another order (Echo.demo
// Echo, Echo demo.Echo, Echo.demo.Echo) says which were meant.
func TestCO_SwappedServiceAndMethodAreNamed(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	for _, args := range [][]string{
		{p.url("Echo.demo"), "Echo", `"hi"`},
		{p.url("Echo"), "demo.Echo", `"hi"`},
		{p.url("Echo.demo.Echo"), "x"},
	} {
		r := call(t, nil, args...)
		expectFail(t, r, "SERVICE_NOT_FOUND: service ", `is not exported on `+p.addr+` (exported here: demo.Echo); did you mean service "demo.Echo", method "Echo"?`)
	}
	r := call(t, nil, p.url("Echo.demo"), "Nope")
	expectFail(t, r, `SERVICE_NOT_FOUND: service "Echo.demo" is not exported on `+p.addr+` (exported here: demo.Echo)`)
	if strings.Contains(r.stderr, "did you mean") {
		t.Errorf("call Echo.demo Nope: stderr %q; want no suggestion (demo.Echo has no method Nope)", r.stderr)
	}
}
