package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/airnode/airnode/internal/tlsconf"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// launchPlugins launches cfg's plugins and adds their extensions to cat,
// for serve. Any declared plugin that fails to start (missing binary, no
// handshake, wrong or unsupported point, a name shadowing a registered
// extension) is an error naming it, after the plugins already started have
// been stopped: a provider does not run without a plugin its
// configuration declares (a filter plugin's activation, which may put it
// in every export's chain, is known only from a running plugin). On
// success the returned host is never nil and must be closed.
//
// With the catalogs complete, it then checks the configuration's
// references against them (checkReferences: a misspelled loadbalance gets
// a did-you-mean, naming file and the reference), so every command that
// launches the plugins rejects a bad reference the same way. file is the
// configuration file cfg was read from ("" none).
//
// It warns (warn) about a relative command path that the configuration
// file's directory would resolve differently (warnRelativeCommands), and
// about a plugin declaring a kernel or selecting key as `airnode plugin
// check` fails it (warnKeyClashes), and about a filter plugin whose
// activation names a key but no side, which that key does not activate
// (warnSidelessFilters): warnings, not refusals.
func launchPlugins(ctx context.Context, cfg config.Config, file string, cat *extension.Catalogs, logger *slog.Logger, warn warnFunc) (*pluginhost.Host, error) {
	return startPluginHost(ctx, cfg, file, cat, logger, warn, nil, nil)
}

// consumerPluginPoints are the plugin points a consumer command (call, bench,
// list, registry) starts: a service plugin is a provider's implementation,
// which a consumer never runs.
var consumerPluginPoints = []string{extension.PointLoadBalance, extension.PointRegistry, extension.PointFilter}

// launchConsumerPlugins is launchPlugins for the consumer commands (call,
// bench, list, registry): it starts no service plugin, and of the others
// only those use accepts (nil: all; see pluginsNamed). A plugin that
// fails to start fails no command by itself: it is logged as a warning
// naming it and why, stays in the catalogs, and a URL or registry that
// selects it fails with that reason (pluginhost.Host.Register); `airnode
// list` shows it failed in its STATE column. A start cut short by ctx
// (SIGINT) is an error. So is, for a command that refers (call, bench:
// inChain is not nil), the failed start of a filter plugin declared
// required (plugins.yaml required: true; requiredFailed) that inChain
// reports may be in the command's chain: its activation, known only from
// the running plugin, may put it there, and the chain must not run
// without it. inChain(name) is false when the command's URL keeps the
// filter out of its chain whatever its activation (filter=-acme.auth:
// extension.FilterRemoved); it is called once the plugins, failed ones
// too, are in cat. nil: the command builds no chain (list, registry).
func launchConsumerPlugins(ctx context.Context, cfg config.Config, file string, cat *extension.Catalogs, logger *slog.Logger, warn warnFunc, use func(config.Plugin) bool, inChain func(plugin string) bool) (*pluginhost.Host, error) {
	consumer := func(p config.Plugin) bool {
		return slices.Contains(consumerPluginPoints, p.Point) && (use == nil || use(p))
	}
	return startPluginHost(ctx, cfg, file, cat, logger, warn, consumer, inChain)
}

// pluginsNamed returns which plugins a consumer command may use whose
// command line names texts (SERVICE_URL, the -p values) and registry URL:
// a filter plugin (its activation, which may put it in every chain, and
// its secret URL keys, which every printed URL must hide, are known only
// from the running plugin, so it cannot wait until a URL names it), and a
// plugin whose name is a word of texts, of registry, or of the
// configuration's registry, references and consumer: defaults (with the
// AIRNODE_CONSUMER_<KEY> variables, which cfg.Consumer holds), which
// every command builds (checkReferences) and every reference applies,
// where words are split at ? & = , ; : / and a leading "-" is dropped
// (loadbalance=acme.p2c, filter=-x,acme.authz, acme.reg:///dir). It is
// the one place that decides which plugins a consumer command starts.
// Only those start, so that a one-shot call does not pay for launching
// the others (four plugins took a call from 0.030 s to 0.086 s); a word
// that names a plugin by chance only starts it too.
func pluginsNamed(cfg config.Config, registry string, texts ...string) func(config.Plugin) bool {
	words := map[string]bool{}
	add := func(s string) {
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("?&=,;:/ ", r) }) {
			words[strings.TrimLeft(w, "-")] = true
		}
	}
	for _, t := range slices.Concat(texts, []string{registry, cfg.Registry}) {
		add(t)
	}
	params := []map[string]string{cfg.Consumer}
	for _, r := range cfg.References {
		params = append(params, r.Params)
	}
	for _, params := range params {
		for k, v := range params {
			add(k + "=" + v)
		}
	}
	return func(p config.Plugin) bool { return p.Point == extension.PointFilter || words[p.Name] }
}

