package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// flagError is the root's flag error function. It rewrites pflag's
// messages, which speak Go (`invalid argument "maybe" for "--demo" flag:
// strconv.ParseBool: parsing "maybe": invalid syntax`), into the command,
// the flag, the value and what the flag takes:
//
//   - a bad duration: `serve: --shutdown-wait "5x": want a duration ...`
//   - a bad boolean: `serve: --demo "maybe": want true or false ...`
//   - a bad integer: `bench: -c "ten": want a whole number ...`
//   - a bad byte size (sizeValue): `bench: --req "1TB": want a byte size ...`
//   - a negative number taken for a flag (`call URL Sleep -1`): says to
//     put "--" before the arguments.
//   - a flag's value that is a flag of the command (`call --registry
//     --timeout 2s ...`: --registry took "--timeout"; flagValue): names
//     the flag and what it takes.
//   - -p (--param) on a command without it (`list -p x=y`): says where
//     its URL keys go instead (noParams).
//
// Other flag errors are returned unchanged. Each is a usage error (exit 2).
// On a command of subcommands only (groupCommand), a flag error after an
// argument that names none of them (`registry lss --json`) reports that
// argument instead (unknownCommand): cobra parses the flags before the
// command finds it does not know the argument.
func flagError(c *cobra.Command, err error) error {
	if args := c.Flags().Args(); c.HasSubCommands() && len(args) > 0 {
		return unknownCommand(c, args[0])
	}
	return usage(flagErrorText(c, err))
}

// flagErrorText is flagError's message.
func flagErrorText(c *cobra.Command, err error) error {
	path := commandPath(c) // "plugin check"
	if tok, ok := negativeNumberFlag(err); ok {
		return fmt.Errorf("%s: %s is taken as a flag: an argument that starts with \"-\" (a negative number) goes after \"--\", which ends the flags (airnode %s ... -- %s)", path, tok, path, tok)
	}
	if ne, ok := errors.AsType[*pflag.NotExistError](err); ok && isParamFlag(ne) {
		return fmt.Errorf("%s: %s (airnode %s --help lists its flags)", path, noParams(path), path)
	}
	if ne, ok := errors.AsType[*pflag.NotExistError](err); ok && ne.GetSpecifiedShortnames() == "" {
		// "unknown flag: --timout" named neither the command nor the
		// flag meant (tester75 #4)
		name := ne.GetSpecifiedName()
		var names []string
		c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		msg := fmt.Sprintf("%s: unknown flag --%s", path, name)
		if best := suggest.Closest(name, names); best != "" {
			msg += fmt.Sprintf("; did you mean --%s?", best)
		}
		return fmt.Errorf("%s (airnode %s --help lists its flags)", msg, path)
	}
	var ie *pflag.InvalidValueError
	if !errors.As(err, &ie) {
		return err
	}
	name := "--" + ie.GetFlag().Name
	if errors.Is(err, errFlagAsValue) {
		return fmt.Errorf("%s: %s: got %q as its value: give %s its value (%s) before the next flag (airnode %s --help lists its flags)", path, name, ie.GetValue(), name, flagTakes(ie.GetFlag()), path)
	}
	if errors.Is(err, errDurationSyntax) {
		return fmt.Errorf("%s: %s %q: %s", path, name, ie.GetValue(), durationForms)
	}
	var want string
	switch ie.GetFlag().Value.Type() {
	case "bool":
		want = fmt.Sprintf("want %s; %s alone is true", config.BoolForms, name)
	case "int", "int64", "int32", "uint", "uint64", "uint32":
		want = "want a whole number"
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			want = "out of range: want a whole number from -9223372036854775808 to 9223372036854775807"
		}
	case "float64", "float32":
		want = "want a number (1, 0.5)"
	case sizeType:
		want = sizeForms
	default:
		return err
	}
	return fmt.Errorf("%s: %s %q: %s", path, name, ie.GetValue(), want)
}

// isParamFlag reports whether ne is for -p (or --param), the URL keys
// of serve, call, bench and health, on a command without it.
func isParamFlag(ne *pflag.NotExistError) bool {
	if short := ne.GetSpecifiedShortnames(); short != "" {
		return ne.GetSpecifiedName() == "p" && strings.HasPrefix(short, "p") // -p, -px=y
	}
	return ne.GetSpecifiedName() == "param"
}

// noParams says that command path takes no -p and what to use instead:
// list explains the keys of the URL of --explain, plugin check gives a
// filter its keys with --filter-param.
func noParams(path string) string {
	switch path {
	case "list":
		return "list takes no -p: give the keys in the URL of --explain: airnode list --explain 'demo.Echo?loadbalance=roundrobin'"
	case "plugin check":
		return "plugin check takes no -p: give a filter plugin its URL keys with --filter-param KEY=VALUE"
	}
	return path + " takes no -p: URL keys (-p key=value) are for serve, call, bench and health"
}

// negativeNumberFlag reports whether err is pflag's unknown-shorthand
// error for a token that is a JSON number ("-1", "-0.5", "-1e3"), and
// returns the token.
func negativeNumberFlag(err error) (string, bool) {
	msg := err.Error()
	if !strings.HasPrefix(msg, "unknown shorthand flag: ") {
		return "", false
	}
	i := strings.LastIndex(msg, " in -")
	if i < 0 {
		return "", false
	}
	tok := msg[i+len(" in "):]
	var n json.Number
	if json.Unmarshal([]byte(tok), &n) != nil {
		return "", false
	}
	return tok, true
}

// sizeType is sizeValue's pflag type name, shown in --help.
const sizeType = "size"

