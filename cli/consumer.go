package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// consumerEnv is what a one-shot consumer command (call, bench) needs
// before it refers to a service.
type consumerEnv struct {
	cat    *extension.Catalogs
	cfg    config.Config
	logger *slog.Logger    // warnings and errors only, unless --log-level was given
	ctx    context.Context // cancelled by SIGINT or SIGTERM
}

// consumerSetup loads the catalogs and the configuration (whose registry
// fills an empty *registry), starts the configuration's plugins into the
// catalogs (launchConsumerPlugins: no service plugin, and of the others
// the filters and those named by SERVICE_URL arg, the -p values params,
// the registry, the references or the consumer: defaults: pluginsNamed; one that fails to start
// is a warning, a required filter plugin an error unless the URL
// consumerURL makes of arg and params removes it: extension.FilterRemoved),
// and returns the environment with a function that stops the
// plugins and the signal watch; it must be called when the command ends.
func (a *app) consumerSetup(cmd *cobra.Command, registry *string, arg string, params []string) (consumerEnv, func(), error) {
	return a.consumerSetupWithin(cmd, registry, nil, arg, params)
}

// pluginStartTimeout is consumerSetupWithin's error when the plugins'
// start outlasted its deadline: bound is the timeout that set it, err the
// start's error (which names the plugins cut short).
type pluginStartTimeout struct {
	bound time.Duration
	err   error
}

func (e *pluginStartTimeout) Error() string {
	return fmt.Sprintf("plugins' start outlasted the timeout %v: %v", e.bound, e.err)
}
func (e *pluginStartTimeout) Unwrap() error { return e.err }

// consumerSetupWithin is consumerSetup whose plugins must start by
// the deadline within(cfg) returns when that is not the zero time, set
// by the timeout bound (call's --timeout, which bounds the whole
// command): a start cut short by it is a *pluginStartTimeout.
func (a *app) consumerSetupWithin(cmd *cobra.Command, registry *string, within func(config.Config) (deadline time.Time, bound time.Duration), arg string, params []string) (consumerEnv, func(), error) {
	cat, err := a.Catalogs()
	if err != nil {
		return consumerEnv{}, nil, err
	}
	cfg, err := a.Config(nil)
	if err != nil {
		return consumerEnv{}, nil, err
	}
	if *registry == "" {
		*registry = cfg.Registry
	}
	logger := a.Logger()
	if !cmd.Flags().Changed("log-level") {
		logger, _ = newWarnLogger(a.stderr, a.logFormat)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	pctx, pcancel := ctx, context.CancelFunc(func() {})
	var (
		deadline time.Time
		bound    time.Duration
	)
	if within != nil {
		deadline, bound = within(cfg)
	}
	if !deadline.IsZero() {
		pctx, pcancel = context.WithDeadline(ctx, deadline)
	}
	// a required filter plugin that failed stops the command unless its
	// URL keeps the filter out of the chain (filter=-acme.auth)
	inChain := func(plugin string) bool {
		u, err := consumerURL(cfg, arg, params, nil) // the flags set no filter
		return err != nil || !extension.FilterRemoved(cat.Filter, u, "", plugin)
	}
	plugins, err := launchConsumerPlugins(pctx, cfg, a.configFile, cat, logger, commandWarn(a.stderr, a.logFormat, commandPath(cmd)),
		pluginsNamed(cfg, *registry, append([]string{arg}, params...)...), inChain)
	timedOut := err != nil && ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded)
	pcancel()
	if timedOut {
		stop()
		return consumerEnv{}, nil, &pluginStartTimeout{bound: bound, err: err}
	}
	if sig, ok := signalOf(ctx); ok && err != nil {
		// a signal while plugins started (a slow plugin's start is cut
		// short, its process stopped): exit 130 or 143, as the command
		// does when a signal interrupts it later
		stop()
		msg := commandPath(cmd) + ": interrupted by " + signalName(sig) + " while starting plugins"
		errorLine(a.stderr, a.logFormat, commandPath(cmd), "airnode: "+msg, msg)
		return consumerEnv{}, nil, &interruptedError{sig: sig, msg: msg}
	}
	if err != nil {
		stop()
		return consumerEnv{}, nil, err
	}
	done := func() {
		plugins.Close()
		stop()
	}
	return consumerEnv{cat: cat, cfg: cfg, logger: logger, ctx: ctx}, done, nil
}

