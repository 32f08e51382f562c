package cli

import (
	"strconv"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/extension"
)

// Tester21 G: WithName accepts only a name a shell command could have;
// any other name fails Run at once, exit 1, naming the name and the
// rule, before any extension is registered or any command runs.
func TestT21_G_WithNameRefusesNonCommandNames(t *testing.T) {
	registered := 0
	count := WithExtensions(func(*extension.Catalogs) error { registered++; return nil })
	for _, name := range []string{"--help", "-", "-x", "a b", "bad/name", ".", "..", "acmé", "tab\tname", strings.Repeat("a", 65)} {
		code, out, errOut := runCLI(t, []string{"--help"}, WithName(name), count)
		want := "airnode: WithName(" + strconv.Quote(name) + "): invalid program name: "
		if code != 1 || out != "" || !strings.HasPrefix(errOut, want) ||
			!strings.Contains(errOut, "not starting with '-'") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("WithName(%q): exit %d, stdout %q, stderr %q; want exit 1 and one line %q...", name, code, out, errOut, want)
		}
	}
	if registered != 0 {
		t.Errorf("the register function ran %d times with an invalid name; want 0", registered)
	}
	for _, name := range []string{"acme-airnode", "acme_airnode.v2", "A1", "x"} {
		code, out, errOut := runCLI(t, []string{"--help"}, WithName(name))
		if code != 0 || !strings.Contains(out, "\n  "+name+" [command]") || errOut != "" {
			t.Errorf("WithName(%q) --help: exit %d, stderr %q; want the usage of %s:\n%s", name, code, errOut, name, out)
		}
	}
	// An empty name is the default; the last WithName decides.
	if code, out, _ := runCLI(t, []string{"--help"}, WithName("")); code != 0 || !strings.Contains(out, "\n  airnode [command]") {
		t.Errorf(`WithName(""): exit %d; want airnode's usage:`+"\n%s", code, out)
	}
	if code, out, _ := runCLI(t, []string{"--help"}, WithName("--help"), WithName("acme")); code != 0 || !strings.Contains(out, "\n  acme [command]") {
		t.Errorf(`WithName("--help"), WithName("acme"): exit %d; want acme's usage:`+"\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, []string{"--help"}, WithName("acme"), WithName("-")); code != 1 || !strings.HasPrefix(errOut, `airnode: WithName("-"): invalid program name`) {
		t.Errorf(`WithName("acme"), WithName("-"): exit %d, stderr %q; want the "-" refused`, code, errOut)
	}
	if err := ValidName("acme-airnode"); err != nil {
		t.Errorf("ValidName(acme-airnode): %v", err)
	}
}
