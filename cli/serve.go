package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/tlsconf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// serveFlags are serve's own flags; --listen, --registry, --shutdown-wait
// and --shutdown-timeout come from config.AddFlags and reach the
// configuration through app.Config.
type serveFlags struct {
	logFormat string // --log-format: forcedExit's line is a JSON record under json
	transport string
	metrics   string
	tlsCert   string // --tls-cert: tls=true&tls.cert=
	tlsKey    string // --tls-key: tls.key=
	tlsCA     string // --tls-ca: tls.ca= (mutual TLS)
	params    []string
	// waitFlag and timeoutFlag are --shutdown-wait's and
	// --shutdown-timeout's arguments when given on the command line, ""
	// otherwise: -p shutdown.wait or -p shutdown.timeout with another
	// value is refused (checkShutdownParams).
	waitFlag, timeoutFlag string
	// shutdown names where the shutdown wait and timeout came from
	// (loadServeConfig), for the log; zero: the default.
	shutdown shutdownOrigin
	// registryFrom says where the registry URL came from, as a format
	// for the URL (serveRegistryOrigin): errors about it name the source.
	registryFrom string
}

// serveRegistryOrigin returns where serve's registry URL came from, as a
// format for fmt.Sprintf with the URL, for errors about it: "--registry
// %s", "AIRNODE_REGISTRY=%s", `registry %s (FILE: key "registry")` when
// the configuration file set it (neither the flag nor the variable did,
// and cfgRegistry is not the default ""), else "registry %s" (the
// default).
func serveRegistryOrigin(flagSet bool, environ []string, file, cfgRegistry string) string {
	if flagSet {
		return "--registry %s"
	}
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "AIRNODE_REGISTRY="); ok && v != "" {
			return "AIRNODE_REGISTRY=%s"
		}
	}
	if file != "" && cfgRegistry != "" {
		return "registry %s (" + file + `: key "registry")`
	}
	return "registry %s"
}

// registryName is reg as errors show it: its description (registryDesc)
// and where it came from (registryFrom).
func (f serveFlags) registryName(reg spi.URL) string {
	from := f.registryFrom
	if from == "" {
		from = "registry %s"
	}
	return fmt.Sprintf(from, registryDesc(reg))
}

// serveCommand returns `airnode serve`.
func serveCommand(a *app) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Export demo.Echo (unless --demo=false) and the config's services until SIGINT/SIGTERM",
		Long: `serve runs a provider node: it exports the built-in demo.Echo service
(Echo, Sleep, Payload, Fail, Info) and the services of the configuration,
registers them (default: the "file" registry), and on SIGINT or SIGTERM
unregisters, waits --shutdown-wait (default 2s), stops accepting, drains
in-flight calls until --shutdown-timeout (default 10s) has passed since the
signal, closes the channels and exits 0. Calls still running when
--shutdown-timeout has passed are abandoned: their consumers are answered
SERVER_ERROR ("provider ... shut down"), serve says how many on stderr and
exits 1. A second SIGINT or SIGTERM during the shutdown exits at once: the
calls in flight are abandoned the same way, serve says how many and exits
130 (143 for SIGTERM). A signal within 200ms of the first is the same stop,
not a second one: GNU timeout and other supervisors signal both the
process and its group, which delivers SIGTERM twice at once.

SIGHUP (an ssh session closing, logrotate's "postrotate kill -HUP")
does not stop serve: it reopens the access-log files (-p
accesslog=PATH; a renamed or removed one is also reopened within 1s
without a signal) and logs one line. SIGQUIT (kill -3) writes every
goroutine's stack to stderr, as a JVM's thread dump, and serve keeps
running; kill -ABRT gives Go's dump and exit. A log line stderr cannot
take (its reader gone: "serve 2>&1 | logger" restarting) is dropped,
not fatal: serve keeps serving, and those lines are lost.

Before the first export, serve checks every service: each has an
implementation (demo.Echo or a service plugin's), its URL keys are well
formed, the extensions they name exist and build, and so does the
registry's. A configuration that fails these checks exits 1 at once with
the error, having listened on nothing and registered nothing. A registry
serve cannot register in at start fails it too (exit 1): a ZooKeeper
that gives no session within connect.timeout (5s), as Dubbo's registry
check does; add check=false to its URL (zookeeper://h:2181?check=false)
to start anyway and register when ZooKeeper answers. A SIGINT or SIGTERM
during startup is a stop: serve drains what it exported and exits 0.

--listen host:port (default :20880; port 0 picks a free port, logged in
the "serving" line). serve publishes the address it listens on: the
bound IP for a name (--listen localhost:P publishes 127.0.0.1:P), this
host's first non-loopback address for every interface (:P), with a Warn
when that is a loopback address and the registry is one other hosts
read (zookeeper). --advertise HOST[:PORT] publishes another address
instead, for NAT, port-forwards (docker -p 30880:20880: --advertise
HOST:30880), containers and multi-homed hosts: a host alone keeps the
port listened on, an interface name (eth1) publishes its address, :PORT
changes the port only (config key advertise, AIRNODE_ADVERTISE, or
Dubbo's DUBBO_IP_TO_REGISTRY and DUBBO_PORT_TO_REGISTRY when none is
set). -p key=value adds a URL parameter to every exported
service (repeatable: -p weight=50 -p warmup=1m); a value consumers could
not use (-p timeout=abc) is an error at startup, and the keys the provider
sets itself (timestamp, side, methods, pid) cannot be given. A -p key that
a flag also sets (--transport: transport; --tls-cert, --tls-key, --tls-ca:
tls, tls.cert, tls.key, tls.ca; --shutdown-wait: shutdown.wait;
--shutdown-timeout: shutdown.timeout) with a different value is refused,
naming both: flags and -p are not ranked (as kubectl and docker refuse
conflicting flags), so give one of them. -p shutdown.wait=D is
--shutdown-wait D and -p shutdown.timeout=D is --shutdown-timeout D (the
whole budget from the signal), both also published and ranked as those
flags (above AIRNODE_SHUTDOWN_WAIT, AIRNODE_SHUTDOWN_TIMEOUT and the
file's shutdown:): the wait from 0 to the timeout in effect, whichever
sources gave them, the timeout above 0, else an error at startup naming
both. With a registry no other process reads (memory://, direct://)
the wait is skipped, whichever source gave it; the "shutting down" line
says the wait used and where it came from (wait_from).

demo.Echo is a test service, exported by default so that a first
"airnode serve" and "airnode call" work: Info tells any caller the host
name and pid, Payload answers up to the payload limit, Sleep N waits N
milliseconds, an integer up to 60000 (call demo.Echo Sleep 2000
--timeout 3s: past call's default timeout, 1s, it fails SERVER_TIMEOUT;
Sleep '"5s"' is BAD_REQUEST). Leave it out in production: --demo=false,
AIRNODE_DEMO=false or "demo: false" in plugins.yaml (serve then needs a
service of the configuration or a service plugin to export).

--metrics ADDR serves /metrics and /stats without authentication: an
address that is not loopback (":9090") is reachable from other hosts,
and serve says so at Warn; prefer 127.0.0.1:PORT. It also answers
GET /ready (200 "serving"; 503 and the reason while starting, from the
first signal on, before anything is unregistered, while a service plugin
is down for good; a registry that lost the entries, or has not created
them yet (ZooKeeper with check=false and no session), is only a warning
in /stats and airnode_health_warning) and GET /live (200): load-balancer
and Kubernetes probes. A service plugin the host
gives up on (restart: never) has its services unregistered.

  airnode serve --listen 127.0.0.1:0 -p weight=50
  airnode serve --demo=false          # only the services of plugins.yaml`,
		Args: argsRange(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			sw := watchServeSignals(commandLogger(a.Logger(), "serve"), a.stderr) // SIGPIPE, SIGHUP, SIGQUIT: serve_signals.go
			defer sw.stop()
			if err := checkListenBrackets(cmd, a.environ()); err != nil {
				return err
			}
			// the flags as typed, before -p shutdown.* is folded into them
			if fl := cmd.Flags().Lookup("shutdown-wait"); fl != nil && fl.Changed {
				f.waitFlag = fl.Value.String()
			}
			if fl := cmd.Flags().Lookup("shutdown-timeout"); fl != nil && fl.Changed {
				f.timeoutFlag = fl.Value.String()
			}
			cfg, origin, err := loadServeConfig(a, cmd.Flags(), f.params, [2]bool{f.waitFlag != "", f.timeoutFlag != ""})
			if err != nil {
				return err
			}
			f.shutdown = origin
			logSettingRank(a.environ(), a.configFile, append(shutdownRanked(cfg.Shutdown, origin), addressRanked(cfg)...), commandLogger(a.Logger(), "serve"))
			f.registryFrom = serveRegistryOrigin(cmd.Flags().Changed("registry"), a.environ(), a.configFile, cfg.Registry)
			if cfg, err = withDubboAdvertise(cfg, a.environ()); err != nil {
				return err
			}
			if err := checkAdvertiseHost(cmd.Context(), cfg.Advertise, commandLogger(a.Logger(), "serve")); err != nil {
				return err
			}
			cat, err := a.Catalogs()
			if err != nil {
				return err
			}
			sw.use(cat)
			ctx, force, stop := serveSignals(cmd.Context())
			defer stop()
			f.logFormat = a.logFormat
			return runServe(ctx, cat, cfg, a.configFile, f, a.Logger(), force, a.stderr)
		},
	}
	fl := cmd.Flags()
	config.AddFlags(fl)
	fl.StringVar(&f.transport, "transport", "", "transport extension for every export (default smux)")
	fl.StringVar(&f.metrics, "metrics", "", "serve /metrics (Prometheus), /stats, /ready and /live on this address, e.g. 127.0.0.1:9090; no authentication: a non-loopback address is warned about; no environment variable")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate chain: serve TLS (needs --tls-key; same as -p tls=true -p tls.cert=FILE)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert (-p tls.key=FILE)")
	fl.StringVar(&f.tlsCA, "tls-ca", "", "PEM CA bundle: require client certificates it signed, mutual TLS (-p tls.ca=FILE)")
	fl.StringArrayVarP(&f.params, "param", "p", nil, "key=value URL parameter added to every exported service (repeatable; refused when a flag such as --transport sets the key to another value)")
	return cmd
}

