package cli

import (
	"fmt"

	"github.com/airnode/airnode/kernel/extension"
)

// defaultName is the program's name in usage and errors unless WithName
// gives another: the stock binary's.
const defaultName = "airnode"

// Option adjusts the command line Main and Run build.
type Option func(*options)

type options struct {
	extensions []func(*extension.Catalogs) error // WithExtensions, in order given
	name       string                            // WithName; "" is defaultName
	nameErr    error                             // WithName's name was invalid: Run fails with it
}

// WithName names the program in the command line's usage, help,
// completion scripts and errors: `acme-airnode: unknown command "x" for
// "acme-airnode"` and "acme-airnode: extensions: ..." instead of
// "airnode". Without it Main and Run say "airnode", the stock binary's
// name, whatever the executable's file is called (`go run` and test
// binaries have other names). A program built with cli.Main and its own
// extensions usually gives its command's name:
//
//	os.Exit(cli.Main(cli.WithName("acme-airnode"), cli.WithExtensions(register)))
//
// (or cli.WithName(filepath.Base(os.Args[0])) to follow the file's
// name). Every line the command line itself writes to stderr starting
// "airnode: " starts "<name>: " instead; log messages ("airnode serve:
// serving" in a log record) and bench's report line ("airnode bench
// URL: ...", a format scripts read) keep "airnode".
//
// name must be one a shell command could be called (ValidName): ASCII
// letters, digits, '.', '_' and '-', not starting with '-' ("--help" or
// "-" would read as flags in usage and completion scripts), neither "."
// nor "..", at most 64 bytes. Any other name makes Run (and Main) fail at
// once with exit status 1 and, on stderr,
//
//	airnode: WithName("--help"): invalid program name: ...
//
// whatever the arguments: a packaging mistake shows on the first run
// instead of in broken usage and completion scripts. An empty name means
// the default, "airnode". The last WithName given decides.
func WithName(name string) Option {
	return func(o *options) {
		o.name, o.nameErr = "", nil
		if name == "" {
			return
		}
		if err := ValidName(name); err != nil {
			o.nameErr = fmt.Errorf("WithName(%q): %w", name, err)
			return
		}
		o.name = name
	}
}

// ValidName reports whether name can name the program (WithName): nil,
// or an error saying what is allowed. It is the shape of a command a
// shell finds on its PATH and a completion script can name its
// functions after: 1 to 64 ASCII letters, digits, '.', '_' and '-', not
// starting with '-', neither "." nor "..".
func ValidName(name string) error {
	const allowed = "want 1 to 64 ASCII letters, digits, '.', '_' and '-', not starting with '-', neither \".\" nor \"..\" (such as acme-airnode)"
	if name == "" || len(name) > 64 || name[0] == '-' || name == "." || name == ".." {
		return fmt.Errorf("invalid program name: %s", allowed)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("invalid program name: %q is not allowed; %s", c, allowed)
		}
	}
	return nil
}

// WithExtensions makes register add a program's in-process extensions to
// every catalogs the command line builds: those of serve, call, bench,
// list (and list --explain) and registry alike. register runs on
// fresh catalogs after the bundled extensions (extensions/bundle) and
// before the out-of-process plugins of plugins.yaml join them, so a
// plugin, or an in-process extension, whose name is already taken on its
// point is an error naming the name and the origin that has it.
//
// register adds each extension with the point's Register and an origin
// saying where it comes from, by convention its Go package path:
//
//	cli.WithExtensions(func(cat *extension.Catalogs) error {
//		return cat.LoadBalance.Register(first.Builder{}, extension.Origin("github.com/acme/lb/first"))
//	})
//
// It may be called many times per process (once per command, more in
// tests), must register the same extensions every time and must not keep
// cat. An error it returns fails the command with
// "extensions: <error>". WithExtensions may be given more than once; the
// functions run in the order given.
func WithExtensions(register func(*extension.Catalogs) error) Option {
	return func(o *options) { o.extensions = append(o.extensions, register) }
}

// catalogs returns fresh catalogs holding every bundled extension and
// then every extension o's WithExtensions functions register: the app's
// newCatalogs. A register function's error is "extensions: <error>"; a
// panic in one is recovered into "extensions: panic: <value>" (the
// command then fails with exit status 1, as for an error).
func (o options) catalogs() (*extension.Catalogs, error) {
	cat, err := bundledCatalogs()
	if err != nil {
		return nil, err
	}
	for _, register := range o.extensions {
		if register == nil {
			continue
		}
		if err := callRegister(register, cat); err != nil {
			return nil, fmt.Errorf("extensions: %w", err)
		}
	}
	return cat, nil
}

// callRegister calls register with cat, a panic in it returned as an
// error "panic: <value>".
func callRegister(register func(*extension.Catalogs) error, cat *extension.Catalogs) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return register(cat)
}
