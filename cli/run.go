package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// Main runs the airnode command line of this process (named "airnode"
// unless WithName gives another name): the arguments are
// os.Args[1:], output goes to os.Stdout and os.Stderr (a log line stderr
// cannot take is dropped, never fatal: serve_signals.go). It returns the
// exit status for os.Exit (see the package doc). opts are as for Run.
func Main(opts ...Option) int {
	return Run(context.Background(), os.Args[1:], os.Stdout, &lossyWriter{w: os.Stderr}, opts...)
}

// Run runs the airnode command line args (without the program name, e.g.
// ["list", "--explain"]) writing to stdout and stderr, and returns the
// exit status: 0 on success, otherwise 1, 2 for a usage error (an
// unknown command or flag, a missing or extra argument, a flag value of
// the wrong form or out of its range, a SERVICE_URL of the wrong form,
// two flags or sources that contradict each other), or
// 130/143 for a command a signal interrupted, with the error written to
// stderr as "airnode: CMD: <error>" (failureLine; under --log-format json
// a record of level ERROR with a "command" field).
// ctx bounds the command (serve, bench and call also
// watch SIGINT and SIGTERM themselves). opts add to the command line, such
// as WithExtensions the program's in-process extensions.
//
// Run may be called more than once in a process, one call after another:
// a command sets slog.Default() (the logger extensions use) per
// --log-level and --log-format while it runs and restores it when done.
//
// With WithExtensions, Run registers the extensions once before it
// parses args, so that every key they declare Secret is marked
// (spi.MarkSecretKey) before any URL is checked or printed: the early
// errors of call, bench and serve hide those values as they hide
// "token". A register function's error, or panic, then fails Run at
// once with exit status 1 and "airnode: extensions: <error>" (or
// "extensions: panic: <value>") on stderr, whatever the command. So
// does an invalid WithName, before anything else: `airnode:
// WithName("--help"): invalid program name: ...`.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) int {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.nameErr != nil {
		fmt.Fprintf(stderr, "%s: %v\n", defaultName, o.nameErr)
		return 1
	}
	a := newApp(stdout, stderr, opts...)
	if a.early {
		if _, err := a.Catalogs(); err != nil {
			fmt.Fprintf(a.stderr, "%s: %v\n", a.name, err)
			return 1
		}
	}
	return runApp(ctx, a, args)
}

// exitCoder is an error that has already been reported to the user (on
// stderr) and carries the exit status to use; run prints nothing more.
type exitCoder interface{ ExitCode() int }

// run executes airnode with args and returns the process exit status: 0 on
// success, otherwise 1 (or the status an exitCoder error asks for) with the
// error written to stderr as "airnode: <error>".
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runApp(ctx, newApp(stdout, stderr), args)
}

// runApp is run with a prepared app (tests swap its catalogs and
// environment).
func runApp(ctx context.Context, a *app, args []string) int {
	defer slog.SetDefault(slog.Default()) // the root replaces it for the command's run
	stdout := &writeCounter{w: a.stdout}
	a.stdout = stdout
	cmd := newRootCommand(a)
	cmd.SetArgs(args)
	if c, _, err := cmd.Find(args); err == nil {
		a.parsing = c // as ExecuteContextC finds it
	}
	c, err := cmd.ExecuteContextC(ctx)
	if err == nil && stdout.err != nil {
		// a command that ignored its output's write error (version, list
		// > /dev/full) fails as those that check it do
		err = stdout.err
	}
	if err == nil {
		return 0
	}
	if re := commandRegistryRefusal(c, err); re != nil { // --registry's URL refused: exit 2, as -p's keys
		err = re
	}
	line := failureLine(a.name, c, err.Error())
	command := "" // the root's own failure (an unknown command) names none
	if c != nil && c != c.Root() {
		command = commandPath(c)
	}
	if c != nil && c.Name() == "bench" && stdout.n == 0 && jsonRequested(args) {
		// bench --json prints one object even when cobra fails before
		// the command runs (an unknown flag, a bad flag value, a missing
		// SERVICE_URL): the README promises it. Its error is stderr's
		// line without the program name ("bench: --log-format ...").
		printJSONFailure(stdout.w, errors.New(strings.TrimPrefix(line, a.name+": ")))
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		if code := ec.ExitCode(); code != 0 {
			return code
		}
		return 1
	}
	var attrs []any
	if ra, ok := errors.AsType[*recordAttrs](err); ok {
		attrs = ra.attrs
	}
	errorLine(a.stderr, a.logFormat, command, line, err.Error(), attrs...)
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return 1
}