// sameSignalWindow is how close after the first signal another one is
// taken as the same stop, not as the operator's second Ctrl-C: a
// supervisor that signals both the process and its group (GNU timeout,
// some init scripts) delivers two SIGTERMs microseconds apart, while a
// person's double Ctrl-C is hundreds of milliseconds apart.
const sameSignalWindow = 200 * time.Millisecond

// serveSignals returns a context the first SIGINT or SIGTERM cancels
// (its cause says which, as signal.NotifyContext's does, for signalOf),
// a channel that receives the second one (serve's forced exit), and stop,
// which stops listening and waits for the goroutine serveSignals started.
// A signal within sameSignalWindow of the first is the same stop and is
// dropped; the first after the window is the second.
func serveSignals(parent context.Context) (ctx context.Context, force <-chan syscall.Signal, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancelCause(parent)
	second := make(chan syscall.Signal, 1)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		var first time.Time
		for {
			select {
			case s := <-sigs:
				sig, _ := s.(syscall.Signal)
				if first.IsZero() {
					first = time.Now()
					cancel(fmt.Errorf("%v signal received", s))
					continue
				}
				if time.Since(first) < sameSignalWindow {
					continue // the same stop, sent twice (process and group)
				}
				select {
				case second <- sig:
				default: // a third signal: the second is being handled
				}
			case <-done:
				return
			}
		}
	}()
	return ctx, second, func() {
		signal.Stop(sigs)
		close(done)
		<-exited
		cancel(nil)
	}
}

// checkListenBrackets refuses an IPv6 listen address written without
// brackets in --listen or AIRNODE_LISTEN, spelling the fix as URL parsing
// does: `serve: --listen "::1:20896": IPv6 addresses need brackets:
// [::1]:20896` (net.SplitHostPort alone says only "too many colons").
// The configuration file's listen key is checked by config.Load.
func checkListenBrackets(cmd *cobra.Command, environ []string) error {
	if cmd.Flags().Changed("listen") {
		v, _ := cmd.Flags().GetString("listen")
		if hint := config.BracketHint(v); hint != "" {
			return fmt.Errorf("serve: --listen %q: %s", v, hint)
		}
		return nil // the flag wins over the environment
	}
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "AIRNODE_LISTEN="); ok {
			if hint := config.BracketHint(v); hint != "" {
				return fmt.Errorf("serve: environment AIRNODE_LISTEN %q: %s", v, hint)
			}
		}
	}
	return nil
}

// otherErrors returns the errors joined in err other than ab, as
// "; also: ..." (empty when there are none).
func otherErrors(err error, ab error) string {
	var rest []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if e != ab {
				rest = append(rest, e.Error())
			}
		}
	}
	if len(rest) == 0 {
		return ""
	}
	return "; also: " + strings.Join(rest, "; ")
}

// providerSetKeys are the provider URL keys the kernel sets at export
// (start time, side, method list, process id): a -p value would be
// silently replaced, so serve rejects it (an AIRNODE_PROVIDER_<KEY> one
// is ignored with a warning: config.EnvWarnings).
var providerSetKeys = config.ProviderSetKeys

// parseParams turns repeated key=value flags into a map; a key given twice
// is an error naming both flags, as -a's (`-p "a=1" and -p "a=2": key "a"
// given twice: give each key once`). Both errors, and a flag without "=",
// are usage errors (exit 2), as -a's are.
func parseParams(kvs []string) (map[string]string, error) {
	m := make(map[string]string, len(kvs))
	first := make(map[string]string, len(kvs)) // key -> the flag that gave it
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usage(fmt.Errorf("-p %q: want key=value", kv))
		}
		if _, dup := m[k]; dup {
			return nil, usage(fmt.Errorf("-p %q and -p %q: key %q given twice: give each key once", first[k], kv, k))
		}
		m[k], first[k] = v, kv
	}
	return m, nil
}

// flagParam is a URL key that a dedicated flag sets (--transport sets
// transport=), as -p key=value would.
type flagParam struct {
	flag  string // the flag as typed: "--transport"
	arg   string // its argument: "smux"
	key   string // a URL key it sets: "transport"
	value string // the key's value: "smux" (--tls-cert FILE sets tls=true too)
}

