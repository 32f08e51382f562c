package cli

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// fix-cm #1: `airnode call airnode://ADDR/demo.Echo Echo` against a
// provider serving --transport tcp failed CHANNEL_INACTIVE with a
// ~700-character guess, while health fell back by itself. Without a
// transport named, call and bench now retry once over tcp as health
// does, saying so in one line; with one named they fail in one short
// line naming the transport, where it was given and the -p to try.
func TestCM_CallAndBenchFallBackToTheOtherTransport(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--transport", "tcp")
	warning := p.addr + " closed a transport=smux connection (the default) at its first ping and answered over transport=tcp: give -p transport=tcp to skip the first try\n"

	r := call(t, nil, p.url("demo.Echo"), "Echo", `"hi"`)
	if r.code != 0 || strings.TrimSpace(r.stdout) != `"hi"` || r.stderr != "airnode: call: warning: "+warning {
		t.Fatalf("call over the default transport: exit %d, stdout %q, stderr %q; want 0, \"hi\" and the one warning line %q", r.code, r.stdout, r.stderr, warning)
	}
	if r.elapsed > 5*time.Second {
		t.Errorf("call took %v; want both tries within a few seconds", r.elapsed)
	}

	b := benchResult(t, p.url("demo.Echo"), "-n", "20")
	if b.code != 0 || !strings.Contains(b.stdout+b.stderr, "airnode: bench: warning: "+warning) || strings.Contains(b.stderr, "CHANNEL_INACTIVE") {
		t.Errorf("bench over the default transport: exit %d, stdout %q, stderr %q; want 0 and the warning %q", b.code, b.stdout, b.stderr, warning)
	}

	// named: no guess, one short error with the -p to try
	for _, c := range []struct {
		args []string
		env  []string
		from string
	}{
		{[]string{p.url("demo.Echo"), "Echo", `"hi"`, "-p", "transport=smux"}, nil, "from -p transport=smux"},
		{[]string{p.url("demo.Echo") + "?transport=smux", "Echo", `"hi"`}, nil, "from SERVICE_URL key transport=smux"},
		{[]string{p.url("demo.Echo"), "Echo", `"hi"`}, []string{"AIRNODE_CONSUMER_TRANSPORT=smux"}, "from env AIRNODE_CONSUMER_TRANSPORT"},
	} {
		r := call(t, c.env, c.args...)
		expectFail(t, r, "CHANNEL_INACTIVE: "+p.addr+" closed the connection at its first ping: likely a transport mismatch (this consumer's transport=smux, "+c.from+"; try -p transport=tcp) or TLS on the provider (try -p tls=true -p tls.ca=FILE)")
		if strings.Contains(r.stderr, "answered over") || strings.Count(r.stderr, "\n") != 1 || len(r.stderr) > 300 {
			t.Errorf("call %v %v: stderr %q (%d bytes); want one short line, no retry", c.env, c.args, r.stderr, len(r.stderr))
		}
	}
	b = benchResult(t, p.url("demo.Echo")+"?transport=smux", "-n", "20")
	if b.code != 1 || !strings.HasPrefix(b.stderr, "airnode: bench: no provider of demo.Echo available: CHANNEL_INACTIVE: "+p.addr+" closed the connection at its first ping: likely a transport mismatch (this consumer's transport=smux, from SERVICE_URL key transport=smux; try -p transport=tcp)") {
		t.Errorf("bench ?transport=smux: exit %d, stderr %q; want exit 1 and the short mismatch error", b.code, b.stderr)
	}

	// a smux provider: answered at the first try, nothing said
	s := serve(t, "127.0.0.1:0", t.TempDir())
	if r := call(t, nil, s.url("demo.Echo"), "Echo", `"hi"`); r.code != 0 || r.stderr != "" {
		t.Errorf("call of a smux provider: exit %d, stderr %q; want 0 and nothing on stderr", r.code, r.stderr)
	}
}

// fix-cm #2: serve -p shutdown.wait=10000 (Dubbo's whole budget, given
// for airnode's pause inside it) waited the whole 10 s shutdown.timeout
// before closing the listeners, leaving the drain no time, unsaid. serve
// now warns at start, naming both keys, values and sources; the shutdown
// itself is unchanged and logs its wait once.
func TestCM_ServeWarnsOfAWaitAsLongAsTheTimeout(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--shutdown-timeout", "1s", "-p", "shutdown.wait=1000")
	want := "level=WARN msg=\"airnode serve: shutdown.wait 1s (-p shutdown.wait) is not shorter than shutdown.timeout 1s (--shutdown-timeout), the whole shutdown budget from the signal: the wait before closing the listeners leaves no time to drain the calls in flight;"
	if n := strings.Count(p.logText(), want); n != 1 {
		t.Errorf("serve log has %d lines %q, want 1:\n%s", n, want, p.logText())
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0", code)
	}
	if n := strings.Count(p.logText(), "waiting before closing listeners"); n != 1 {
		t.Errorf("serve log has %d lines \"waiting before closing listeners\", want 1:\n%s", n, p.logText())
	}

	q := serve(t, "127.0.0.1:0", t.TempDir(), "--shutdown-timeout", "2s", "-p", "shutdown.wait=500")
	if strings.Contains(q.logText(), "level=WARN") {
		t.Errorf("a 500ms wait of a 2s budget warned:\n%s", q.logText())
	}
}