// recordAttrs is an error whose failure record (errorLine under
// --log-format json) carries attrs besides its text: the status, service,
// method and provider of the call that failed it, as call's failure
// record has them (callContext), so that a query by provider or status
// finds bench's failures too (tester84 #8). The text is err's.
type recordAttrs struct {
	err   error
	attrs []any
}

func (e *recordAttrs) Error() string { return e.err.Error() }
func (e *recordAttrs) Unwrap() error { return e.err }

// withCallAttrs returns err (nil for nil) carrying, for its failure
// record, "status" (cause's, when cause holds an *spi.Error; cause may
// be err) and callContext's "service", "method" ("" leaves both out) and
// "provider" (the *spi.Error's, when it names one). An err that carries
// attributes already is returned as it is.
func withCallAttrs(err, cause error, service, method string) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*recordAttrs](err); ok {
		return err
	}
	var attrs []any
	provider := ""
	if se, ok := errors.AsType[*spi.Error](cause); ok {
		attrs, provider = append(attrs, "status", se.Status.String()), se.Provider
	}
	if service != "" {
		_, more := callContext("", service, method, provider)
		attrs = append(attrs, more...)
	}
	if len(attrs) == 0 {
		return err
	}
	return &recordAttrs{err: err, attrs: attrs}
}

// failureLine is the line that reports on stderr why command c (nil: none
// was found) of the program name failed with msg: "airnode: CMD: msg",
// CMD as the user typed it ("registry ls"; none for the root itself),
// added once: a msg that already starts with "CMD: " (flagError's,
// "stats: missing ADDR") or "CMD -" (a flag of it: "list --explain: ...")
// is not prefixed again. The cause's own text
// ("config: plugins.yaml: unknown key ...") follows as it is (tester75 #1).
func failureLine(name string, c *cobra.Command, msg string) string {
	if c == nil || c == c.Root() {
		return name + ": " + msg
	}
	path := commandPath(c)
	if strings.HasPrefix(msg, path+": ") || strings.HasPrefix(msg, path+" -") {
		return name + ": " + msg
	}
	return name + ": " + path + ": " + msg
}

// exitUsage is the exit status of a usage error (usageError): 2, as
// getopt and GNU tools exit, apart from a failed command's 1.
const exitUsage = 2

// usageError is a command line the command cannot run, found before it
// tried anything: an unknown flag or subcommand, a missing or extra
// argument, a flag value of the wrong form or out of its range (bench -n
// 0, stats --timeout 0), a SERVICE_URL of the wrong form, an ARG_JSON
// that is not JSON, two flags or sources (a flag, -p, SERVICE_URL's
// query) that contradict each other, a URL key's value the command line
// gave that the kernel refuses at Refer or Export (commandLineKeyError,
// configKeyError). A failure of what the command tried (a call, a
// registry, a file it reads, the kernel's check of a key that
// plugins.yaml, the environment or a registry gave) is not one: exit 1. Every command marks its usage errors with usage; there is
// no other mechanism.
// runApp prints it as any error and exits exitUsage.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usage marks err (not nil) a usageError.
func usage(err error) error { return &usageError{err: err} }

// errorLine writes the line that reports why command (commandPath, as
// failureLine names it: "registry ls"; "" for the root) failed on w, a
// stderrLine of level ERROR.
func errorLine(w io.Writer, format, command, text, msg string, attrs ...any) {
	stderrLine(w, format, slog.LevelError, command, text, msg, attrs...)
}

// warnLine writes warning msg of command (commandPath: "list", "bench")
// on w, every warning line of the command line's own: "airnode: CMD:
// warning: msg" under --log-format text, followed by the attrs as slog's
// text handler writes them (` plugin=acme.auth err="..."`) when there are
// any, and under json a record of level WARN with msg "CMD: msg" (the
// text's words less "airnode: " and "warning: ") and the attrs, as
// stderrLine writes it.
func warnLine(w io.Writer, format, command, msg string, attrs ...any) {
	text := "airnode: " + command + ": warning: " + msg
	if len(attrs) > 0 {
		text += " " + textAttrs(attrs...)
	}
	stderrLine(w, format, slog.LevelWarn, command, text, command+": "+msg, attrs...)
}