// paramFlags maps each URL key that serve's command line sets (raw: the
// -p arguments as typed, which parseParams accepted; flags: the dedicated
// flags' keys) to the flag that set it, as typed: "-p
// loadbalance=roundrobn", "--transport tcp", "--tls-cert FILE" for tls
// and tls.cert. An error about such a key names that flag
// (configKeyError). -p names a key that a flag also sets (with the same
// value: applyFlagParams refuses another).
func paramFlags(raw []string, flags []flagParam) map[string]string {
	m := make(map[string]string, len(raw)+len(flags))
	for _, kv := range raw {
		k, _, _ := strings.Cut(kv, "=")
		m[strings.TrimSpace(k)] = typedParam(kv)
	}
	for _, f := range flags {
		if _, ok := m[f.key]; !ok {
			m[f.key] = f.flag + " " + f.arg
		}
	}
	return m
}

// applyFlagParams adds each flag's key and value to params, which holds
// the -p parameters. A key that -p also gives with another value is an
// error naming both ("-p transport=tcp conflicts with --transport smux"):
// neither is ranked above the other, as kubectl and docker refuse
// conflicting flags rather than pick one silently. The error is a usage
// error (exit 2), as is every refusal of two flags or sources that
// contradict each other. The same value given both ways is accepted (for
// a duration key, in any spelling: sameParam).
func applyFlagParams(params map[string]string, flags []flagParam) error {
	for _, f := range flags {
		if v, ok := params[f.key]; ok && !sameParam(f.key, v, f.value) {
			return usage(fmt.Errorf("-p %s=%s conflicts with %s %s (which sets %s=%s): give one of them", f.key, v, f.flag, f.arg, f.key, f.value))
		}
	}
	for _, f := range flags {
		params[f.key] = f.value
	}
	return nil
}

// serveMetrics serves the bundled metrics filter's registry on addr (with
// opts: serve's health) for command cmd ("serve", "bench"), which its
// errors name, with airnode_build_info (buildLabels).
func serveMetrics(cat *extension.Catalogs, cmd, addr string, opts ...metrics.ServerOption) (*metrics.Server, error) {
	fb, err := cat.Filter.Get(metrics.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: --metrics: %w", cmd, err)
	}
	mb, ok := fb.(*metrics.Builder)
	if !ok {
		return nil, fmt.Errorf("%s: --metrics: filter %q is not the bundled metrics filter", cmd, metrics.Name)
	}
	mb.Registry().SetBuildInfo(buildLabels())
	ms, err := metrics.Listen(addr, mb.Registry(), opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: --metrics %s: %w", cmd, addr, err)
	}
	return ms, nil
}

// yamlSecret matches a secret in a configuration file's text: a token
// key with a value ("token: s3cret", "Echo.token: x") or a URL's userinfo
// password ("zookeeper://ops:pw@host").
var yamlSecret = regexp.MustCompile(`(?m)(^|[\s{,])((?:[\w$-]+\.)*token)\s*:\s*[^\s#,}]|://[^/@:\s"']+:[^/@\s"']+@`)

// yamlComment matches a YAML comment: '#' at a line's start or after a
// space, to the end of the line.
var yamlComment = regexp.MustCompile(`(?m)(^|\s)#.*$`)

// warnReadableSecrets logs, at Warn, that configuration file file holds a
// secret (yamlSecret) and every user of the machine may read it: the
// README has tokens put there rather than on the command line, where ps
// shows them (tester68 F8; ssh refuses a private key others can read).
// Nothing for no file, or one it cannot read.
func warnReadableSecrets(logger *slog.Logger, file string) {
	if file == "" {
		return
	}
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm()&0o004 == 0 {
		return
	}
	b, err := os.ReadFile(file)
	if err != nil || !yamlSecret.Match(yamlComment.ReplaceAll(b, nil)) {
		return
	}
	logger.Warn("airnode serve: the configuration file holds a secret (a token, or a registry password) and every user of this machine can read it: chmod o-r it (600 or 640)",
		"file", file, "mode", st.Mode().Perm().String())
}

// samePort refuses --metrics address m when a service listens on its
// port (listen, host:port) on an overlapping host: the metrics listener
// starts first, and the export's "address already in use" would send the
// user looking for another process (tester65 #10). An unspecified host
// (":9090", 0.0.0.0, ::) overlaps every host; unparsable addresses are
// left to the listeners' own errors.
func samePort(m, listen string) error {
	mh, mp, err := net.SplitHostPort(m)
	if err != nil {
		return nil
	}
	lh, lp, err := net.SplitHostPort(listen)
	if err != nil || mp != lp || mp == "0" || mp == "" {
		return nil
	}
	wild := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	if mh == lh || wild(mh) || wild(lh) {
		return usage(fmt.Errorf("serve: --metrics %s and the service listen address %s share port %s: give --metrics another port", m, listen, mp))
	}
	return nil
}

