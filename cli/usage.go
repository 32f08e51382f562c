package cli

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airnode/airnode/internal/suggest"
)

// Usage errors: the command line names no command airnode has, lacks an
// argument, has one too many, or a flag it cannot parse. They exit
// exitUsage (2) with one line that names what was wrong and shows the
// command's usage line, in place of cobra's `accepts 1 arg(s), received 0`.

// argsRange returns a cobra.PositionalArgs taking lo to hi arguments
// (hi < 0: any number from lo). A missing argument is named from the
// command's Use ("stats ADDR": ADDR): `stats: missing ADDR (usage:
// airnode stats ADDR [flags])`.
func argsRange(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		path := commandPath(cmd)
		switch {
		case len(args) < lo:
			names := requiredArgs(cmd)
			missing := strings.Join(names[min(len(args), len(names)):], " and ")
			if missing == "" {
				missing = fmt.Sprintf("%d argument(s)", lo-len(args))
			}
			return usage(fmt.Errorf("%s: missing %s (usage: %s)", path, missing, cmd.UseLine()))
		case hi >= 0 && len(args) > hi:
			takes := "no arguments"
			if hi > 0 {
				takes = "at most " + plural(hi, "argument")
				if names := requiredArgs(cmd); len(names) == hi {
					takes = "only " + strings.Join(names, " ")
				}
			}
			return usage(fmt.Errorf("%s: unexpected argument %q: it takes %s%s (usage: %s)", path, args[hi], takes, extraArgHint(cmd, args[hi]), cmd.UseLine()))
		}
		return nil
	}
}

// extraArgHint returns a hint for arg, an argument cmd does not take, when
// it reads as a flag's value given apart (tester93 #4): "true" or "false"
// after a bool flag given on the command line (`serve --demo false`: a
// bool flag takes no separate value) gives "; a bool flag's value goes
// after \"=\": --demo=false", and an address (HOST:PORT, :PORT) for a
// command with --listen gives "; to listen on it: --listen ADDR". ""
// otherwise.
func extraArgHint(cmd *cobra.Command, arg string) string {
	if arg == "true" || arg == "false" {
		var given []string
		cmd.Flags().Visit(func(f *pflag.Flag) {
			if f.Value.Type() == "bool" {
				given = append(given, "--"+f.Name+"="+arg)
			}
		})
		if len(given) > 0 {
			return fmt.Sprintf("; a bool flag's value goes after \"=\": %s", strings.Join(given, " or "))
		}
		return ""
	}
	if cmd.Flags().Lookup("listen") != nil {
		if _, port, err := net.SplitHostPort(arg); err == nil && isDigits(port) {
			return "; to listen on it: --listen " + arg
		}
	}
	return ""
}

// requiredArgs returns the names of cmd's required arguments, the words of
// its Use after the command's name outside brackets: "call [flags]
// SERVICE_URL METHOD [ARG_JSON ...]" gives SERVICE_URL and METHOD.
func requiredArgs(cmd *cobra.Command) []string {
	var names []string
	depth := 0
	for _, w := range strings.Fields(cmd.Use)[1:] {
		if depth == 0 && !strings.ContainsAny(w, "[]|") {
			names = append(names, w)
		}
		depth += strings.Count(w, "[") - strings.Count(w, "]")
	}
	return names
}

// commandPath is cmd's path without the program's name: "registry watch".
func commandPath(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// groupCommand makes cmd, a command of subcommands only (the root,
// registry, plugin), refuse an argument that names none of them: a
// usage error naming it and the available ones, with a close match
// (`unknown command "lss" (available: ls, watch); did you mean "ls"?`),
// which failureLine prefixes with the command, once: `airnode: registry:
// unknown command "lss" ...`. The close match follows internal/suggest's
// rule, as every "did you mean" of airnode, then cobra's (a prefix:
// "reg" for registry). Without arguments it prints its help on stdout
// and exits 0, as cobra does for a group. Its RunE makes cmd runnable,
// so its help shows "Usage: airnode registry [flags]" too. An unknown
// command followed by a flag cmd does not have (`registry lss --json`)
// is the same error: flagError reports the command (unknownCommand), as
// the flag means nothing before the command is known.
func groupCommand(cmd *cobra.Command) {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		return unknownCommand(c, args[0])
	}
}

// unknownCommand is the usage error of name, an argument of c, a command
// of subcommands only (groupCommand), that names none of them:
// `unknown command "lss" (available: ls, watch); did you mean "ls"?`.
func unknownCommand(c *cobra.Command, name string) error {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	slices.Sort(names)
	msg := fmt.Sprintf("unknown command %q (available: %s)", name, strings.Join(names, ", "))
	hint := suggest.Closest(name, names)
	if s := c.SuggestionsFor(name); hint == "" && len(s) > 0 {
		hint = s[0] // cobra's SuggestionsFor alone matches prefixes only: its distance is 0 until its own error path sets it
	}
	if hint != "" {
		msg += fmt.Sprintf("; did you mean %q?", hint)
	} else if h := commandHints[commandPath(c)+" "+name]; h != "" {
		msg += "; " + fmt.Sprintf(h, c.Root().Name())
	}
	return usage(fmt.Errorf("%s", msg))
}

// commandHints are the hints of unknown commands that name what another
// command does, by command path and name ("plugin list": the plugins
// are listed by `airnode list`; tester88 #4).
var commandHints = map[string]string{
	"plugin list": "`%[1]s list` lists the plugins plugins.yaml declares, with their state, after the extension points",
	"plugin ls":   "`%[1]s list` lists the plugins plugins.yaml declares, with their state, after the extension points",
}