// checkDuration checks the argument of a duration flag that mirrors a URL
// key (--timeout): it takes the URL's forms (spi.ParseDuration), "500ms",
// "1.5s", or a bare number of milliseconds as in Dubbo ("3000"), so that a
// flag and the key it sets accept the same text.
//
// 0 is refused too, as the kernel refuses a timeout of 0 (there is no "no
// timeout"): a usage error naming the flag rather than the kernel's
// refusal of the URL key at refer (tester71 #9).
func checkDuration(flag, s string) error {
	d, err := spi.ParseDuration(s)
	if err != nil {
		if errors.Is(err, spi.ErrDurationNegative) || errors.Is(err, spi.ErrDurationTooLarge) || errors.Is(err, spi.ErrDurationUnitCase) {
			return fmt.Errorf("%s %q: want %s", flag, s, spi.DurationWant(err))
		}
		return fmt.Errorf("%s %q: want a duration such as 500ms, 1.5s or 3000 (ms)", flag, s)
	}
	if d == 0 {
		return fmt.Errorf("%s %q: want a positive duration such as 500ms, 1.5s or 3000 (ms); there is no \"no timeout\", use a large one", flag, s)
	}
	return nil
}

// durationKeys are the URL keys that call's and bench's flags set to a
// duration: two spellings of one duration ("1s", "1000") are the same value.
var durationKeys = map[string]bool{"timeout": true}

// sameParam reports whether a and b are the same value of URL key key:
// equal text, or for a duration key two texts of the same duration.
func sameParam(key, a, b string) bool {
	if a == b {
		return true
	}
	if !durationKeys[key] {
		return false
	}
	da, errA := spi.ParseDuration(a)
	db, errB := spi.ParseDuration(b)
	return errA == nil && errB == nil && da == db
}

// registryDefaultHelp says, in the --registry help of call, bench and
// registry, where the registry comes from without the flag, in the order
// app.Config ranks the sources.
const registryDefaultHelp = `(default: AIRNODE_REGISTRY, else the configuration's registry, else the "file" registry)`

// consumerURL returns the URL call and bench refer to: SERVICE_URL arg
// (parseServiceKey), with the -p parameters p and the keys of the dedicated
// flags, then the parameters of cfg's reference of its interface for the
// keys none of them sets (config.ApplyReference: the file holds defaults),
// and, when arg names no host, the providers of the reference's url; and
// the configuration's application when none of these sets one
// (config.ApplyApplication).
//
// A key given by two of SERVICE_URL's query (or its group/version), -p and
// a flag with different values is an error naming both: none is ranked
// above another, as applyFlagParams refuses -p against a flag, and the
// error is a usage error (exit 2) as applyFlagParams' is. The same value
// given twice, or one duration spelled two ways, is accepted.
func consumerURL(cfg config.Config, arg string, p []string, flags []flagParam) (spi.URL, error) {
	u, err := parseServiceKey(arg)
	if err != nil {
		return spi.URL{}, usage(err) // SERVICE_URL of the wrong form: exit 2
	}
	params, err := parseParams(p)
	if err != nil {
		return spi.URL{}, err
	}
	if err := applyFlagParams(params, flags); err != nil { // -p against the flags first
		return spi.URL{}, err
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		uv, ok := u.Param(k)
		if !ok || sameParam(k, uv, params[k]) {
			continue
		}
		by := fmt.Sprintf("-p %s=%s", k, params[k])
		for _, f := range flags {
			if f.key == k {
				by = fmt.Sprintf("%s %s (which sets %s=%s)", f.flag, f.arg, k, f.value)
			}
		}
		return spi.URL{}, usage(fmt.Errorf("%s=%s in %q conflicts with %s: give one of them", k, uv, arg, by))
	}
	given := maps.Clone(params)
	maps.Copy(given, u.Params())
	u, _ = applyReference(cfg, u, given)
	return cfg.ApplyApplication(u.WithParams(params)), nil
}