// sizeForms says which spellings a byte-size flag takes (spi.ParseSize).
const sizeForms = "want a byte size: a whole number of bytes (100), or with a unit B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024): 64KiB, 8MiB"

// sizeValue is an int flag holding a byte count, which takes the spellings
// of the URL key payload (spi.ParseSize): 100, 64KiB, 8MiB.
type sizeValue struct{ p *int }

func (s sizeValue) String() string { return strconv.Itoa(*s.p) }
func (s sizeValue) Type() string   { return sizeType }

// Set parses v with spi.ParseSize; errors name the unit or the range. A
// negative whole number is stored for the command to refuse in its own
// words ("want 0 or more bytes").
func (s sizeValue) Set(v string) error {
	if i, err := strconv.Atoi(v); err == nil && i < 0 {
		*s.p = i
		return nil
	}
	n, err := spi.ParseSize(v)
	if err != nil {
		return err
	}
	if n > int64(^uint(0)>>1) {
		return errors.New("out of range")
	}
	*s.p = int(n)
	return nil
}

// sizeVar defines a byte-size flag (sizeValue) on fl.
func sizeVar(fl *pflag.FlagSet, p *int, name string, def int, usage string) {
	*p = def
	fl.Var(sizeValue{p}, name, usage)
}

// errFlagAsValue is flagValue.Set's error: the value is a flag of the
// command, taken as the value of the flag before it.
var errFlagAsValue = errors.New("a flag of the command given as a flag's value")

// flagValue is the Value of a flag that takes one (every flag but a
// bool), wrapped so that the value may not be a flag of the command being
// parsed: `--x`, `-x` (a shorthand), or either followed by "=...", where x
// is a flag of that command (its own, inherited or --help). pflag gives a
// flag the next argument whatever it is, so `call --registry --timeout 2s
// SERVICE METHOD` set --registry to "--timeout" and took "2s" for the
// SERVICE (tester95 #1); Set refuses that with errFlagAsValue, which
// flagError reports naming the flag and what it takes. Any other value,
// "-1" or a JSON text starting with "-", is passed on. Type and String are
// the wrapped value's.
type flagValue struct {
	pflag.Value
	flags func() *pflag.FlagSet // the flags of the command being parsed
}

// Set sets the wrapped value, or returns errFlagAsValue if s names a
// flag of v.flags().
func (v flagValue) Set(s string) error {
	if isFlagOf(v.flags(), s) {
		return errFlagAsValue
	}
	return v.Value.Set(s)
}

// isFlagOf reports whether arg is a flag of fs as a command line spells
// one: "--name" or "-n" (a shorthand), each with or without "=value".
func isFlagOf(fs *pflag.FlagSet, arg string) bool {
	if long, ok := strings.CutPrefix(arg, "--"); ok {
		name, _, _ := strings.Cut(long, "=")
		return name != "" && fs.Lookup(name) != nil
	}
	short, ok := strings.CutPrefix(arg, "-")
	if !ok {
		return false
	}
	name, _, _ := strings.Cut(short, "=")
	return len(name) == 1 && fs.ShorthandLookup(name) != nil
}

// flagTakes says what flag f takes, for errFlagAsValue's message: the
// forms of a duration, a number or a byte size, else the head of f's
// usage (usageHead): "registry URL for a SERVICE_URL without host".
func flagTakes(f *pflag.Flag) string {
	inner := f.Value
	if fv, ok := inner.(flagValue); ok {
		inner = fv.Value
	}
	switch inner.(type) {
	case durationValue, durationText:
		return strings.TrimPrefix(durationForms, "want ")
	case sizeValue:
		return strings.TrimPrefix(sizeForms, "want ")
	}
	switch inner.Type() {
	case "int", "int64", "int32", "uint", "uint64", "uint32":
		return "a whole number"
	case "float64", "float32":
		return "a number (1, 0.5)"
	}
	return usageHead(f.Usage)
}

// usageHead returns a flag's usage up to its first ";" outside
// parentheses, without its parenthesised asides: "registry URL for a
// SERVICE_URL without host (default: ...); not used for host:port" gives
// "registry URL for a SERVICE_URL without host".
func usageHead(usage string) string {
	tidy := func(s string) string { // "address : HOST" after "(...)" went
		return strings.NewReplacer(" :", ":", " ,", ",").Replace(strings.Join(strings.Fields(s), " "))
	}
	var b strings.Builder
	depth := 0
	for _, r := range usage {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case r == ';' && depth == 0:
			return tidy(b.String())
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return tidy(b.String())
}

// refuseFlagValues makes the Value of every flag of cmd and its
// subcommands that takes a value (all but bools) a flagValue checking
// the flags of parsing(), the command being parsed, or, when that is nil,
// of the command defining the flag. A stringArray's default "[]" is
// respelled "" so that --help, which no longer sees pflag's own type,
// still shows no default for it.
func refuseFlagValues(cmd *cobra.Command, parsing func() *cobra.Command) {
	flags := func() *pflag.FlagSet {
		if c := parsing(); c != nil {
			return c.Flags()
		}
		return cmd.Flags()
	}
	wrap := func(f *pflag.Flag) {
		if _, done := f.Value.(flagValue); done || f.Value.Type() == "bool" {
			return
		}
		if f.DefValue == "[]" {
			f.DefValue = ""
		}
		f.Value = flagValue{Value: f.Value, flags: flags}
	}
	cmd.Flags().VisitAll(wrap)
	cmd.PersistentFlags().VisitAll(wrap)
	for _, c := range cmd.Commands() {
		refuseFlagValues(c, parsing)
	}
}