// loopbackAddr reports whether a, a listener's bound address, is a
// loopback one (127.0.0.0/8, ::1), reachable from this host only; an
// unspecified address (":9090" binds 0.0.0.0 or ::) or any other is not.
func loopbackAddr(a net.Addr) bool {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// startPlugins launches cfg's plugins, adds their extensions to cat and
// checks cfg's references against the completed catalogs (launchPlugins):
// a plugin that fails to start, or a bad reference, is an error, and a node
// does not run without a plugin its configuration declares. The returned
// host is never nil on success and must be closed.
func startPlugins(ctx context.Context, cfg config.Config, file string, cat *extension.Catalogs, logger *slog.Logger, warn warnFunc) (*pluginhost.Host, error) {
	return launchPlugins(ctx, cfg, file, cat, logger, warn)
}

// defaultRegistry returns the registry URL to use when none is given: the
// catalog's default registry ("file") in its default location, or the zero
// URL when the catalog does not have it (config.DefaultRegistryURL).
func defaultRegistry(cat *extension.Catalogs) spi.URL {
	u, _ := config.DefaultRegistryURL(cat)
	return u
}

// runServe exports demo.Echo and cfg's services, then waits for ctx and
// shuts the node down in the kernel's order. file is the configuration
// file cfg was read from ("" none): an export refused for a URL key the
// file set names the file and the key (configKeyError). A signal on force
// during the shutdown (a second Ctrl-C) ends it at once: the wait and the
// drain are cut short, the calls still in flight abandoned (their
// consumers answered SERVER_ERROR), one line saying so goes to stderr and
// the error returned exits 128 + the signal (130 for SIGINT), as kubectl
// and docker do on a second interrupt.
func runServe(ctx context.Context, cat *extension.Catalogs, cfg config.Config, file string, f serveFlags, base *slog.Logger, force <-chan syscall.Signal, stderr io.Writer) error {
	logger := commandLogger(base, "serve") // serve's own records; base goes to the node and the plugin host
	warnReadableSecrets(logger, file)
	params, err := parseParams(f.params)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	for _, k := range providerSetKeys {
		if _, ok := params[k]; ok {
			return fmt.Errorf("serve: -p %s: %q is set by the provider at export and cannot be given (provider-set keys: %s)",
				k, k, strings.Join(providerSetKeys, ", "))
		}
	}
	var flags []flagParam
	if f.transport != "" {
		flags = append(flags, flagParam{"--transport", f.transport, "transport", f.transport})
	}
	// a missing half of a TLS pair is reported by the transport, naming the key
	for _, tf := range []flagParam{{"--tls-cert", f.tlsCert, "tls.cert", f.tlsCert}, {"--tls-key", f.tlsKey, "tls.key", f.tlsKey}, {"--tls-ca", f.tlsCA, "tls.ca", f.tlsCA}} {
		if tf.value != "" {
			flags = append(flags, flagParam{tf.flag, tf.arg, "tls", "true"}, tf)
		}
	}
	if p, ok := advertiseParam(cfg); ok {
		flags = append(flags, p)
	}
	if err := applyFlagParams(params, flags); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	given := paramFlags(f.params, flags)
	if err := checkShutdownParams(params, f, cfg.Shutdown); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	reg, err := cfg.RegistryURL(cat)
	if err != nil && cfg.Registry != "" {
		return fmt.Errorf("serve: %s: %w", fmt.Sprintf(f.registryFrom, cfg.Registry), err)
	}
	plugins, err := startPlugins(ctx, cfg, file, cat, base, commandWarn(stderr, f.logFormat, "serve"))
	if err != nil {
		if stoppedStarting(ctx, logger, "starting plugins", err) {
			return nil // nothing listens or is registered yet
		}
		return err
	}
	defer plugins.Close() // last: after the node's shutdown (STYLE 11)
	impls := map[string]pluginhost.Service{}
	for _, ps := range plugins.Services() {
		if other, dup := impls[ps.Name]; dup {
			return fmt.Errorf("serve: service %s is provided by two service plugins, %q and %q: keep one of them in %s",
				ps.Name, other.Plugin, ps.Plugin, orDefault(file, "the configuration"))
		}
		impls[ps.Name] = ps
	}
	nodeName, _ := os.Hostname()
	// Everything that can be checked without listening is checked before
	// the first export: a node that fails never publishes a provider
	// consumers could pick, and fails at once (no shutdown wait).
	exports, err := planExports(cfg, file, params, given, impls, nodeName)
	if err != nil {
		return err
	}
	// -p shutdown.wait and -p shutdown.timeout (or a service's keys in
	// the file) are the kernel's, as --shutdown-wait and
	// --shutdown-timeout are (the largest of the exports' wins): the
	// timeout is the whole budget from the signal, the drain gets what
	// the wait leaves of it either way.
	outrankFileShutdownKeys(exports, cfg.Shutdown, f.shutdown, logger)
	budget := shutdownBudget(cfg.Shutdown, f.shutdown, exports)
	if err := checkExports(cat, cfg, file, params, given, reg, f.registryName(reg), exports, budget); err != nil {
		return err
	}
	wait, waitFrom := budget.wait, budget.waitFrom
	if !reg.IsZero() && len(exports) > 0 {
		reach, err := checkRegistry(ctx, cat, reg, f.registryName(reg), exports[0].url)
		if err != nil {
			if stoppedStarting(ctx, logger, "checking the registry", err) {
				return nil
			}
			return err
		}
		if reach != spi.ReachShared {
			// A warning, not an error: the providers still answer direct
			// calls by address (airnode call airnode://ADDR/demo.Echo),
			// which tests and scripts use with memory:// as "no registry".
			// The default wait is skipped, since no consumer learns of the
			// shutdown from this registry; a wait given explicitly (the
			// file, AIRNODE_SHUTDOWN_WAIT, --shutdown-wait, -p
			// shutdown.wait) is kept: it is the time a load balancer
			// polling /ready (503) or airnode.Health (NOT_SERVING) has to
			// stop sending before the listener closes (tester60; a
			// Kubernetes Service with a readiness probe and no registry).
			// The log says which.
			what := "no shutdown wait, since no consumer learns of the shutdown from it"
			switch {
			case wait > 0 && waitFrom == originDefault:
				what += fmt.Sprintf(" (the %v of %s is skipped; a wait given explicitly is kept, for health probes)", wait, waitFrom)
				waitFrom = fmt.Sprintf("none: the %v of %s is skipped, this registry publishes to no other process", wait, waitFrom)
				wait = 0
				for i := range exports {
					exports[i].url = exports[i].url.Without(keyShutdownWait)
				}
			case wait > 0:
				what = fmt.Sprintf("the %v shutdown wait of %s is kept for health probes: /ready answers 503 and airnode.Health NOT_SERVING through it, though no consumer learns of the shutdown from this registry", wait, waitFrom)
			}
			logger.Warn("airnode serve: this registry publishes to no other process: no consumer elsewhere will find these services; only calls by address reach them (airnode://ADDR/SERVICE). Give file:// (this machine) or zookeeper://HOST:PORT to publish; "+what,
				"registry", registryDesc(reg), "reach", reach.String())
		}
	}
	if wait > 0 && wait >= budget.timeout {
		// accepted (a wait up to the timeout is valid) but most likely
		// Dubbo's shutdown.wait=10000 given for airnode's: Dubbo's is the
		// whole budget, airnode's the pause inside it (README's Dubbo
		// table); the behaviour is the same, only said
		logger.Warn(shutdownWaitWarning(wait, waitFrom, budget.timeout, budget.timeoutFrom)) // the values and sources in the text, once
	}
	health := newServeHealth(cat, plugins, logger) // before NewNode: it learns the node's registries
	defer health.stopWatching()
	if f.metrics != "" {
		for _, e := range exports {
			if err := samePort(f.metrics, e.url.Address()); err != nil {
				return err
			}
		}
		ms, err := serveMetrics(cat, "serve", f.metrics, metrics.WithHealth(health.health))
		if err != nil {
			return err
		}
		defer ms.Close()
		logger.Info("airnode serve: metrics", "addr", ms.Addr().String())
		if !loopbackAddr(ms.Addr()) {
			logger.Warn("airnode serve: --metrics listens on an address other hosts can reach, and /metrics and /stats have no authentication: anyone who can connect reads the services, methods, call rates, failures and process stats; give 127.0.0.1:PORT (or put an authenticating proxy in front) unless that is intended",
				"addr", ms.Addr().String(), "flag", f.metrics)
		}
	}
	// shutdown.timeout is the whole budget from the signal (config doc),
	// and the kernel's too (from Shutdown's start): the drain gets what
	// the wait leaves of it.
	timeout := budget.timeout
	opts := []kernel.Option{kernel.WithLogger(base), kernel.WithHealth(health.health), kernel.WithShutdownTimeout(timeout), kernel.WithKeySource(envKeySource(cfg, given))}
	if reg.IsZero() || waitFrom != originDefault || wait != kernel.DefaultShutdownWait {
		opts = append(opts, kernel.WithShutdownWait(wait))
	} // else the kernel's default, the same, which it skips when no entry is listed (a check=false entry only queued: tester81 #4)
	if !reg.IsZero() {
		opts = append(opts, kernel.WithRegistry(reg))
	}
	node := kernel.NewNode(cat, opts...)
	registry := "none"
	if !reg.IsZero() {
		registry = registryDesc(reg)
	}
	var exported []*kernel.Exporter
	for _, pe := range exports {
		var exp *kernel.Exporter
		var err error
		if pe.plugin != nil {
			exp, err = node.ExportInvoker(ctx, pe.url, pe.plugin.Invoker(pe.url))
		} else {
			exp, err = node.Export(ctx, pe.demo, pe.url)
		}
		if err != nil {
			// A stop during startup (systemctl stop while the registry
			// is slow to answer): the export gave up because of the
			// signal, not because the configuration is wrong. The node
			// stops as after serving: what is exported is unregistered
			// and drained, and serve exits as that drain says (0).
			if stoppedStarting(ctx, logger, "exporting "+pe.url.ServiceKey(), err, "exported", len(exported), "of", len(exports)) {
				break
			}
			// what planExports could not check: the listen address, TLS
			// files, the registry itself. Close unregisters earlier exports.
			_ = node.Close()
			return configKeyError(cfg, file, pe.fromFile, given, err)
		}
		exported = append(exported, exp)
		// A signal that came while the export waited (check=false with
		// ZooKeeper down waits connect.timeout, then queues the entry):
		// stopping, not serving (tester93 #6: "serving" after SIGINT)
		if stoppedStarting(ctx, logger, "exporting "+pe.url.ServiceKey(), errExportedAfterSignal, "exported", len(exported), "of", len(exports)) {
			break
		}
		logger.Info("airnode serve: serving", "addr", exp.URL().Address(), "service", exp.URL().ServiceKey(),
			"registry", registry, "url", exp.URL().Redacted(), "version", buildVersion())
		health.exported(pe, exp, reg)
	}
	if ctx.Err() == nil {
		health.serving()
		warnPublished(logger, cfg.Listen, exported)
		warnCertificates(logger, exports, exported, time.Now())
	}
	<-ctx.Done()
	// Shutdown marks health draining first (WithHealth); draining does it
	// now, with the signal's name, which Shutdown keeps, and stops the
	// plugin watcher before the services are unregistered.
	health.draining(ctx)
	// the wait Shutdown will use (0 when nothing is registered)
	// and where it came from (wait_from, timeout_from)
	if node.ShutdownWait() == 0 && wait > 0 {
		waitFrom = "none: nothing is registered"
		if !reg.IsZero() && len(exported) > 0 {
			waitFrom = "none: no entry is listed (queued for want of a registry session, never created)"
		}
	}
	if waitFrom == originDefault && cfg.Shutdown.Wait < kernel.DefaultShutdownWait && wait == cfg.Shutdown.Wait {
		// config.Load cut the default to half of a shorter budget: say so,
		// not "the default" beside a wait that is not 2s (tester92 #4)
		waitFrom = originHalfTimeout
	}
	logger.Info("airnode serve: shutting down", "wait", node.ShutdownWait(), "timeout", timeout,
		"wait_from", waitFrom, "timeout_from", budget.timeoutFrom)
	sctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	// Shutdown runs on its own goroutine so that a second signal can cut
	// it short; on a forced exit that outlives forcedGrace the process
	// exits without waiting for it.
	go func() { shut <- node.Shutdown(sctx) }()
	select {
	case err = <-shut:
	case sig := <-force:
		return forcedExit(sig, cancel, shut, stderr, f.logFormat)
	}
	// the plugins are stopped (last of the shutdown, STYLE 11) before
	// serve's last line, "stopped" or the abandoned calls (the deferred
	// Close then returns at once): their exit lines come before it
	_ = plugins.Close()
	if err != nil {
		var ab *kernel.AbandonedError
		if errors.As(err, &ab) {
			// the whole budget from the signal is --shutdown-timeout
			return logAbandoned(logger, timeout, ab, otherErrors(err, ab))
		}
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	logger.Info("airnode serve: stopped")
	return nil
}

// stoppedStarting reports whether err, the failure of a startup step
// (plugins, the registry check, an export), came from the signal that
// cancelled ctx: serve is being stopped, not failing. It then logs one
// Info line naming the signal, the step it interrupted and err, as a
// stop rather than a failure (exit 0, as a drain's).
func stoppedStarting(ctx context.Context, logger *slog.Logger, step string, err error, attrs ...any) bool {
	sig, ok := signalOf(ctx)
	if !ok {
		return false
	}
	logger.Info("airnode serve: "+signalName(sig)+" received during startup, while "+step+": stopping before serving",
		append(attrs, "interrupted", err.Error())...)
	return true
}

// errExportedAfterSignal is what a stop during startup interrupted when
// the export itself completed after the signal came (stoppedStarting).
var errExportedAfterSignal = errors.New("the export completed after the signal: the service was never announced as serving")

// forcedGrace bounds how long a forced exit waits for the cut-short
// shutdown to count the abandoned calls (the kernel answers them within
// its own 200 ms grace); a handler that ignores its context does not hold
// the process longer.
const forcedGrace = time.Second

// forcedExit ends a shutdown that a second signal interrupted: it cancels
// the shutdown's context (cancel), which ends the wait and the drain and
// abandons the calls in flight, waits up to forcedGrace for Shutdown's
// result on shut to count them, writes one line on stderr ("airnode:
// serve: second SIGINT: exiting now, abandoning 1 call in flight"; a
// JSON record of level ERROR under --log-format json) and returns the error serve exits 128 + sig with.
func forcedExit(sig syscall.Signal, cancel context.CancelFunc, shut <-chan error, stderr io.Writer, logFormat string) error {
	cancel()
	calls := "the calls still in flight"
	t := time.NewTimer(forcedGrace)
	defer t.Stop()
	select {
	case err := <-shut:
		var ab *kernel.AbandonedError
		switch {
		case errors.As(err, &ab) && ab.Calls == 1:
			calls = "1 call in flight"
		case errors.As(err, &ab):
			calls = fmt.Sprintf("%d calls in flight", ab.Calls)
		default:
			calls = "0 calls in flight"
		}
	case <-t.C:
	}
	msg := fmt.Sprintf("serve: second %s: exiting now, abandoning %s", signalName(sig), calls)
	errorLine(stderr, logFormat, "serve", "airnode: "+msg, msg)
	return &interruptedError{sig: sig, msg: msg}
}

// plannedExport is one service serve exports: its URL (the configuration's
// protocol and service parameters, then -p and the flags' keys) and its
// implementation, a service plugin's or the built-in demo.Echo. source
// says what provides it and where it is configured, for errors: "the
// built-in demo.Echo", `service plugin "greeter" (services[1] in
// plugins.yaml)`.
type plannedExport struct {
	url      spi.URL
	plugin   *pluginhost.Service // nil: demo
	demo     *demo.Echo
	fromFile int // index in cfg.Services, -1 when the file does not list it
	source   string
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// planExports resolves the services serve exports, in order: demo.Echo
// (unless cfg.Demo is false), then cfg's services, then every plugin service cfg does not list (a
// config entry for demo.Echo with demo.Echo's service key configures the
// built-in one). Each needs an implementation, a service plugin's (impls,
// by name) or demo.Echo, and a URL whose keys demo.Echo reads (weight,
// payload) are well formed. The built-in demo.Echo is exported unless the
// file's entry for demo.Echo (no group or version) goes to a service
// plugin serving demo.Echo, or cfg.Demo is false; nothing to export at all
// is an error. Two services with the same service key on the
// same address (a service plugin's demo.Echo next to the built-in one)
// are an error naming both sources: the kernel would refuse the second
// export only after registering the first. Errors name the file and key
// that caused them when the file set it (configKeyError); a service
// without implementation lists the available ones.
func planExports(cfg config.Config, file string, params, given map[string]string, impls map[string]pluginhost.Service, nodeName string) ([]plannedExport, error) {
	services := []config.Service{{Interface: demo.Interface}}
	fromFile := []int{-1}
	if !cfg.Demo {
		services, fromFile = nil, nil
	}
	listed := map[string]bool{}
	for j, s := range cfg.Services {
		listed[s.Interface] = true
		if cfg.Demo && s.Interface == demo.Interface && spi.ServiceKey(s.Params[spi.KeyGroup], s.Interface, s.Params[spi.KeyVersion]) == demo.Interface {
			services[0], fromFile[0] = s, j
			continue
		}
		services, fromFile = append(services, s), append(fromFile, j)
	}
	for _, name := range slices.Sorted(maps.Keys(impls)) {
		if !listed[name] {
			services, fromFile = append(services, config.Service{Interface: name}), append(fromFile, -1)
		}
	}
	out := make([]plannedExport, 0, len(services))
	seen := map[string]plannedExport{} // address and service key -> first export
	for i, s := range services {
		u, err := cfg.ExportURL(s)
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		if u.Host() == "" && u.Port() == 0 {
			// --listen :0: every interface, a free port. The kernel
			// refuses a URL with neither host nor port (airnode:///x,
			// which ":0" would print as), so say every interface.
			u = u.WithAddress("0.0.0.0", 0)
		}
		u = u.WithParams(params)
		pe := plannedExport{url: u, fromFile: fromFile[i]}
		where := ""
		if pe.fromFile >= 0 {
			where = fmt.Sprintf(" (services[%d] in %s)", pe.fromFile, orDefault(file, "the configuration"))
		}
		// services[0] is the built-in one unless the file's entry for
		// demo.Echo names a service plugin's
		if ps, ok := impls[s.Interface]; ok && (i > 0 || pe.fromFile >= 0 || !cfg.Demo) {
			pe.source = fmt.Sprintf("service plugin %q%s", ps.Plugin, where)
			if _, set := u.Param(spi.KeyMethods); !set && len(ps.Methods) > 0 {
				pe.url = u.With(spi.KeyMethods, strings.Join(ps.Methods, ","))
			}
			pe.plugin = &ps
		} else if s.Interface == demo.Interface && cfg.Demo {
			pe.source = "the built-in " + demo.Interface + where
			weight, werr := u.Int("weight", kernel.DefaultWeight)
			if werr != nil {
				// the kernel's words for the key, with what it allows
				if cerr := config.CheckParams(map[string]string{"weight": u.ParamOr("weight", "")}); cerr != nil {
					werr = cerr
				}
				return nil, configKeyError(cfg, file, pe.fromFile, given, fmt.Errorf("serve: service %s: %w", s.Interface, werr))
			}
			payload, perr := u.Size("payload", protocol.DefaultPayload)
			if perr != nil {
				return nil, configKeyError(cfg, file, pe.fromFile, given, fmt.Errorf("serve: %w", perr))
			}
			pe.demo = demo.New(nodeName, int(weight)).LimitPayload(payload)
		} else {
			builtin := demo.Interface
			if !cfg.Demo {
				builtin = "none: demo is false (--demo, AIRNODE_DEMO or the file's demo key)"
			}
			return nil, fmt.Errorf("serve: service %q: no implementation (built in: %s; service plugins: %s)",
				s.Interface, builtin, orDefault(strings.Join(slices.Sorted(maps.Keys(impls)), ", "), "none"))
		}
		// The kernel keeps one service per service key on an address
		// and refuses the second export after the first is registered.
		at := u.Address() + "/" + u.ServiceKey()
		if first, dup := seen[at]; dup {
			return nil, fmt.Errorf("serve: service %s is exported twice on %s: by %s and by %s; a service key (interface, group, version) is served once per address: give one of them another group or version in a services entry, or leave one out",
				u.ServiceKey(), u.Address(), first.source, pe.source)
		}
		seen[at] = pe
		out = append(out, pe)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("serve: nothing to export: demo is false (--demo=false, AIRNODE_DEMO or the demo key of %s) and the configuration lists no services and starts no service plugin",
			orDefault(file, "the configuration"))
	}
	return out, nil
}

// checkExports checks, without listening or registering, what the kernel
// would refuse an export for: the typed kernel keys (config.CheckURL),
// the per-address keys (kernel.CheckServerKeys, kernel.Dispatcher), every
// extension the URL names existing and building with it (the catalogs'
// Explain, as list --explain does), the provider's TLS files
// (checkTLSFiles), method-level keys naming methods the service has
// (checkMethodKeys), shutdown.timeout and shutdown.wait against the
// budget (checkShutdownKeys), one transport per fixed address (sameTransport), the
// per-address keys and TLS agreeing with those of the first export on the
// same transport (sameServerKeys), and the registry extension of reg.
// Errors name the service, and the file and key when the file set it.
func checkExports(cat *extension.Catalogs, cfg config.Config, file string, params, given map[string]string, reg spi.URL, regName string, exports []plannedExport, budget shutdownTimes) error {
	if !reg.IsZero() {
		if err := cat.ExplainRegistry(reg).Err; err != nil {
			return fmt.Errorf("serve: %s: %w", regName, err)
		}
	}
	first := map[string]spi.URL{} // by transport: the export that makes the server
	var firstAt spi.URL           // the first export: its transport has the address
	for _, pe := range exports {
		u := pe.url
		err := config.CheckURL(pe.published())
		if err == nil {
			err = kernel.CheckServerKeys(u)
		}
		if err == nil {
			_, err = kernel.Dispatcher(u)
		}
		if err == nil {
			err = providerExplainErr(cat, pe.published())
		}
		if err == nil {
			err = checkTLSFiles(u)
		}
		if err == nil {
			err = checkAccessLog(cat, u)
		}
		if err == nil {
			err = checkMethodKeys(cat, pe)
		}
		if err == nil {
			err = checkShutdownKeys(u, budget)
		}
		if err == nil {
			// the kernel shares one server per transport and address
			tr := cat.Transport.Choose(u, "").Name
			if firstAt.IsZero() {
				firstAt = u
			}
			err = sameTransport(cat.Transport.Key(), firstAt, u, cat.Transport.Choose(firstAt, "").Name, tr)
			if _, ok := first[tr]; !ok {
				first[tr] = u
			}
			if err == nil {
				err = sameServerKeys(first[tr], u)
			}
		}
		if err != nil {
			return configKeyError(cfg, file, pe.fromFile, given, fmt.Errorf("serve: service %s: %w", u.ServiceKey(), err))
		}
	}
	return nil
}

// checkRegistry checks, before anything listens, what reg's registry
// does with serve's providers, and returns its reach: the builder's
// spi.RegistryReacher (memory: this process only; direct: nobody;
// spi.ReachShared when the builder does not say), and whether it can
// register at all, by a withdraw dry-run: Unregister of first, the URL
// of the first export, on a registry built for the check and closed after
// it. spi.Registry's contract makes Unregister of a URL the registry never
// registered a no-op, so nothing is published or deleted. A read-only
// registry is an error now, where Export would be refused only after the
// server listened: one whose builder says so (spi.ReadOnlyRegistry,
// forwarded by a registry plugin), or whose Unregister answers
// spi.ErrNotSupported (examples/staticregistry).
func checkRegistry(ctx context.Context, cat *extension.Catalogs, reg spi.URL, regName string, first spi.URL) (spi.RegistryReach, error) {
	b, err := cat.Registry.Get(reg.Scheme())
	if err != nil {
		return 0, fmt.Errorf("serve: %s: %w", regName, err)
	}
	if ro, ok := b.(spi.ReadOnlyRegistry); ok && ro.ReadOnly() {
		return 0, fmt.Errorf("serve: %s is a read-only registry: its %s extension says it cannot register providers (it lists them for consumers); give serve a registry it can publish to (file://, zookeeper://HOST:PORT)",
			regName, b.Name())
	}
	reach := spi.ReachShared
	if r, ok := b.(spi.RegistryReacher); ok {
		reach = r.Reach()
	}
	r, err := b.Build(reg)
	if err != nil {
		return 0, fmt.Errorf("serve: %s: %w", regName, err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = r.Unregister(ctx, first.With(spi.KeySide, string(spi.Provider)))
	if errors.Is(err, spi.ErrNotSupported) {
		return 0, fmt.Errorf("serve: %s is a read-only registry: it cannot register providers (%v), it lists them for consumers; give serve a registry it can publish to (file://, zookeeper://HOST:PORT)",
			regName, err)
	}
	return reach, nil
}

// checkMethodKeys refuses a method-level key for a method the service
// lacks (Slep.timeout), as Export does (Node.CheckMethodKeys): the demo's
// methods, or those a service plugin declares.
func checkMethodKeys(cat *extension.Catalogs, pe plannedExport) error {
	methods, err := pe.methods()
	if err != nil {
		return err
	}
	return kernel.NewNode(cat).CheckMethodKeys(pe.url, methods)
}

// methods returns the methods the export serves: demo.Echo's, or the
// "methods" of its URL (a service plugin's, or the file's).
func (pe plannedExport) methods() ([]string, error) {
	if pe.demo != nil {
		return kernel.MethodNames(pe.demo)
	}
	return pe.url.Methods(), nil
}

// published returns pe's URL with the "methods" the kernel's Export
// publishes (it adds them when the URL has none), so that the checks of
// Dubbo's "<m>.<key>" see the URL consumers will: "Echo.loadbalance=x"
// is checked as "methods.Echo.loadbalance=x" is (spi.URL.MethodParam).
func (pe plannedExport) published() spi.URL {
	if _, ok := pe.url.Param(spi.KeyMethods); ok {
		return pe.url
	}
	if ms, err := pe.methods(); err == nil && len(ms) > 0 {
		return pe.url.With(spi.KeyMethods, strings.Join(ms, ","))
	}
	return pe.url
}

// providerExplainErr builds every extension u names as the kernel's
// Export does (the catalogs' ExplainSide, as list --explain does) and returns
// the errors of the URL-selected points and of the provider's filter
// chain. Export builds the provider filters only, from the URL it
// publishes: side=provider, and Dubbo's token=true (or "default")
// replaced by a random token; so does this check, with a stand-in token.
// The consumer's filters are built by consumers, from their own URL
// merged with this one: a consumer-side error here (the token filter
// refusing token=true on a consumer) is not the provider's.
func providerExplainErr(cat *extension.Catalogs, u spi.URL) error {
	u = u.With(spi.KeySide, string(spi.Provider))
	if v, _ := u.Param(spi.AttachmentToken); v == "true" || v == "default" {
		u = u.With(spi.AttachmentToken, strings.Repeat("0", 32)) // the kernel's randomToken is 32 hex digits
	}
	// the provider's chain only: building the consumer's too cost a
	// filter plugin whose Build hangs twice its 3 s bound (nu48 F8)
	e, _ := cat.ExplainSide(u, extension.ReferencedMethods(u), spi.Provider)
	var errs []error
	for _, c := range e.Points {
		if c.Err != nil {
			errs = append(errs, c.Err)
		}
	}
	for _, f := range e.Filters {
		if f.Side == spi.Provider && f.Err != nil {
			errs = append(errs, f.Err)
		}
	}
	return errors.Join(dedupeErrors(errs)...)
}

// checkTLSFiles reads the provider's certificate, key and CA of u when u
// turns TLS on (tls=true), as the transport will when it listens: a
// missing or mismatched file is an error naming the key and the file.
func checkTLSFiles(u spi.URL) error {
	ts, err := tlsconf.Parse(u)
	if err != nil || !ts.Enabled {
		return err
	}
	_, err = ts.Server()
	return err
}

// warnCertificates logs a Warn line, once per certificate file and
// published host, when the certificate (tls.cert) of an export serving
// TLS is one its consumers will reject: expired or not valid yet (naming
// not_before and not_after), or not naming the host the export publishes
// (naming the certificate's names; a consumer can still dial it with
// tls.servername set to one of them). serve still serves: the
// certificate may be renewed in place, and a consumer that sets
// tls.servername is not affected by the names. exports and exported are
// index for index.
func warnCertificates(logger *slog.Logger, exports []plannedExport, exported []*kernel.Exporter, now time.Time) {
	seen := map[string]bool{}
	for i, e := range exported {
		ts, err := tlsconf.Parse(exports[i].url)
		host := e.URL().Host()
		if err != nil || !ts.Enabled || ts.Cert == "" || seen[ts.Cert+"|"+host] {
			continue
		}
		seen[ts.Cert+"|"+host] = true
		c, err := tlsconf.CheckServerCert(ts.Cert, host, now)
		if err != nil {
			continue // the transport read it when it listened: not expected
		}
		if c.Expired || c.NotYetValid {
			what := "has expired"
			if c.NotYetValid {
				what = "is not valid yet"
			}
			logger.Warn("airnode serve: the TLS certificate "+what+": every consumer will reject it (\"x509: certificate has expired or is not yet valid\"); renew it",
				"cert", ts.Cert, "not_before", c.NotBefore.UTC().Format(time.RFC3339), "not_after", c.NotAfter.UTC().Format(time.RFC3339), "now", now.UTC().Format(time.RFC3339))
		}
		if !c.NamesHost {
			logger.Warn("airnode serve: the TLS certificate does not name the host this provider publishes: consumers that dial it will reject it (\"x509: certificate is valid for ...\") unless they set tls.servername to one of its names; give a certificate naming the host, or publish a name it holds (--advertise)",
				"cert", ts.Cert, "host", host, "names", strings.Join(c.Names, ","))
		}
	}
}

// sameServerKeys returns the error for export u when first, exported
// before it on the same transport and address (serve exports every
// service on --listen), made the server: u sets a kernel.ServerKeys key
// (dispatcher, payload, ...) to another value than first's, its default
// included (the dispatcher's is kernel.Dispatchers()[0]), or a
// kernel.ListenerKeys key (tls on or off, the provider's TLS files), as
// the kernel's Export refuses it (kernel.DifferentServerKey). Nil
// otherwise, and for u == first.
func sameServerKeys(first, u spi.URL) error {
	k, v, have, set := kernel.DifferentServerKey(first, u)
	if k == "" {
		return nil
	}
	was := fmt.Sprintf("%q", have)
	if !set {
		was = "its default"
		if have != "" {
			was += fmt.Sprintf(" (%s)", have)
		}
	}
	return fmt.Errorf("URL key %q is %q, but %s, exported first on the same address, uses %s: %s are per listening address; give every service the same value (protocol: in plugins.yaml sets it for all)",
		k, v, first.ServiceKey(), was, strings.Join(append(kernel.ServerKeys(), kernel.ListenerKeys()...), ", "))
}

// sameTransport returns the error for export u on a fixed port (not 0)
// when first, exported before it on the same address, uses another
// transport: the kernel makes one server per transport and address, so
// u's would fail to bind the port first's server listens on ("bind:
// address already in use", after first was exported). On port 0 every
// transport gets a port of its own. trFirst and tr are the transports'
// names (the catalog's choice, its default included), key the point's
// URL key ("transport").
func sameTransport(key string, first, u spi.URL, trFirst, tr string) error {
	if tr == trFirst || u.Port() == 0 {
		return nil
	}
	was := fmt.Sprintf("%q", trFirst)
	if _, set := first.Param(key); !set {
		was = fmt.Sprintf("its default (%s)", trFirst)
	}
	return fmt.Errorf("URL key %q is %q, but %s, exported first on the same address %s, uses %s: one address listens with one transport; give every service the same transport (protocol: in plugins.yaml or --transport sets it for all), or listen on port 0",
		key, tr, first.ServiceKey(), u.Address(), was)
}

// The provider URL keys of the shutdown (kernel: Node.Shutdown):
// keyShutdownWait, the pause between unregistering and closing the
// listener; keyShutdownTimeout, the whole budget from the signal.
const (
	keyShutdownWait    = "shutdown.wait"
	keyShutdownTimeout = "shutdown.timeout"
)

// shutdownWaitWarning is serve's warning at start for a shutdown wait
// (wait, from waitFrom) not shorter than the whole budget (timeout, from
// timeoutFrom): the wait before the listeners close then leaves the
// drain of the calls in flight no time.
func shutdownWaitWarning(wait time.Duration, waitFrom string, timeout time.Duration, timeoutFrom string) string {
	return fmt.Sprintf("airnode serve: shutdown.wait %v (%s) is not shorter than shutdown.timeout %v (%s), the whole shutdown budget from the signal: "+
		"the wait before closing the listeners leaves no time to drain the calls in flight; give shutdown.wait a part of shutdown.timeout (default 2s), "+
		"or raise shutdown.timeout (Dubbo's shutdown.wait=10000, the whole budget, is airnode's shutdown.timeout=10000)",
		wait, waitFrom, timeout, timeoutFrom)
}

// shutdownTimes is the shutdown serve runs: the wait and the whole budget
// (timeout), each the largest an export's URL gives (urlWait, urlTimeout:
// one did), else the configuration's (--shutdown-wait,
// --shutdown-timeout), as the kernel takes them (Node.ShutdownWait), and
// where each came from (waitFrom, timeoutFrom: shutdownOrigin's labels,
// "URL key shutdown.wait" for the file's URL keys: urlOrigin).
type shutdownTimes struct {
	wait, timeout         time.Duration
	urlWait, urlTimeout   bool
	waitFrom, timeoutFrom string
}

// shutdownBudget returns the shutdown of exports under cfg, whose values
// came from origin. A value that does not parse is left out here;
// checkShutdownKeys refuses it.
func shutdownBudget(cfg config.Shutdown, origin shutdownOrigin, exports []plannedExport) shutdownTimes {
	b := shutdownTimes{wait: cfg.Wait, timeout: cfg.Timeout,
		waitFrom: orDefault(origin.wait, originDefault), timeoutFrom: orDefault(origin.timeout, originDefault)}
	for _, pe := range exports {
		if d, err := pe.url.Duration(keyShutdownWait, -1); err == nil && d >= 0 && (!b.urlWait || d > b.wait) {
			b.wait, b.urlWait, b.waitFrom = d, true, urlOrigin(keyShutdownWait, d, cfg.Wait, origin.wait)
		}
		if d, err := pe.url.Duration(keyShutdownTimeout, -1); err == nil && d > 0 && (!b.urlTimeout || d > b.timeout) {
			b.timeout, b.urlTimeout, b.timeoutFrom = d, true, urlOrigin(keyShutdownTimeout, d, cfg.Timeout, origin.timeout)
		}
	}
	return b
}

// urlOrigin names where an export's shutdown key (key, d) came from: the
// configuration's source (label) when that gave the same value to every
// export (-p, a flag or variable outranking the file:
// outrankFileShutdownKeys), else "URL key KEY" (the file's protocol: or
// params:).
func urlOrigin(key string, d, cfg time.Duration, label string) string {
	if d == cfg && label != "" && label != originDefault && !strings.Contains(label, " in ") {
		return label
	}
	return "URL key " + key
}

// checkShutdownParams refuses -p shutdown.wait or -p shutdown.timeout (in
// params) with a value other than --shutdown-wait's or
// --shutdown-timeout's when that flag was given (f.waitFlag,
// f.timeoutFlag: its argument as typed, "" when not given; cfg: its
// value), in applyFlagParams' words and as a usage error (exit 2): the
// two are not ranked. The same duration spelled two ways ("5s", "5000")
// is accepted.
func checkShutdownParams(params map[string]string, f serveFlags, cfg config.Shutdown) error {
	for _, k := range []struct {
		key, flag, arg string
		value          time.Duration
	}{
		{keyShutdownWait, "--shutdown-wait", f.waitFlag, cfg.Wait},
		{keyShutdownTimeout, "--shutdown-timeout", f.timeoutFlag, cfg.Timeout},
	} {
		v, ok := params[k.key]
		if !ok || k.arg == "" {
			continue
		}
		if d, err := spi.ParseDuration(v); err == nil && d == k.value {
			continue
		}
		return usage(fmt.Errorf("-p %s=%s conflicts with %s %s (which sets %s=%v): give one of them", k.key, v, k.flag, k.arg, k.key, k.value))
	}
	return nil
}

// checkShutdownKeys checks u's shutdown.wait and shutdown.timeout, when
// set, as config checks --shutdown-wait and --shutdown-timeout, against
// the shutdown serve will run (b): the wait a duration from 0 to the
// timeout, the timeout one above 0 and at least the wait, Go syntax or bare
// milliseconds; otherwise an *spi.ParamError naming the key and what is
// allowed (before, -p shutdown.wait=abc or -1s was published and
// silently replaced by 2s, and so was -p shutdown.timeout=abc by 10s).
func checkShutdownKeys(u spi.URL, b shutdownTimes) error {
	if v, ok := u.Param(keyShutdownWait); ok {
		if d, err := spi.ParseDuration(v); err != nil || d > b.timeout {
			return &spi.ParamError{Key: keyShutdownWait, Value: v,
				Want: fmt.Sprintf("a duration from 0 to shutdown.timeout (%v, %s), such as 5s, 500ms or 5000 (milliseconds)", b.timeout, b.timeoutFrom)}
		}
	}
	if v, ok := u.Param(keyShutdownTimeout); ok {
		if d, err := spi.ParseDuration(v); err != nil || d <= 0 || d < b.wait {
			return &spi.ParamError{Key: keyShutdownTimeout, Value: v,
				Want: fmt.Sprintf("a duration above 0 and at least shutdown.wait (%v, %s), the whole shutdown budget from the signal, such as 10s, 1m or 10000 (milliseconds)", b.wait, b.waitFrom)}
		}
	}
	return nil
}
