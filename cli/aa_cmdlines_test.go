package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testaddr"
)

// Leftovers of tester75 #1 (aa #1): a warning line of the command line's
// own named no command ("airnode: warning: ..." from list --explain) or
// did not say it was a warning ("airnode: call: --registry ... not
// used"). Every one now reads "airnode: CMD: warning: ...", and under
// --log-format json is a WARN record with a command field.
func TestAA_WarningsNameTheCommand(t *testing.T) {
	t.Parallel()
	foo := "foo=1 is not read by airnode or any extension of this node (a plugin's or another tool's key, or a misspelling)"
	url := "airnode://" + testaddr.Reserved(t) + "/demo.Echo?foo=1"
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "list", "--explain", url)
	if want := "airnode: list: warning: " + foo + "\n"; r.code != 0 || r.stderr != want {
		t.Errorf("list --explain: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	r = runCommand(t, 20*time.Second, noAirnodeEnv, "list", "--explain", url, "--log-format", "json")
	if recs := jsonRecords(t, "list --explain", r.stderr); r.code != 0 || len(recs) != 1 ||
		recs[0]["level"] != "WARN" || recs[0]["command"] != "list" || recs[0]["msg"] != "list: "+foo {
		t.Errorf("list --explain --log-format json: exit %d, stderr %q; want one WARN record, command list, msg %q", r.code, r.stderr, "list: "+foo)
	}

	reg := "file://" + t.TempDir()
	target := "airnode://" + testaddr.Reserved(t) + "/demo.Echo" // nothing listens: the call fails after the warning
	r = call(t, noAirnodeEnv, "--registry", reg, "--timeout", "500ms", target, "Echo", `"x"`)
	if want := "airnode: call: warning: --registry " + reg + " not used: " + target + " names its provider (a direct call)\n"; r.code == 0 || !strings.HasPrefix(r.stderr, want) {
		t.Errorf("call --registry with a direct URL: exit %d, stderr %q; want it to start %q", r.code, r.stderr, want)
	}
	r = call(t, noAirnodeEnv, "--log-format", "json", "--registry", reg, "--timeout", "500ms", target, "Echo", `"x"`)
	recs := jsonRecords(t, "call", r.stderr)
	for _, level := range []string{"WARN", "ERROR"} {
		found := false
		for _, rec := range recs {
			found = found || rec["level"] == level && rec["command"] == "call"
		}
		if !found {
			t.Errorf("call --log-format json: no %s record with command call:\n%s", level, r.stderr)
		}
	}
}

// aa #2: under --log-format json the record of a failed command had no
// command field; it has the command path the text line names, and none
// for the root's own failure (the text names none either).
func TestAA_JSONFailureRecordNamesTheCommand(t *testing.T) {
	t.Parallel()
	bad := writeConfig(t, "bogus: 1\n")
	for _, tc := range []struct {
		args    []string
		command string // "": no command field
	}{
		{[]string{"stats"}, "stats"},
		{[]string{"registry", "ls", "--config", bad}, "registry ls"},
		{[]string{"registry", "lss"}, "registry"},
		{[]string{"call", "--bogus", "demo.Echo", "Echo"}, "call"},
		{[]string{"nosuch"}, ""},
	} {
		r := runCommand(t, 20*time.Second, noAirnodeEnv, "--log-format", append([]string{"json"}, tc.args...)...) // before --bogus, which ends the parse
		recs := jsonRecords(t, strings.Join(tc.args, " "), r.stderr)
		last := recs[len(recs)-1]
		command, has := last["command"]
		if r.code == 0 || last["level"] != "ERROR" || has != (tc.command != "") || has && command != tc.command {
			t.Errorf("%v --log-format json: exit %d, stderr %q; want an ERROR record with command %q", tc.args, r.code, r.stderr, tc.command)
		}
	}
}

// aa #3: an unknown subcommand named its command twice, in failureLine's
// prefix and in the message ("airnode: registry: unknown command "lss"
// for "airnode registry""; "airnode: unknown command "foo" for
// "airnode""), and suggested nothing for "lss" (cobra's SuggestionsFor
// matched prefixes only). Now the command is named once, and the closest
// subcommand is suggested.
func TestAA_UnknownSubcommandNamedOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string // the whole of stderr, or its start when it ends in "("
	}{
		{[]string{"registry", "lss"}, `airnode: registry: unknown command "lss" (available: ls, watch); did you mean "ls"?` + "\n"},
		{[]string{"plugin", "chek"}, `airnode: plugin: unknown command "chek" (available: check); did you mean "check"?` + "\n"},
		{[]string{"registry", "frob"}, `airnode: registry: unknown command "frob" (available: ls, watch)` + "\n"},
		{[]string{"foo"}, `airnode: unknown command "foo" (`},
		{[]string{"lst"}, `airnode: unknown command "lst" (`},
	} {
		r := runCommand(t, 20*time.Second, noAirnodeEnv, tc.args[0], tc.args[1:]...)
		ok := r.stderr == tc.want
		if strings.HasSuffix(tc.want, "(") {
			ok = strings.HasPrefix(r.stderr, tc.want) && strings.Count(r.stderr, "\n") == 1
		}
		if r.code != exitUsage || !ok || strings.Contains(r.stderr, `for "airnode`) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if r := runCommand(t, 20*time.Second, noAirnodeEnv, "lst"); !strings.HasSuffix(r.stderr, `; did you mean "list"?`+"\n") {
		t.Errorf("lst: stderr %q; want it to suggest list", r.stderr)
	}
}
