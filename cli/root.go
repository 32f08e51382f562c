package cli

// Adding a subcommand
//
// Each subcommand lives in its own file (serve.go, call.go, ...) with a
// constructor returning a *cobra.Command, and is added with ONE line to
// subcommands below. A constructor takes what it needs from *app:
//
//	listCommand(a)            // func listCommand(a *app) *cobra.Command
//	serveCommand(a.Catalogs)  // func serveCommand(newCatalogs func() (*extension.Catalogs, error)) *cobra.Command
//
// app gives every subcommand the global flags' effects:
//
//	a.Catalogs()      bundled extensions (extensions/bundle), then the program's in-process ones (WithExtensions), in fresh catalogs
//	a.Config(fs)      plugins.yaml: defaults < --config file < AIRNODE_* env < fs's flags (config.AddFlags)
//	a.configFile      the file a.Config read: errors about its values name it (launchPlugins, runServe)
//	a.Logger()        log/slog logger per --log-level and --log-format, writing to stderr
//	a.stdout/stderr   the writers to use (tests capture them)
//
// Global flags (persistent, valid on every subcommand): --config,
// --log-level, --log-format; the root also makes slog.Default() log per
// the last two while the command runs. Do not redefine them locally, and do not set a
// PersistentPreRunE (it would replace the root's, which checks them).
//
// Errors: return them from RunE; main prints "airnode: <err>" on stderr
// (a JSON record under --log-format json) and exits 1, or 2 for a usage
// error (usage(err): a flag or argument the command cannot take; Args is
// argsRange, which names a missing argument). An error with an
// `ExitCode() int` method is taken as already reported: main prints
// nothing and exits with that code. A command of subcommands only calls
// groupCommand, which refuses an unknown one.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// subcommands returns every subcommand of airnode, one line each.
func subcommands(a *app) []*cobra.Command {
	return []*cobra.Command{
		listCommand(a),
		serveCommand(a),
		callCommand(a),
		healthCommand(a),
		benchCommand(a),
		registryCommand(a),
		pluginCommand(a),
		statsCommand(a),
		versionCommand(a),
	}
}

// defaultConfigFile is read when --config is not given and it exists in the
// working directory.
const defaultConfigFile = "plugins.yaml"

// app is the state the global flags set up for subcommands.
type app struct {
	stdout, stderr io.Writer
	name           string // the program's name in usage and errors: WithName, default "airnode"
	early          bool   // WithExtensions given: Run registers them before parsing (secret keys)

	configPath string // --config
	configFile string // the file the last Config call read ("" none): errors about its values name it
	logLevel   string // --log-level
	logFormat  string // --log-format
	command    string // the command running (commandPath: "serve"), for Config's warnings
	// parsing is the command whose flags the command line gives (runApp
	// finds it before cobra parses them), whose flags no flag's value may
	// be (flagValue); nil: the command defining the flag.
	parsing *cobra.Command
	// configWarned holds the configuration's warnings Config wrote
	// (config.Config.IgnoredKeys), each written once a run though a
	// command may load the configuration twice.
	configWarned map[string]bool

	// newCatalogs builds the catalogs; tests replace it with stand-ins.
	newCatalogs func() (*extension.Catalogs, error)
	// environ is the environment config reads (os.Environ).
	environ func() []string
}

// newApp returns the app writing to stdout and stderr. Secrets in URLs
// (token=, a userinfo password) never reach stderr: logs and errors are
// written through redactingWriter. stdout, the replies of call and the
// reports of bench, is written as is.
// opts are Main's and Run's: WithExtensions' functions join every catalogs
// newCatalogs builds.
func newApp(stdout, stderr io.Writer, opts ...Option) *app {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	name := o.name
	if name == "" {
		name = defaultName
	}
	var errw io.Writer = redactingWriter{stderr}
	if name != defaultName {
		errw = programNameWriter{w: errw, name: name}
	}
	return &app{
		stdout:      stdout,
		stderr:      errw,
		name:        name,
		early:       len(o.extensions) > 0,
		newCatalogs: o.catalogs,
		environ:     os.Environ,
	}
}

// bundledCatalogs returns fresh catalogs holding every bundled extension.
// Plugins declared in plugins.yaml join the same catalogs in a later issue.
func bundledCatalogs() (*extension.Catalogs, error) {
	c := extension.New()
	if err := bundle.Register(c); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	return c, nil
}

// Catalogs returns new catalogs of every available extension.
func (a *app) Catalogs() (*extension.Catalogs, error) { return a.newCatalogs() }

// keys returns the key catalog of the bundled extensions and those the
// program registered (kernel.KnownKeys), through which AIRNODE_CONSUMER_*
// and AIRNODE_PROVIDER_* variables name their URL keys; the kernel's own
// keys alone (nil) when the catalogs cannot be built (the command then
// reports that itself).
func (a *app) keys() []string {
	cat, err := a.newCatalogs()
	if err != nil {
		return nil
	}
	return kernel.KnownKeys(cat)
}