// textAttrs returns attrs (slog's key-value pairs) as slog's text handler
// writes them, without time, level and msg: `plugin=acme.auth
// waited=12ms err="exited with status 1"`.
func textAttrs(attrs ...any) string {
	var b strings.Builder
	drop := func(groups []string, at slog.Attr) slog.Attr {
		if len(groups) == 0 && (at.Key == slog.TimeKey || at.Key == slog.LevelKey || at.Key == slog.MessageKey) {
			return slog.Attr{}
		}
		return at
	}
	slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: drop})).Info("", attrs...)
	return strings.TrimSuffix(b.String(), "\n")
}

// warnFunc writes one warning of a command through warnLine; code that
// several commands share (the start of the plugin host, the check of
// the environment) takes one (commandWarn) rather than a logger, so that
// its warnings read "airnode: CMD: warning: ..." and carry "command"
// under --log-format json, whatever --log-level says.
type warnFunc func(msg string, attrs ...any)

// commandWarn returns the warnFunc writing command's (commandPath)
// warnings on w in format (--log-format).
func commandWarn(w io.Writer, format, command string) warnFunc {
	return func(msg string, attrs ...any) { warnLine(w, format, command, msg, attrs...) }
}

// stderrLine writes one line of the command line's own on w, about
// command (commandPath: "registry watch"; "" for the root): a notice that
// is not a log record of the node ("watching ...", call's response
// attachments), a warning (warnLine) or a failure (errorLine): text as is
// under --log-format text, and under json (format "json", any case) a
// record of level with msg, a "command" field (left out for the root, as
// the text names none) and the attrs, as the JSON logger writes its
// records, so that every line on stderr is JSON and a consumer can pick
// one command's lines by that field. Like text, the record is written
// whatever --log-level says.
func stderrLine(w io.Writer, format string, level slog.Level, command, text, msg string, attrs ...any) {
	if strings.EqualFold(format, "json") {
		if command != "" {
			attrs = append([]any{"command", command}, attrs...)
		}
		attrs = append(attrs, "component", cliComponent)
		slog.New(newJSONHandler(w, &slog.HandlerOptions{Level: level})).Log(context.Background(), level, msg, attrs...)
		return
	}
	fmt.Fprintln(w, text)
}

// cliComponent is the component of every record the command line writes
// itself, as the kernel's records name theirs ("kernel", "exchange"):
// stderrLine's lines, and serve's and bench's own records
// (commandLogger), which also carry "command".
const cliComponent = "cli"

// commandLogger returns base for the records command (commandPath:
// "serve", "bench") writes itself: each ends with component=cli and
// command=CMD, after its own attributes, so that a line still reads
// `msg="airnode serve: serving" addr=...` as scripts grep it. Keep base
// for the node and the plugin host, which add their own component.
func commandLogger(base *slog.Logger, command string) *slog.Logger {
	return slog.New(trailingAttrs{base.Handler(), []slog.Attr{slog.String("component", cliComponent), slog.String("command", command)}})
}

// trailingAttrs is a handler adding attrs at the end of every record
// (after a WithGroup, inside that group). A record costs a Clone: for the
// command line's own few lines, not a per-call path.
type trailingAttrs struct {
	slog.Handler
	attrs []slog.Attr
}

func (h trailingAttrs) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.attrs...)
	return h.Handler.Handle(ctx, r)
}

func (h trailingAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return trailingAttrs{h.Handler.WithAttrs(as), h.attrs}
}

func (h trailingAttrs) WithGroup(name string) slog.Handler {
	return trailingAttrs{h.Handler.WithGroup(name), h.attrs}
}

