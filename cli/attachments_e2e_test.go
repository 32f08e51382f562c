package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// `airnode call -a key=value` sends attachments that a real serve's
// demo.Echo Info returns; the provider's token filter took the token the
// consumer sent out of them; a reserved key, a flag without "=" or a key
// given twice (TestAbuse3_CallArgumentMessages) is refused before
// anything is dialled.
func TestCallSendsAttachments(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "token=s3cret")
	r := call(t, nil, "--registry", p.reg, "demo.Echo", "Info", "-a", "tenant=x", "--attachment", "user=alice")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var info struct{ Attachments map[string]string }
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	a := info.Attachments
	if a["tenant"] != "x" || a["user"] != "alice" || !strings.HasPrefix(a["remote"], "127.0.0.1:") {
		t.Fatalf("provider saw %v; want tenant=x, user=alice and remote", a)
	}
	if _, ok := a["token"]; ok {
		t.Fatalf("the token reached the method: %v", a)
	}
	expectUsage(t, call(t, nil, p.url("demo.Echo"), "Info", "-a", "token=guess"),
		"airnode: call: ", `attachment "token" is reserved by the kernel (reserved: remote, timeout, token)`)
	expectUsage(t, call(t, nil, p.url("demo.Echo"), "Info", "-a", "tenant"), "airnode: call: ", `-a "tenant": want key=value`)
	// a token key in another case is refused as well, its value not shown
	// (tester49 finding 5: it printed -a "TOKEN=S3cr3tTok3n")
	r = call(t, nil, p.url("demo.Echo"), "Info", "-a", "TOKEN=S3cr3tTok3n")
	expectUsage(t, r, "airnode: call: ", `-a "TOKEN=***": attachment "TOKEN" is reserved by the kernel`)
	if strings.Contains(r.stdout+r.stderr, "S3cr3tTok3n") {
		t.Errorf("call -a TOKEN=...: the value shows: %q %q", r.stdout, r.stderr)
	}
}