// startPluginHost starts cfg's plugins: all of them, failing on the first
// that cannot start, when consumer is nil (serve); else those consumer
// accepts, warning of each that fails, and failing on a required filter
// plugin that failed and inChain may put in the chain
// (launchConsumerPlugins).
func startPluginHost(ctx context.Context, cfg config.Config, file string, cat *extension.Catalogs, logger *slog.Logger, warn warnFunc, consumer func(config.Plugin) bool, inChain func(string) bool) (*pluginhost.Host, error) {
	warnRelativeCommands(cfg.Plugins, file, warn)
	if file == "" {
		cat.SetMissHint(noConfigHint())
	}
	opts := []pluginhost.Option{pluginhost.WithLogger(logger), pluginhost.WithConfigFile(file)}
	if consumer != nil {
		// a consumer's log is the user's terminal: a filter plugin's
		// panic is one line there, its stack at --log-level debug (F3)
		opts = append(opts, pluginhost.WithPanicStackLevel(slog.LevelDebug))
		// and the end of a plugin's outage shows at warn, as its start
		opts = append(opts, pluginhost.WithRecoveryLevel(slog.LevelWarn))
	}
	host := pluginhost.New(cfg.Plugins, opts...)
	err := cfg.CheckPluginNames(cat, file)
	if err == nil && len(cfg.Plugins) > 0 {
		if consumer != nil {
			began := time.Now()
			serr := host.StartIf(ctx, consumer)
			if serr != nil && ctx.Err() != nil {
				err = serr // a signal cut the start short: no command runs
			} else if err = host.Register(cat); err == nil && serr != nil {
				// after Register: inChain reads the URL's filter list
				// against cat, which then holds the failed plugins too
				warnFailedStarts(host.Plugins(), cfg.Plugins, file, inChain, time.Since(began), warn)
				if inChain != nil {
					err = requiredFailed(host.Plugins(), cfg.Plugins, file, inChain)
				}
			}
		} else if err = host.Start(ctx); err != nil {
			err = pluginStartKey(err, host.Plugins(), cfg.Plugins, file)
		} else {
			err = host.Register(cat)
		}
		if err == nil {
			warnKeyClashes(host.Plugins(), warn)
			warnSidelessFilters(host.Plugins(), cat, warn)
		}
	}
	if err == nil {
		err = checkReferences(cfg, file, cat)
	}
	if err != nil {
		_ = host.Close()
		return nil, err
	}
	return host, nil
}

// pluginStartKey adds to each line of err, serve's failure to start the
// plugins (one *pluginhost.StartError per plugin that failed, joined), the
// configuration file's key of that plugin's own declaration, as other
// configuration errors name theirs: "plugins[1].point" for a binary that
// provides another point than the one declared (as list says it),
// "plugins[1].sha256" for a binary whose sha256 is not the pinned one,
// "plugins[1].command" otherwise (a missing or unrunnable binary, one
// that is no plugin or fails its handshake). The index is the
// declaration's (StartError.Index), so two plugins of one name under two
// points are told apart. For a filter plugin declared required
// (config.Plugin.Required) it adds that serve would fail without it all
// the same, so that required is not taken for the cause:
//
//	(plugins.yaml: key "plugins[0].command"; serve does not start without any plugin it declares, required or not: plugins[0].required decides only whether call and bench go on without a filter plugin)
//
// err is returned as is without a file; a line is left as is when its
// plugin is not marked failed (ctx ended).
func pluginStartKey(err error, infos []pluginhost.PluginInfo, specs []config.Plugin, file string) error {
	if file == "" {
		return err
	}
	lines := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		lines = j.Unwrap()
	}
	out := make([]error, len(lines))
	for n, line := range lines {
		out[n] = line
		var se *pluginhost.StartError
		if !errors.As(line, &se) || se.Index >= len(infos) || se.Index >= len(specs) || infos[se.Index].State != pluginhost.StateFailed {
			continue
		}
		i, in := se.Index, infos[se.Index]
		why := ""
		if s := specs[i]; s.Point == extension.PointFilter && s.Required {
			why = fmt.Sprintf("; serve does not start without any plugin it declares, required or not: plugins[%d].required decides only whether call and bench go on without a filter plugin", i)
		}
		out[n] = fmt.Errorf("%w (%s: key %q%s)", line, file, pluginKey(in, i), why)
	}
	return errors.Join(out...)
}

