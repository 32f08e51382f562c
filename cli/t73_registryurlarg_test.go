package cli

import (
	"strings"
	"testing"
)

// Tester73 #8: `registry ls acme.cat://h:1` looked for a service named
// by the URL and printed "(0 providers)"; ls and watch now refuse a URL
// as SERVICE (exit 2), saying the registry goes in --registry.
func TestT73_RegistryServiceArgIsNotAURL(t *testing.T) {
	reg := "file://" + t.TempDir()
	for _, sub := range []string{"ls", "watch"} {
		code, _, errOut := airnode(t, nil, "registry", "--registry", reg, sub, "acme.cat://127.0.0.1:26101")
		if code != 2 || !strings.Contains(errOut, `registry `+sub+`: "acme.cat://127.0.0.1:26101" is a URL, not a service key`) ||
			!strings.Contains(errOut, "--registry") {
			t.Errorf("registry %s URL: exit %d, stderr %q; want 2 and the URL refused as SERVICE", sub, code, errOut)
		}
	}
}
