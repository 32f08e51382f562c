package cli

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// tester F18: plugin check listed a method taking a chan, which every
// call then fails (BAD_REQUEST: cannot decode into chan int), and said
// nothing of a method on the pointer receiver that a value Impl leaves
// out (SERVICE_NOT_FOUND). It now warns about each, naming the method,
// the type and what to write instead, and still passes (the other
// methods work); a method whose struct result holds a func is caught too.
// A variadic method (tester71 #5) no longer makes the plugin exit before
// its handshake: check passes and warns that it is not served.
func TestF18PluginCheckWarnsAboutMethodsNoCallCanUse(t *testing.T) {
	bad := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/badmethods")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary, "plugin", "check", bad)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("plugin check: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"warning   nu.S2.Chan argument 0 has type chan int, which no codec can carry: any call that sends a non-null value there fails BAD_REQUEST",
		"warning   nu.S2.Hook result has type main.Hooks (its field OnClose is a func(), which no codec can carry): any call whose result holds one, even a nil one, fails SERIALIZATION_ERROR",
		"warning   nu.S2.Sum is not served (a call of it is SERVICE_NOT_FOUND): Sum(context.Context, ...int) (int, error): variadic; take a []int instead of ...int",
		"warning   nu.S2: PtrOnly of main.S has a pointer receiver, and Impl is a main.S value, whose methods leave them out: they are not served (SERVICE_NOT_FOUND); pass Impl: &main.S{...}",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plugin check lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Hello has") || strings.Contains(out, "Hello argument") {
		t.Errorf("plugin check warns about Hello, which works:\n%s", out)
	}
}