// ConfigFile returns the configuration file to read: --config if given,
// else plugins.yaml when it exists in the working directory, else "" (no
// file: defaults, environment and flags only).
func (a *app) ConfigFile() (string, error) {
	if a.configPath != "" {
		return a.configPath, nil
	}
	if _, err := os.Stat(defaultConfigFile); err == nil {
		return defaultConfigFile, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("config: %w", err)
	}
	return "", nil
}

// Config loads the node configuration: defaults, then the config file (see
// ConfigFile), then AIRNODE_* environment variables, then the flags of
// flags that config.AddFlags defined and the user set (flags may be nil).
func (a *app) Config(flags *pflag.FlagSet) (config.Config, error) {
	file, err := a.ConfigFile()
	if err != nil {
		return config.Config{}, err
	}
	a.configFile = file
	environ, err := durationEnviron(a.environ())
	if err != nil {
		return config.Config{}, err
	}
	// the command warned of unknown AIRNODE_* variables itself
	// (warnUnknownEnv, PersistentPreRunE): Load's warning is discarded
	quiet := slog.New(slog.DiscardHandler)
	cfg, err := config.Load(config.Source{File: file, Environ: environ, Flags: flags, Keys: a.keys(), Logger: quiet})
	if _, ok := errors.AsType[*config.FlagError](err); ok {
		err = usage(err) // a flag's value out of its bounds: exit 2
	}
	// the file's keys the kernel sets itself (protocol: {timestamp: 1}),
	// left out: a warning of the command, as AIRNODE_PROVIDER_TIMESTAMP's
	for _, w := range cfg.IgnoredKeys() {
		if !a.configWarned[w] {
			if a.configWarned == nil {
				a.configWarned = map[string]bool{}
			}
			a.configWarned[w] = true
			warnLine(a.stderr, a.logFormat, a.command, w)
		}
	}
	return cfg, err
}

// Logger returns a logger writing to stderr at --log-level in
// --log-format.
func (a *app) Logger() *slog.Logger {
	l, _ := newLogger(a.stderr, a.logLevel, a.logFormat)
	return l
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(newJSONHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
}

// newWarnLogger is newLogger at warn, the level of call's and bench's
// lines when --log-level is not given, that also writes the Info records
// that end an incident a Warn began (spi.LogEnds: the ZooKeeper
// registry's "connected again" after its "connection lost"), so that
// whoever saw the beginning sees the end (tester89 #2).
func newWarnLogger(w io.Writer, format string) (*slog.Logger, error) {
	l, err := newLogger(w, "info", format)
	if err != nil {
		return nil, err
	}
	return slog.New(warnAndEnds{l.Handler()}), nil
}

// warnAndEnds passes on records at warn and above, and Info records
// carrying spi.LogEnds.
type warnAndEnds struct{ slog.Handler }

func (h warnAndEnds) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= slog.LevelInfo && h.Handler.Enabled(ctx, lv)
}

func (h warnAndEnds) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		ends := false
		r.Attrs(func(a slog.Attr) bool {
			ends = a.Key == spi.LogEnds
			return !ends
		})
		if !ends {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h warnAndEnds) WithAttrs(as []slog.Attr) slog.Handler {
	return warnAndEnds{h.Handler.WithAttrs(as)}
}

func (h warnAndEnds) WithGroup(name string) slog.Handler {
	return warnAndEnds{h.Handler.WithGroup(name)}
}

// envHelp lists, for the root command's help, the AIRNODE_* variables
// config.Load reads, one a line as the help's other lists are: each
// setting's (config.EnvNames) with its flag and file key
// (config.EnvFlag), then the URL-key prefixes.
var envHelp = func() string {
	var b strings.Builder
	for _, name := range config.EnvNames() {
		flag, path, _ := config.EnvFlag(name)
		fmt.Fprintf(&b, "  %-26s --%s, file key %s\n", name, flag, path)
	}
	fmt.Fprintf(&b, "  %-26s URL key KEY of every reference (file: consumer:)\n", config.EnvConsumerPrefix+"<KEY>")
	fmt.Fprintf(&b, "  %-26s URL key KEY of every export (file: protocol:)\n", config.EnvProviderPrefix+"<KEY>")
	return b.String()
}()