// pluginKey is the configuration key of plugins[i], whose start failed
// as in says: "plugins[i].point" when its binary provides other points,
// "plugins[i].sha256" when its sha256 is not the pinned one,
// "plugins[i].command" otherwise.
func pluginKey(in pluginhost.PluginInfo, i int) string {
	switch {
	case len(in.ProvidedPoints) > 0:
		return fmt.Sprintf("plugins[%d].point", i)
	case in.SHA256Mismatch:
		return fmt.Sprintf("plugins[%d].sha256", i)
	}
	return fmt.Sprintf("plugins[%d].command", i)
}

// warnFailedStarts writes a warning (warn) for each plugin of a consumer command
// that failed to start, naming it, why, and how long the command waited
// for its plugins. A balancer or registry plugin was started because the
// command names it: the command fails when it selects it. A filter
// plugin is started by every consumer command whether it names it or
// not, since what decides whether a call uses it (its activation) and
// which of its URL keys are secret are known only from the running
// plugin; the command goes on without it, and its warning says what that
// means. A required filter plugin (specs) is not warned of when the
// command refers and inChain may put it in its chain: requiredFailed
// fails the command instead. With a configuration file (file), err ends
// in the key of the plugin's declaration as serve's error does
// (pluginStartKey): `... refusing to start it (plugins.yaml: key
// "plugins[0].sha256")`.
func warnFailedStarts(plugins []pluginhost.PluginInfo, specs []config.Plugin, file string, inChain func(string) bool, waited time.Duration, warn warnFunc) {
	for n, i := range plugins {
		if i.State != pluginhost.StateFailed || inChain != nil && required(specs, i.Name) >= 0 && inChain(i.Name) {
			continue
		}
		reason := i.Reason
		if file != "" {
			reason += fmt.Sprintf(" (%s: key %q)", file, pluginKey(i, n))
		}
		msg := "plugin failed to start; a command that selects it fails"
		if i.Point == extension.PointFilter {
			msg = "filter plugin failed to start; this command goes on without it: a URL that names it fails, a chain its activation would put it in runs without it, and the values of its secret URL keys are not hidden (its activation and keys are known only from the running plugin, so consumer commands start every filter plugin)"
		}
		warn(msg, "plugin", i.Name, "point", i.Point, "waited", waited.Round(time.Millisecond), "err", reason)
	}
}

// required returns the index in specs of the filter plugin named name
// when it is declared required (config.Plugin.Required), else -1.
func required(specs []config.Plugin, name string) int {
	return slices.IndexFunc(specs, func(p config.Plugin) bool {
		return p.Name == name && p.Point == extension.PointFilter && p.Required
	})
}

// requiredFailed is the error of a consumer command that refers (call,
// bench) when filter plugins declared required failed to start that
// inChain reports may be in its chain (not those its URL removes), one
// line each naming the plugin, its key and why, in config.Load's form:
//
//	config: plugins.yaml: key "plugins[0].required": filter plugin "acme.auth" is required but failed to start, so this command does not run without it: exited with status 1 ...
//
// nil when none did.
func requiredFailed(infos []pluginhost.PluginInfo, specs []config.Plugin, file string, inChain func(string) bool) error {
	var errs []error
	for _, in := range infos {
		i := required(specs, in.Name)
		if in.State != pluginhost.StateFailed || i < 0 || !inChain(in.Name) {
			continue
		}
		where := "config: "
		if file != "" {
			where += file + ": "
		}
		why := strings.TrimPrefix(in.Reason, fmt.Sprintf("pluginhost: plugin %q (%s): ", in.Name, in.Path))
		errs = append(errs, fmt.Errorf("%skey %q: filter plugin %q is required but failed to start, so this command does not run without it (a call would go out without the filter; required: false lets it go on with a warning): %s",
			where, fmt.Sprintf("plugins[%d].required", i), in.Name, why))
	}
	return errors.Join(errs...)
}

// warnKeyClashes writes a warning (warn) for every URL key a running plugin
// declares that `airnode plugin check` fails (kernelKeyClashes: a key
// that selects an extension, or a kernel key declared with another type
// than the kernel's), with the check's text. The plugin still runs: a
// URL's value of that key reaches both the kernel and the plugin.
func warnKeyClashes(plugins []pluginhost.PluginInfo, warn warnFunc) {
	for _, i := range plugins {
		if len(i.Keys) == 0 || len(i.Provides) == 0 || i.Point == pluginhost.PointService {
			continue
		}
		_, err := kernelKeyClashes([]pluginrpc.Description{{Point: i.Point, Name: i.Provides[0], Keys: i.Keys}})
		if err == nil {
			continue
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			warn("plugin declares a URL key the kernel reads otherwise (airnode plugin check fails it)", "plugin", i.Name, "err", line)
		}
	}
}