// configWarnings returns the warnings call and bench print (warnLine)
// about cfg's reference for the interface of u, their URL after
// consumerURL with flags: a reference whose interface is a near miss of
// u's (config.ReferenceMisspelt), and each timeout of the reference that
// --timeout replaces (flags beat files, applyReference): the
// service-level timeout, and the timeout of method (call's METHOD,
// bench's --method; "" for none) when no method-level timeout of the
// command line decides it, e.g. "--timeout 3s replaces the
// configuration's methods.Slow.timeout=500ms (flags beat files)"; when
// the reference sets no service-level timeout, the consumer default it
// replaces, named by its source (config.ConsumerSource): "the
// configuration's consumer.timeout=2s (flags beat files)" or
// "AIRNODE_CONSUMER_TIMEOUT=2s (flags beat the environment)". A value
// equal to the flag's is no warning.
func configWarnings(cfg config.Config, u spi.URL, method string, flags []flagParam) []string {
	var out []string
	if w := cfg.ReferenceMisspelt(u.Path()); w != "" {
		out = append(out, w)
	}
	i := slices.IndexFunc(flags, func(f flagParam) bool { return f.key == "timeout" })
	if i < 0 {
		return out
	}
	fl := flags[i]
	file := cfg.ReferenceParams(u.Path())
	keys := []string{"timeout"}
	if _, src, _ := u.MethodParam(method, "timeout"); method != "" && src == "timeout" {
		keys = append(keys, spi.KeyMethods+"."+method+".timeout", method+".timeout")
	}
	for _, k := range keys {
		if v, ok := file[k]; ok && !sameParam("timeout", v, fl.value) {
			out = append(out, fmt.Sprintf("%s %s replaces the configuration's %s=%s (flags beat files)", fl.flag, fl.arg, k, v))
		}
	}
	// consumer: and AIRNODE_CONSUMER_TIMEOUT rank under the reference's
	// own timeout: replaced only when the reference sets none
	if _, ok := file["timeout"]; ok {
		return out
	}
	if v, ok := cfg.Consumer["timeout"]; ok && !sameParam("timeout", v, fl.value) {
		switch name, env := cfg.ConsumerSource("timeout"); {
		case env:
			out = append(out, fmt.Sprintf("%s %s replaces %s=%s (flags beat the environment)", fl.flag, fl.arg, name, v))
		default:
			out = append(out, fmt.Sprintf("%s %s replaces the configuration's %s=%s (flags beat files)", fl.flag, fl.arg, name, v))
		}
	}
	return out
}

// keySource says where the consumer URL key key ("timeout", or a
// method-level form as written: "methods.Echo.timeout") of the URL
// consumerURL builds from arg (SERVICE_URL) and p (-p's key=value pairs)
// came from, in the order consumerURL and config.ApplyReference rank the
// sources: "-p", "SERVICE_URL" (its query), "config references[N].params"
// (the configuration's reference of the interface of arg), then the
// consumer defaults by config.ConsumerSource: "env
// AIRNODE_CONSUMER_TIMEOUT" or "config consumer.timeout"; "" when none
// sets it (a dedicated flag, --timeout, is its caller's to name). Reports
// that show a value's origin (bench's timeout line) use it, as
// configWarnings names the file's and the environment's values.
func keySource(cfg config.Config, arg string, p []string, key string) string {
	if params, err := parseParams(p); err == nil {
		if _, ok := params[key]; ok {
			return "-p"
		}
	}
	u, err := parseServiceKey(arg)
	if err != nil {
		return ""
	}
	if _, ok := u.Param(key); ok {
		return "SERVICE_URL"
	}
	for i, r := range cfg.References {
		if r.Interface != u.Path() {
			continue
		}
		if _, ok := r.Params[key]; ok {
			return fmt.Sprintf("config references[%d].params", i)
		}
		break // the first reference of the interface is the one applied
	}
	switch name, env := cfg.ConsumerSource(key); {
	case name == "":
		return ""
	case env:
		return "env " + name
	default:
		return "config " + name
	}
}

// applyReference returns u with the parameters of cfg's reference of its
// interface as defaults (config.ApplyReference: u's own keys win) and the
// keys it added, sorted, leaving out each method-level key of the
// reference ("methods.Sleep.timeout", Dubbo's "Sleep.timeout") whose key
// the command line sets, for the whole service or for that method. given
// are the command line's keys: SERVICE_URL's query, -p and the flags
// (call --timeout 2s sets timeout). Flags beat files, as kubectl's flags
// beat its kubeconfig: otherwise the file's method-level value would beat
// the flag for the very method called (the kernel reads a method's own
// key first), and call --timeout 2s would time out at the reference's
// methods.Sleep.timeout=150ms.
func applyReference(cfg config.Config, u spi.URL, given map[string]string) (spi.URL, []string) {
	out, added := cfg.ApplyReference(u)
	var kept []string
	for _, k := range added {
		m, key, ok := methodKey(out, k)
		if ok && overridden(given, m, key) {
			out = out.Without(k)
			continue
		}
		kept = append(kept, k)
	}
	return out, kept
}

// overridden reports whether params set key for method m: at the service
// level, as "methods.<m>.<key>" or as Dubbo's "<m>.<key>".
func overridden(params map[string]string, m, key string) bool {
	for _, k := range []string{key, spi.KeyMethods + "." + m + "." + key, m + "." + key} {
		if _, ok := params[k]; ok {
			return true
		}
	}
	return false
}

