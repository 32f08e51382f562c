package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// redactSecrets hides what spi.URL.Redacted hides, in free text: URLs in
// log lines (text and JSON) and errors.
func TestRedactSecrets(t *testing.T) {
	for in, want := range map[string]string{
		`msg="kernel: exported" url="airnode://h:1/demo.Echo?timestamp=1&token=s3cret&weight=100"`: `msg="kernel: exported" url="airnode://h:1/demo.Echo?timestamp=1&token=***&weight=100"`,
		`{"url":"airnode://h:1/demo.Echo?Echo.token=a%26b"}`:                                       `{"url":"airnode://h:1/demo.Echo?Echo.token=***"}`,
		`serve: -p token=s3cret refused`:                                                           `serve: -p token=*** refused`,
		`list services of zookeeper://bob:pw@127.0.0.1:2181?x=1: down`:                             `list services of zookeeper://bob:***@127.0.0.1:2181?x=1: down`,
		`airnode_token_rejections_total 3, tls.key=/k.pem, token: wrong token rejected, tokens=2`:  `airnode_token_rejections_total 3, tls.key=/k.pem, token: wrong token rejected, tokens=2`,
		`url="airnode://h:1/demo.Echo?token=&x=1"`:                                                 `url="airnode://h:1/demo.Echo?token=&x=1"`,
		`-a "TOKEN=S3cr3t": attachment "TOKEN" is reserved`:                                        `-a "TOKEN=***": attachment "TOKEN" is reserved`,
		`-a "tOkEn=LEAKB" and x?Echo.Token=y`:                                                      `-a "tOkEn=***" and x?Echo.Token=***`,
		// the ZooKeeper registry's ACL hint keeps its placeholder (tester61)
		`in the URL, as its user info before the host (USER:PASSWORD@host:2181 after zookeeper://; docs/security.md)`: `in the URL, as its user info before the host (USER:PASSWORD@host:2181 after zookeeper://; docs/security.md)`,
	} {
		if got := redactSecrets(in); got != want {
			t.Errorf("redactSecrets(%s)\n = %s\nwant %s", in, got, want)
		}
	}
	for _, s := range []string{
		"airnode://127.0.0.1:20880/demo.Echo?token=s3cret&weight=5&Sleep.token=x%20y",
		"zookeeper://alice:pa%3Ass@127.0.0.1:2181?session.timeout=5s",
	} {
		u := spi.MustParse(s)
		if got, want := redactSecrets(u.String()), u.Redacted(); got != want {
			t.Errorf("redactSecrets(%s) = %s; spi.URL.Redacted = %s", u, got, want)
		}
	}
	var b bytes.Buffer
	if n, err := (redactingWriter{&b}).Write([]byte("a url=x?token=s3cret\n")); n != 21 || err != nil || b.String() != "a url=x?token=***\n" {
		t.Errorf("redactingWriter wrote %q, returned %d, %v", b.String(), n, err)
	}
}

// Tester finding (item 8): serve -p token=s3cret logged the token at INFO
// in the "exported" and "serving" lines. They show token=***, and so do
// call's logs; the token still works, and a wrong one is refused without
// showing either.
func TestServeAndCallLogNoToken(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "token=s3cret")
	log := p.logText()
	for _, line := range []string{`msg=exported`, `msg="airnode serve: serving"`} {
		if !strings.Contains(log, line) {
			t.Fatalf("no %s line:\n%s", line, log)
		}
	}
	if strings.Contains(log, "s3cret") || strings.Count(log, "token=***") < 2 {
		t.Errorf("serve's log shows the token, or not token=*** in both lines:\n%s", log)
	}
	r := call(t, nil, p.url("demo.Echo")+"?token=s3cret", "Echo", "1", "--log-level", "debug")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "1" || strings.Contains(r.stderr, "s3cret") {
		t.Errorf("call with the token: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = call(t, nil, p.url("demo.Echo"), "Echo", "1", "-p", "token=guess1", "--log-level", "debug")
	if r.code != 1 || !strings.Contains(r.stderr, "BAD_REQUEST: token: wrong token") || strings.Contains(r.stderr, "guess1") {
		t.Errorf("call with a wrong token: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// serve says so at WARN, with the peer, not the tokens (tester49
	// finding 6: refusals were only counted)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.logText(), "reason=wrong") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	log = p.logText()
	if !strings.Contains(log, `level=WARN msg="refusing calls without the provider's token"`) ||
		!strings.Contains(log, "consumer=127.0.0.1:") || !strings.Contains(log, "reason=wrong service=demo.Echo method=Echo") ||
		strings.Contains(log, "guess1") || strings.Contains(log, "s3cret") {
		t.Errorf("serve's log after a wrong token:\n%s", log)
	}
}