// newRootCommand returns the airnode command with its global flags and
// every subcommand.
func newRootCommand(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   a.name,
		Short: "airnode: a plugin-oriented RPC framework node (Dubbo-style microkernel)",
		Long: `airnode runs a node of the airnode RPC framework: a small kernel whose
transports, registries, load balancers, codecs, heartbeat strategies,
clusters and filters are named extensions chosen at run time from URL
parameters.

Configuration comes from plugins.yaml (--config; ./plugins.yaml when present),
then AIRNODE_* environment variables, then flags. Durations in flags,
AIRNODE_* variables and URL keys take 500ms, 2s or a bare number of
milliseconds (500); plugins.yaml wants a unit. Only the configuration's
settings have variables (an empty one is ignored as if unset, with a
warning; <KEY> is a URL key in upper case, "_" for ".": RETRY_TOKENS):
` + envHelp + `The other flags have no environment form: --config, --log-level,
--log-format, serve's --metrics, --transport, --tls-cert, --tls-key,
--tls-ca and -p, and the flags of the other commands (call --timeout:
AIRNODE_CONSUMER_TIMEOUT sets the same URL key).

Exit status:
  0    success
  1    the command failed (a call's status, an unreachable registry or
       node, a port in use, a write error on stdout); serve also exits 1
       when its shutdown abandoned calls still in flight
  2    usage error, "airnode: CMD: <what was wrong, and what is
       allowed>": unknown command or flag, missing or extra argument, a
       flag value of the wrong form or out of its range (bench -n 0), a
       SERVICE_URL of the wrong form, an ARG_JSON that is not JSON, two
       flags or sources that contradict each other (-p timeout=1s
       --timeout 2s), a URL key's value the command line gives (-p,
       --codec, --transport, the URL's query) that the kernel refuses
       (-p timeout=5x, -p loadbalance=roundrobn, -p token=,
       -p loadbalance=, -p version=1.*: named with the flag, the value
       and the names available), a SERVICE_URL of another protocol
       (dubbo://...), a --registry URL
       of the wrong form, with a scheme no registry has or a key its
       registry refuses (zookeper://, ?sesion.timeout=1s); the same
       value from plugins.yaml or AIRNODE_* fails the command, 1
  130  interrupted by SIGINT (Ctrl-C); serve: a second SIGINT
  143  interrupted by SIGTERM; serve: a second SIGTERM (one SIGINT or
       SIGTERM makes serve drain and exit 0)`,
		SilenceUsage:  true, // errors are reported once, by main
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			l, err := newLogger(a.stderr, a.logLevel, a.logFormat) // reject bad values early
			if err != nil {
				return usage(err) // a flag value of the wrong form: exit 2
			}
			// Extensions (balancers, clusters, registries) log through
			// slog.Default(): they follow --log-level and --log-format too.
			// runApp restores the previous default when the command ends.
			slog.SetDefault(l)
			a.command = commandPath(cmd)
			warnUnknownEnv(a.environ(), a.keys(), commandWarn(a.stderr, a.logFormat, commandPath(cmd))) // AIRNODE_REGISTY, a typo: env.go
			warnBareMillisEnv(a.environ(), commandWarn(a.stderr, a.logFormat, commandPath(cmd)))        // AIRNODE_SHUTDOWN_TIMEOUT=30: 30 ms (AIRNODE_PROVIDER_TIMEOUT=5: Export's warning)
			warnBareMillisFlags(cmd, commandWarn(a.stderr, a.logFormat, commandPath(cmd)))              // bench --duration 30: 30 ms
			warnIgnoredEnv(a.environ(), a.keys(), commandWarn(a.stderr, a.logFormat, commandPath(cmd))) // AIRNODE_REGISTRY=, AIRNODE_PROVIDER_TIMESTAMP
			return nil
		},
	}
	root.Version = buildVersion() // --version
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "configuration file, YAML (JSON parses too; default ./"+defaultConfigFile+" when present)")
	pf.StringVar(&a.logLevel, "log-level", "info", "log level: debug, info, warn, error (default info; call, bench and plugin check: warn, as they print their result only, and call's accesslog=true lines at info; no environment variable)")
	pf.Lookup("log-level").DefValue = "" // the usage says the per-command defaults
	pf.StringVar(&a.logFormat, "log-format", "text", `log format: text or json (json: every line on stderr is a JSON record, the final error line too; durations are Go's text, "2s", as in text; no environment variable)`)
	root.AddCommand(subcommands(a)...)
	groupCommand(root) // airnode frob: a usage error naming the commands
	// cobra's completion command, made now rather than at Execute so that
	// `airnode completion tcsh` is a usage error naming the shells, not
	// its help and exit 0 (tester65 #4)
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			groupCommand(c)
			for _, shell := range c.Commands() {
				// `completion bash extra`: a usage error, as every
				// command's extra argument (cobra's NoArgs is a plain error)
				shell.Args = argsRange(0, 0)
			}
		}
	}
	// every duration flag takes the URL keys' forms, bare milliseconds too
	acceptMilliseconds(root)
	// no flag takes another flag of its command for its value (after
	// acceptMilliseconds: the check comes before a duration's parsing)
	refuseFlagValues(root, func() *cobra.Command { return a.parsing })
	root.SetFlagErrorFunc(flagError)
	return root
}