// directPorts returns, as a usage error (exit 2), why u (SERVICE_URL arg)
// naming hosts cannot be a direct reference to providers: a host without
// a port (there is no default port to dial: the URL names host and what is
// allowed, host:port or no host) or with port 0. nil when every host has
// a port from 1 to 65535, or u names no host. call, bench and list
// --explain (without --provider) refuse the same URLs in the same words.
func directPorts(u spi.URL, arg string) error {
	hosts := u.Hosts()
	if len(hosts) == 0 || hosts[0].Host == "" {
		return nil
	}
	for i, h := range hosts {
		if h.Port == 0 && portZeroGiven(arg, i) {
			return usage(fmt.Errorf("SERVICE_URL %q: host %q: port 0: want a port from 1 to 65535 (port 0 means any free port when listening, and no provider listens there)",
				arg, h.Host))
		}
		if h.Port == 0 {
			return usage(fmt.Errorf("SERVICE_URL %q: host %q has no port: give host:port for a direct call (airnode://%s:20880/%s), or no host to use the registry (%s)",
				arg, h.Host, h.String(), u.Path(), u.ServiceKey()))
		}
	}
	return nil
}

// referRegistry returns the registry URL a consumer command refers to u
// (SERVICE_URL arg, after consumerURL) through, for kernel.Node.Refer:
//
//   - u names its providers (airnode://host:port[,host:port]/service, or a
//     service key whose configuration reference has a url:
//     config.ApplyReference): the
//     zero URL, a direct reference to those hosts, as Dubbo's reference
//     "url" bypasses the registry. registry is not used; when it was given
//     with --registry (explicit), one line on stderr says so, a JSON
//     record of level WARN under logFormat "json" (the
//     configuration's or AIRNODE_REGISTRY's registry is not mentioned:
//     it is the default for service keys).
//   - u names no host (a service key, airnode:///service): registry when
//     set (--registry or the configuration's), else the catalog's default
//     registry ("file"); a file registry URL naming no directory gets
//     its default directory (withRegistryDir), so errors name it.
//
// Errors: a host without a port or with port 0 (the URL names the host
// and what is allowed; a usage error), a malformed registry URL, no
// registry at all.
func referRegistry(cat *extension.Catalogs, registry string, explicit bool, u spi.URL, arg, command string, stderr io.Writer, logFormat string) (spi.URL, error) {
	hosts := u.Hosts()
	if len(hosts) > 0 && hosts[0].Host != "" {
		if err := directPorts(u, arg); err != nil {
			return spi.URL{}, err
		}
		if explicit && registry != "" {
			if own, err := parseServiceKey(arg); err == nil && own.Host() == "" {
				warnLine(stderr, logFormat, command, fmt.Sprintf("--registry %s not used: the configuration's reference of %s names its providers (url %s)",
					registry, u.Path(), u.Without(u.Keys()...)))
			} else {
				warnLine(stderr, logFormat, command, fmt.Sprintf("--registry %s not used: %s names its provider (a direct call)", registry, arg))
			}
		}
		return spi.URL{}, nil
	}
	if registry != "" {
		reg, err := spi.Parse(registry)
		if err != nil {
			return spi.URL{}, fmt.Errorf("--registry: %w", err)
		}
		return withRegistryDir(reg), nil
	}
	reg := defaultRegistry(cat)
	if reg.IsZero() {
		return spi.URL{}, fmt.Errorf("%s names no provider address and there is no registry (use --registry)", arg)
	}
	return withRegistryDir(reg), nil
}

// portZeroGiven reports whether the i-th host of the SERVICE_URL arg
// (airnode://h1:p1,h2:p2/service) spells a port, which is then 0: its
// spi.HostPort cannot tell ":0" from no port.
func portZeroGiven(arg string, i int) bool {
	_, rest, ok := strings.Cut(arg, "://")
	if !ok {
		return false
	}
	auth, _, _ := strings.Cut(rest, "/")
	hosts := strings.Split(auth, ",")
	if i >= len(hosts) {
		return false
	}
	h := hosts[i]
	j := strings.LastIndexByte(h, ':')
	if j < 0 || j < strings.LastIndexByte(h, ']') {
		return false // no port, or an IPv6 literal's colons
	}
	p, err := strconv.Atoi(h[j+1:])
	return err == nil && p == 0
}

// awaitFileRegistryDir is checkFileRegistryDir for call and bench, which
// must not create a file registry directory that does not exist (the
// registry would when they subscribe, and a typo would then list as an
// empty registry): it waits up to grace (registryGrace, the wait they
// give a provider to register) for the directory to appear, as a
// provider starting at the same moment creates it, then fails as
// registry ls does.
func awaitFileRegistryDir(ctx context.Context, command, raw, source string, grace time.Duration) error {
	deadline := time.Now().Add(grace)
	for {
		err := checkFileRegistryDir(command, raw, source)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}