// newJSONHandler is the handler of --log-format json: slog's, with
// durations written as Go's text ("2s", "1.5ms"), as the text format
// writes them, not as slog's integer of nanoseconds.
func newJSONHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	o := *opts
	next := o.ReplaceAttr
	o.ReplaceAttr = func(groups []string, at slog.Attr) slog.Attr {
		if at.Value.Kind() == slog.KindDuration {
			at.Value = slog.StringValue(at.Value.Duration().String())
		}
		if next != nil {
			return next(groups, at)
		}
		return at
	}
	return slog.NewJSONHandler(w, &o)
}

// jsonRequested reports whether args, a bench command line, ask for --json
// (the last "--json" or "--json=BOOL" before "--" decides), for errors
// cobra returns before it has parsed every flag.
func jsonRequested(args []string) bool {
	on := false
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if arg == "--json" {
			on = true
		} else if v, ok := strings.CutPrefix(arg, "--json="); ok {
			on, _ = config.ParseBool(v)
		}
	}
	return on
}

// durationForms says which spellings a duration takes on the command line
// and in AIRNODE_* variables: those of the URL keys (spi.ParseDuration).
const durationForms = "want a duration such as 500ms, 2s or 1m30s, or a bare number of milliseconds (500)"

// errDurationSyntax is durationValue.Set's error: the value is none of
// durationForms. durationFlagError turns pflag's error wrapping it into
// one line naming the command and the flag.
var errDurationSyntax = errors.New(durationForms)

// durationValue is a time.Duration flag (pflag's own Value, wrapped) that
// reads the URL keys' forms, so that `--shutdown-wait 500` means 500 ms as
// `timeout=500` does: a Go duration ("2s", "500ms") or a bare number of
// milliseconds (Dubbo's), parsed by spi.ParseDuration. A negative Go
// duration ("-1s") is passed on for the command's own bounds check to name
// (spi.ParseDuration refuses it). Type and String are the wrapped value's.
type durationValue struct {
	pflag.Value
	def  string  // the flag's default as defined ("10s"), for spi.BareMillisWarning
	note *string // Set's spi.BareMillisWarning of the value given ("30 is 30ms ..."), "" none
}

// Set parses s and sets the wrapped value; errDurationSyntax if s is none
// of the forms. A bare number likely meant as seconds (under
// spi.BareMillisBelow of the flag's default: bench --duration 30) is
// taken as milliseconds and noted for warnBareMillisFlags.
func (d durationValue) Set(s string) error {
	*d.note = spi.BareMillisWarning(s, d.def)
	v, err := spi.ParseDuration(s)
	if err != nil {
		neg, nerr := time.ParseDuration(strings.TrimSpace(s))
		if nerr != nil || neg >= 0 {
			return errDurationSyntax
		}
		v = neg
	}
	return d.Value.Set(v.String())
}

// durationText is a string flag holding a duration as the user wrote it
// (call's, bench's and health's --timeout keep the spelling for the URL key
// timeout, and check it themselves): an empty value is refused with
// errDurationSyntax, where a plain string flag took --timeout= for no flag
// at all (tester75 #7).
type durationText struct{ s *string }

func (d durationText) String() string {
	if d.s == nil {
		return ""
	}
	return *d.s
}

// Set keeps s; errDurationSyntax when s is blank.
func (d durationText) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errDurationSyntax
	}
	*d.s = s
	return nil
}

// Type is "string", as the plain flag's.
func (d durationText) Type() string { return "string" }

// boolValue is a bool flag (pflag's own Value, wrapped) that takes the
// spellings of the configuration file and the AIRNODE_* variables
// (config.ParseBool: true/false, yes/no, on/off, 1/0, t/f), so that
// --demo=no means what AIRNODE_DEMO=no and "demo: no" mean. A flag given
// alone is true (IsBoolFlag). Type and String are the wrapped value's.
type boolValue struct{ pflag.Value }

// Set parses s with config.ParseBool and sets the wrapped value.
func (b boolValue) Set(s string) error {
	v, ok := config.ParseBool(s)
	if !ok {
		return errors.New(config.BoolForms)
	}
	return b.Value.Set(strconv.FormatBool(v))
}

// IsBoolFlag makes pflag take the flag alone as true.
func (boolValue) IsBoolFlag() bool { return true }

