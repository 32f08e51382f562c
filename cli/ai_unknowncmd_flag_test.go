package cli

import (
	"strings"
	"testing"
	"time"
)

// `airnode registry lss --json` reported the unknown flag (cobra parses
// the flags before the group finds "lss" unknown), and `airnode lss
// --json` named the program twice ("airnode: airnode: unknown flag
// --json"). The unknown command is reported whatever flags follow it; a
// bad flag with no command before it is still the flag's error.
func TestUnknownSubcommandBeforeAnUnknownFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string // the whole of stderr, or its start when it ends in "("
	}{
		{[]string{"registry", "lss", "--json"}, `airnode: registry: unknown command "lss" (available: ls, watch); did you mean "ls"?` + "\n"},
		{[]string{"registry", "lss", "--json", "--registry", "memory://"}, `airnode: registry: unknown command "lss" (available: ls, watch); did you mean "ls"?` + "\n"},
		{[]string{"plugin", "chek", "--frob=1"}, `airnode: plugin: unknown command "chek" (available: check); did you mean "check"?` + "\n"},
		{[]string{"lst", "--json"}, `airnode: unknown command "lst" (`},
		{[]string{"registry", "--bogus"}, `airnode: registry: unknown flag --bogus (airnode registry --help lists its flags)` + "\n"},
	} {
		r := runCommand(t, 20*time.Second, noAirnodeEnv, tc.args[0], tc.args[1:]...)
		ok := r.stderr == tc.want
		if strings.HasSuffix(tc.want, "(") {
			ok = strings.HasPrefix(r.stderr, tc.want) && strings.Count(r.stderr, "\n") == 1
		}
		if r.code != exitUsage || !ok {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