// warnRelativeCommands writes a warning (warn) for each plugin whose command is a
// relative path that the configuration file's directory (file's, when
// file is not in the working directory) would resolve differently: it
// does not exist relative to the working directory, from which it is
// resolved (config.Plugin.Command), but does relative to the file, or it
// exists in both places as different files. The resolution itself does
// not change.
func warnRelativeCommands(plugins []config.Plugin, file string, warn warnFunc) {
	if file == "" {
		return
	}
	dir, err := filepath.Abs(filepath.Dir(file))
	wd, werr := os.Getwd()
	if err != nil || werr != nil || dir == wd {
		return
	}
	for _, p := range plugins {
		if p.Command == "" || filepath.IsAbs(p.Command) {
			continue
		}
		used, err := filepath.Abs(p.Command)
		if err != nil {
			continue
		}
		other := filepath.Join(dir, p.Command)
		ofi, err := os.Stat(other)
		if err != nil {
			continue
		}
		ufi, err := os.Stat(used)
		switch {
		case err != nil:
			warn("plugin command is a relative path, resolved from the working directory, where it does not exist; it does exist next to the configuration file, which is not where it is looked for: give an absolute path, or run airnode from the file's directory",
				"plugin", p.Name, "command", p.Command, "resolved", used, "next_to_config", other)
		case !os.SameFile(ufi, ofi):
			warn("plugin command is a relative path, resolved from the working directory; another file of that path exists next to the configuration file and is not used: give an absolute path to say which",
				"plugin", p.Name, "command", p.Command, "resolved", used, "next_to_config", other)
		}
	}
}

// checkReferences checks every reference of cfg, and its consumer:
// defaults, against cat as config.CheckReferences does — each extension
// their params name must exist and build with them — and names the
// configuration file and the reference (or "consumer", or the
// AIRNODE_CONSUMER_<KEY> variable that set the name) in config.Load's
// form:
//
//	config: plugins.yaml: key "references[0].params": unknown loadbalance "rundrobin" (...); did you mean "roundrobin"?
//
// (config.CheckReferences does not know the file; kernel/config cannot be
// edited from here.) Without a file it is config.CheckReferences.
func checkReferences(cfg config.Config, file string, cat *extension.Catalogs) error {
	if file == "" {
		return cfg.CheckReferences(cat)
	}
	var errs []error
	for i, r := range cfg.References {
		u, err := spi.NewURL("airnode", "", 0, r.Interface, r.Params)
		if err == nil {
			_, err = cat.Explain(u, extension.ReferencedMethods(u))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("config: %s: key %q: %w", file, fmt.Sprintf("references[%d].params", i), err))
		}
	}
	switch env, err := cfg.CheckConsumer(cat); {
	case err != nil && env != "":
		errs = append(errs, fmt.Errorf("config: environment %s: %w", env, err))
	case err != nil:
		errs = append(errs, fmt.Errorf("config: %s: key %q: %w", file, "consumer", err))
	}
	return errors.Join(errs...)
}