// acceptMilliseconds makes every time.Duration flag of cmd and its
// subcommands (pflag type "duration") a durationValue, and every bool
// flag a boolValue.
func acceptMilliseconds(cmd *cobra.Command) {
	wrap := func(f *pflag.Flag) {
		if _, done := f.Value.(durationValue); !done && f.Value.Type() == "duration" {
			f.Value = durationValue{Value: f.Value, def: f.DefValue, note: new(string)}
		}
		if _, done := f.Value.(boolValue); !done && f.Value.Type() == "bool" {
			f.Value = boolValue{f.Value}
		}
	}
	cmd.Flags().VisitAll(wrap)
	cmd.PersistentFlags().VisitAll(wrap)
	for _, c := range cmd.Commands() {
		acceptMilliseconds(c)
	}
}

// warnBareMillisFlags writes one warning (warn) for each duration flag of
// cmd given a bare number likely meant as seconds (durationValue.Set),
// as the kernel warns of the URL key timeout=2: "--duration 30 is 30ms (a
// bare number is milliseconds, as in Dubbo); write 30s for seconds". The
// flag keeps the value as given (README "Durations everywhere").
func warnBareMillisFlags(cmd *cobra.Command, warn warnFunc) {
	cmd.Flags().Visit(func(f *pflag.Flag) {
		v := f.Value
		if fv, ok := v.(flagValue); ok { // the next-flag guard wraps it (flagerrors.go)
			v = fv.Value
		}
		if d, ok := v.(durationValue); ok && *d.note != "" {
			warn("--" + f.Name + " " + *d.note)
		}
	})
}

// durationEnv are the AIRNODE_* variables holding a duration (config.Load
// reads them; kernel/config's AddFlags names each in its flag's usage),
// each with its setting's default, for warnBareMillisEnv.
var durationEnv = map[string]string{
	"AIRNODE_SHUTDOWN_TIMEOUT": config.DefaultShutdownTimeout.String(),
	"AIRNODE_SHUTDOWN_WAIT":    config.DefaultShutdownWait.String(),
}

// durationEnviron returns environ with each durationEnv variable's value
// respelled as a Go duration, so that AIRNODE_SHUTDOWN_WAIT=500 means
// 500 ms as --shutdown-wait 500 does (config.Load wants a unit). A value
// that is none of durationForms is an error naming the variable, in
// config.Load's form (`config: environment AIRNODE_SHUTDOWN_WAIT "5x":
// want ...`); an empty value is left for config.Load to ignore.
func durationEnviron(environ []string) ([]string, error) {
	out := slices.Clone(environ)
	for i, kv := range out {
		name, v, ok := strings.Cut(kv, "=")
		if _, isDuration := durationEnv[name]; !ok || v == "" || !isDuration {
			continue
		}
		d, err := spi.ParseDuration(v)
		if err != nil {
			neg, nerr := time.ParseDuration(strings.TrimSpace(v))
			if nerr != nil || neg >= 0 {
				return nil, fmt.Errorf("config: environment %s %q: %s", name, v, durationForms)
			}
			d = neg // config.Load's bounds check names it
		}
		out[i] = name + "=" + d.String()
	}
	return out, nil
}

// signalOf returns the signal that cancelled ctx, a signal.NotifyContext's
// context or one derived from it (its cause reads "interrupt signal
// received"), and whether one did: SIGINT or SIGTERM, the signals the
// commands watch.
func signalOf(ctx context.Context) (syscall.Signal, bool) {
	if ctx.Err() == nil {
		return 0, false
	}
	cause := context.Cause(ctx)
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if cause != nil && cause.Error() == s.String()+" signal received" {
			return s, true
		}
	}
	return 0, false
}

// signalName is "SIGINT" or "SIGTERM".
func signalName(s syscall.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// interruptedError ends a command that a signal interrupted, after it has
// said so on stderr (and bench has printed what it measured): the process
// exits 128 + the signal's number, 130 for SIGINT and 143 for SIGTERM, as
// shells report a process a signal ended.
type interruptedError struct {
	sig syscall.Signal
	msg string // "bench: interrupted by SIGINT after 2.1 s of the planned 10s"
}

func (e *interruptedError) Error() string { return e.msg }

// ExitCode is 128 + the signal number.
func (e *interruptedError) ExitCode() int { return 128 + int(e.sig) }