// configKeyError returns err naming the source that set the refused URL
// key, as config.Load names a setting's:
//
//	config: plugins.yaml: key "protocol": invalid value "dirct" for URL key "dispatcher": want one of adaptive, all, direct (did you mean "direct"?)
//	config: environment AIRNODE_PROVIDER_LOADBALANCE: unknown loadbalance "roundrobn" (...); did you mean "roundrobin"?
//	serve: -p loadbalance=roundrobn: service demo.Echo: unknown loadbalance "roundrobn" (...); did you mean "roundrobin"?
//
// given maps each key the command line set, which wins over the file and
// the environment, to the flag that set it as typed ("-p
// loadbalance=roundrobn", "--transport bogus"), which the error then
// names after serve's prefix, keeping err's text (flagKeyError), a usage
// error (exit 2) as every command's refused key of the command line
// (commandLineKeyError); a key
// mapped to "" is left for the caller to name, err returned unchanged. Otherwise the
// source is the file (when file is not ""), through services[svc].params
// (svc is the service's index in cfg.Services, -1 when the file does not
// list it) or protocol:, or the AIRNODE_PROVIDER_<KEY> variable that set
// protocol's key over the file's (config.Config.ProtocolSource). When no
// source is found, or err names no key, err is returned unchanged. The
// refused key is a *spi.ParamError's key, an *spi.KeyError's (the first
// that given holds, else its first), or the point of an
// *extension.UnknownError (an unknown transport: key "transport", also
// as a method-level key "methods.M.transport").
func configKeyError(cfg config.Config, file string, svc int, given map[string]string, err error) error {
	if err == nil {
		return err
	}
	var key string
	var cause error
	var pe *spi.ParamError
	var ke *spi.KeyError
	var ue *extension.UnknownError
	var pair *tlsconf.PairError
	switch {
	case errors.As(err, &pair):
		// one half of the TLS pair: the source of the half given
		key, cause = pair.Given(), pair
		if flag := given[key]; flag != "" {
			return usage(tlsPairError(flag, pair))
		}
	case errors.As(err, &pe):
		key, cause = pe.Key, pe
	case errors.As(err, &ke):
		key, cause = ke.Keys[0], ke
		for _, k := range ke.Keys { // the one the command line gave, if any
			if _, ok := given[k]; ok {
				key = k
				break
			}
		}
	case errors.As(err, &ue):
		key, cause = ue.Point, ue
	default:
		return err
	}
	// setter returns the key of params that sets key: key itself, or for
	// an unknown extension a method-level one ending in "."+key.
	setter := func(params map[string]string) (string, bool) {
		if _, ok := params[key]; ok {
			return key, true
		}
		if ue != nil {
			for _, k := range slices.Sorted(maps.Keys(params)) {
				if strings.HasSuffix(k, "."+key) {
					return k, true
				}
			}
		}
		return "", false
	}
	if k, ok := setter(given); ok {
		if given[k] == "" {
			return err
		}
		return usage(&flagKeyError{flag: given[k], err: err}) // a key's value the command line gave: exit 2, as call's (commandLineKeyError)
	}
	if svc >= 0 && svc < len(cfg.Services) && file != "" {
		if _, ok := setter(cfg.Services[svc].Params); ok {
			return fmt.Errorf("config: %s: key %q: %w", file, fmt.Sprintf("services[%d].params", svc), cause)
		}
	}
	if k, ok := setter(cfg.Protocol); ok {
		if name, env := cfg.ProtocolSource(k); env {
			return fmt.Errorf("config: environment %s: %w", name, cause)
		}
		if file != "" {
			return fmt.Errorf("config: %s: key %q: %w", file, "protocol", cause)
		}
	}
	return err
}

// tlsPairError is serve's error for a TLS pair of which the command line
// gave one half (flag, as typed: "--tls-cert srv.pem", "-p
// tls.cert=srv.pem") and nothing gave the other: it names both halves'
// flags, in the form of the one given (tester92 #4: it read
// `tls.cert="srv.pem" and tls.key="": give both or neither`, exit 1).
func tlsPairError(flag string, pair *tlsconf.PairError) error {
	flags := map[string]string{tlsconf.KeyCert: "--tls-cert", tlsconf.KeyKey: "--tls-key"}
	missing, form := flags[pair.Missing()], flags[pair.Missing()]+" FILE"
	if strings.HasPrefix(flag, "-p ") {
		missing, form = "-p "+pair.Missing(), "-p "+pair.Missing()+"=FILE"
	}
	what := "its PEM private key"
	if pair.Missing() == tlsconf.KeyCert {
		what = "the PEM certificate chain of that key"
	}
	return fmt.Errorf("serve: %s without %s: serving TLS takes a certificate chain and its private key: give %s (%s) too, or neither", flag, missing, form, what)
}

// flagKeyError is serve's err about a URL key that flag (as typed: "-p
// weight=abc", "--transport bogus") set: it reads "serve: <flag>: " and
// err's text less its own "serve: " (`serve: -p weight=abc: service
// demo.Echo: invalid value "abc" for URL key "weight": ...`), and unwraps
// to err.
type flagKeyError struct {
	flag string
	err  error
}

func (e *flagKeyError) Error() string {
	return "serve: " + e.flag + ": " + strings.TrimPrefix(e.err.Error(), "serve: ")
}

func (e *flagKeyError) Unwrap() error { return e.err }

// noConfigHint is the hint of an unknown loadbalance, registry or filter
// name (extension.Catalogs.SetMissHint) when the command read no
// configuration file: no plugin is declared, where a name such as
// acme.p2c is most likely a plugin's (tester88 #4).
func noConfigHint() string {
	where := "./" + defaultConfigFile
	if wd, err := os.Getwd(); err == nil {
		where = filepath.Join(wd, defaultConfigFile)
	}
	return fmt.Sprintf("no configuration file was read (no --config, and no %s), so no plugin is declared: name the file that declares it with --config FILE", where)
}
