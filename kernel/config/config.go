package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// Defaults of the node settings.
const (
	DefaultListen             = ":20880"
	DefaultShutdownTimeout    = 10 * time.Second
	DefaultShutdownWait       = 2 * time.Second
	DefaultPluginStartTimeout = 10 * time.Second
)

// Plugin restart policies.
const (
	// RestartOnFailure (default) restarts, with backoff, every exit the
	// host did not ask for: a crash, a kill, a non-zero status, and a
	// status 0 too (an sdk plugin exits 0 after a SIGTERM the host did
	// not send); only the host's own stop is final.
	RestartOnFailure = "on-failure"
	// RestartAlways restarts the same exits as RestartOnFailure: the
	// host never stops a plugin it keeps using, so no exit it did not ask
	// for is a success. Kept as a name configurations use.
	RestartAlways = "always"
	// RestartNever leaves the plugin down after any exit; its extensions
	// fail with an error and serve unregisters what depends on it.
	RestartNever = "never"
)

// Config is the whole of plugins.yaml.
//
//	listen: ":20880"
//	registry: zookeeper://127.0.0.1:2181
//	protocol: {transport: smux, heartbeat.interval: 30s}
//	shutdown: {timeout: 10s, wait: 2s}
//	services:   [{interface: demo.Echo, params: {weight: "200"}}]
//	references: [{interface: demo.Echo, params: {loadbalance: roundrobin}}]
//	plugins:    [{name: acme.p2c, point: loadbalance, command: ./bin/p2c}]
type Config struct {
	// Listen is the provider's listen address, "host:port"; port 0 picks a
	// free port. Default ":20880". Env AIRNODE_LISTEN, flag --listen.
	Listen string `koanf:"listen"`
	// Advertise is the address published in the registry instead of the
	// one listened on (NAT, port-forwards, containers, a multi-homed
	// host): HOST, HOST:PORT, [IPv6]:PORT, :PORT or a network interface
	// name (SplitAdvertise); a host alone keeps the port listened on.
	// Default "": publish the address listened on. Env AIRNODE_ADVERTISE,
	// flag --advertise.
	Advertise string `koanf:"advertise"`
	// Application is the application name (Dubbo's <dubbo:application
	// name>, URL key "application") of every export and reference of
	// the node, which its registry entries carry and Dubbo Admin groups
	// services by: ExportURL and ApplyApplication put it on URLs that do
	// not set the key themselves (a service's or reference's params, the
	// protocol's, -p, win). Default "": the kernel's default, the
	// executable's base name (kernel.DefaultApplication: "airnode" for
	// the airnode binary). Env AIRNODE_APPLICATION, flag --application.
	Application string `koanf:"application"`
	// Registry is the registry URL; its scheme selects the registry
	// extension ("zookeeper://127.0.0.1:2181", "file:///var/run/airnode",
	// "memory://"). Empty means the default registry extension ("file")
	// with its own default location. Env AIRNODE_REGISTRY, flag --registry.
	Registry string `koanf:"registry"`
	// Protocol holds URL parameters applied to every export (transport,
	// codec, heartbeat.interval, payload, ...); a service's own Params win.
	// An AIRNODE_PROVIDER_<KEY> variable sets one key over the file's
	// (EnvKey: AIRNODE_PROVIDER_WEIGHT=200 is weight).
	// Keys are taken whole: "heartbeat.interval" is one key; a nested map
	// ("heartbeat: {interval: 60s}") is refused, saying the flat key.
	Protocol map[string]string `koanf:"protocol"`
	// Consumer holds URL parameters applied to every reference (Dubbo's
	// <dubbo:consumer>: timeout, retries, loadbalance, retry.tokens, ...);
	// a reference's own Params, and the URL's own keys, win
	// (ApplyReference). Keys are taken whole, as Protocol's. An
	// AIRNODE_CONSUMER_<KEY> variable sets one key over the file's
	// (EnvKey: AIRNODE_CONSUMER_TIMEOUT=2s is timeout).
	Consumer map[string]string `koanf:"consumer"`
	// Shutdown bounds the graceful shutdown.
	Shutdown Shutdown `koanf:"shutdown"`
	// Demo says whether `airnode serve` exports its built-in demo.Echo
	// service (Echo, Sleep, Payload, Fail, Info) besides Services: a test
	// service, which tells anyone who can connect the host name and pid
	// (Info) and answers Payload with up to the payload limit. Default
	// true, so that a first `airnode serve` + `airnode call` works; set it
	// false in production. Env AIRNODE_DEMO, flag --demo (true or false).
	Demo bool `koanf:"demo"`
	// Services are exported by `airnode serve`, in order.
	Services []Service `koanf:"services"`
	// References are consumed by the node: the consumer defaults of
	// their interfaces (ApplyReference). A reference is identified by its
	// Interface alone, so two entries naming one interface are refused
	// (Validate), whatever their group or version.
	References []Reference `koanf:"references"`
	// Plugins are out-of-process extensions, launched by the node and
	// registered in the catalogs under Name.
	Plugins []Plugin `koanf:"plugins"`

	// UnknownEnv are the AIRNODE_* variables of Source.Environ that Load
	// read nothing from, sorted (UnknownEnv: a typo such as
	// AIRNODE_REGISTY, whose node then joins the default registry, or
	// AIRNODE_CONSUMER_TIMOUT); nil when none. Load has warned about them
	// on Source.Logger; a program that wants to refuse them checks this.
	// Not read from the file.
	UnknownEnv []string `koanf:"-"`

	// ignored are the lines of IgnoredKeys.
	ignored []string

	// consumerEnv maps each Consumer key an AIRNODE_CONSUMER_<KEY>
	// variable set over the file's to the variable's name
	// (applyEnvKeys); ConsumerSource reads it. providerEnv is the same
	// for Protocol and AIRNODE_PROVIDER_<KEY> (ProtocolSource).
	consumerEnv, providerEnv map[string]string
	// origin maps each setting Load took from the file, the environment
	// or a flag ("shutdown.timeout") to its source (SettingSource).
	origin map[string]string
}

// IgnoredKeys returns one line, in the file's order of sections, for
// each URL key of the configuration file that Load left out because the
// kernel sets it itself (ProviderSetKeys): in protocol: or a service's
// params: (`plugins.yaml: protocol.timestamp is ignored: timestamp is
// set by the provider at export and cannot be given (provider-set keys:
// timestamp, side, methods, pid)`), as serve's -p refuses it and
// EnvWarnings says of AIRNODE_PROVIDER_TIMESTAMP; in consumer: or a
// reference's params:, those a consumer sets (ConsumerSetKeys). Load
// logs each on Source.Logger; the airnode command writes each as a
// warning of the command. nil when there is none.
func (c Config) IgnoredKeys() []string { return slices.Clone(c.ignored) }

// SettingSource says where Load took setting key, a key of the file's
// schema written with '.' ("registry", "shutdown.timeout"): "env
// AIRNODE_REGISTRY" for an environment variable, "flag --registry" for a
// flag, the configuration file's path for the file, "" for the default
// (or a Config Load did not make).
func (c Config) SettingSource(key string) string {
	return c.origin[key]
}

// sourceLabel names where Load took setting key, for a message about
// another setting that it bounds: "--shutdown-timeout" (a flag),
// "AIRNODE_SHUTDOWN_TIMEOUT" (a variable), "shutdown.timeout in
// plugins.yaml" (the file), "the default"; "" for a Config Load did not
// make (no source is known).
func (c Config) sourceLabel(key string) string {
	if c.origin == nil {
		return ""
	}
	o, ok := c.origin[key]
	switch {
	case !ok || o == "":
		return "the default"
	case strings.HasPrefix(o, "flag "):
		return strings.TrimPrefix(o, "flag ")
	case strings.HasPrefix(o, "env "):
		return strings.TrimPrefix(o, "env ")
	}
	return key + " in " + o
}

// ProtocolSource says where Protocol's key came from: the name of the
// AIRNODE_PROVIDER_<KEY> variable that set it ("AIRNODE_PROVIDER_WEIGHT")
// and env true, or "protocol.<key>" and env false for the file's
// protocol: section; "" when Protocol does not set key.
func (c Config) ProtocolSource(key string) (name string, env bool) {
	if _, ok := c.Protocol[key]; !ok {
		return "", false
	}
	if v, ok := c.providerEnv[key]; ok {
		return v, true
	}
	return "protocol." + key, false
}

// ConsumerSource says where Consumer's key came from: the name of the
// AIRNODE_CONSUMER_<KEY> variable that set it ("AIRNODE_CONSUMER_TIMEOUT")
// and env true, or "consumer.<key>" and env false for the file's
// `consumer:` section; "" when Consumer does not set key.
func (c Config) ConsumerSource(key string) (name string, env bool) {
	if _, ok := c.Consumer[key]; !ok {
		return "", false
	}
	if v, ok := c.consumerEnv[key]; ok {
		return v, true
	}
	return "consumer." + key, false
}

// EnvSource names the variable that set side's key to value: for
// spi.Consumer the AIRNODE_CONSUMER_<KEY> variable that set Consumer's
// key (ConsumerSource), for spi.Provider the AIRNODE_PROVIDER_<KEY> one
// of Protocol's (ProtocolSource), when the value it set is value; ""
// otherwise (the file's, a URL's own, another value). It is a
// kernel.KeySource: kernel.WithKeySource(cfg.EnvSource) makes the
// node's warnings name the variable (AIRNODE_CONSUMER_TIMEOUT=5), not
// the key (timeout=5).
func (c Config) EnvSource(side spi.Side, key, value string) string {
	params, source := c.Consumer, c.ConsumerSource
	if side == spi.Provider {
		params, source = c.Protocol, c.ProtocolSource
	}
	if v, ok := params[key]; !ok || v != value {
		return ""
	}
	if name, env := source(key); env {
		return name
	}
	return ""
}

// Shutdown is the graceful-shutdown timing: after unregistering, the node
// waits Wait for consumers to notice, then drains in-flight calls until
// Timeout (counted from the signal) has passed.
type Shutdown struct {
	// Timeout is the whole shutdown budget; > 0, default 10s.
	// Env AIRNODE_SHUTDOWN_TIMEOUT, flag --shutdown-timeout.
	Timeout time.Duration `koanf:"timeout"`
	// Wait is the pause between unregistering and closing the listener;
	// 0 ≤ Wait ≤ Timeout, default 2s. Env AIRNODE_SHUTDOWN_WAIT, flag
	// --shutdown-wait.
	Wait time.Duration `koanf:"wait"`
}

// Service is one service to export.
type Service struct {
	// Interface is the service interface name ("demo.Echo"); required.
	Interface string `koanf:"interface"`
	// Params are the service's URL parameters (group, version, weight,
	// methods.Echo.timeout, ...). They win over Config.Protocol.
	Params map[string]string `koanf:"params"`
}

// Reference is one service to consume.
type Reference struct {
	// Interface is the service interface name ("demo.Echo"); required.
	Interface string `koanf:"interface"`
	// URL, when set, names the providers directly and bypasses the
	// registry, as Dubbo's <dubbo:reference url=...>:
	// "airnode://host:port[,host:port...][/interface]", one provider per
	// host ("airnode://10.0.0.1:20880,10.0.0.2:20880/demo.Echo"). Its
	// path, when given, must be Interface; it carries no parameters (they
	// go under Params). ApplyReference puts its hosts on a URL that names
	// none. Validate refuses anything else, naming "references[i].url".
	URL string `koanf:"url"`
	// Params are the reference's URL parameters (loadbalance, timeout,
	// cluster, retries, group, version, ...).
	Params map[string]string `koanf:"params"`
}

// Plugin declares one out-of-process extension (a hashicorp/go-plugin
// binary). The node launches Command with Args and Env, checks its SHA256
// first when given, and registers it in the Point catalog as Name.
type Plugin struct {
	// Name is the extension name: catalog rules (extension.ValidName),
	// e.g. "acme.p2c".
	Name string `koanf:"name"`
	// Point is what it serves: filter, loadbalance, registry (catalog
	// points) or service (provider implementations); see Points.
	Point string `koanf:"point"`
	// Command is the plugin binary, absolute or relative to the working
	// directory (not to the configuration file's: the airnode commands
	// warn when that directory would resolve it otherwise); required.
	Command string `koanf:"command"`
	// Args are passed to Command.
	Args []string `koanf:"args"`
	// Env is added to the plugin's environment.
	Env map[string]string `koanf:"env"`
	// SHA256, when set, is the hex SHA-256 of Command; a mismatch refuses
	// to start it.
	SHA256 string `koanf:"sha256"`
	// StartTimeout bounds launch and handshake; ≥ 0, 0 means the default
	// 10s.
	StartTimeout time.Duration `koanf:"start_timeout"`
	// Restart is always, on-failure (default, also for "") or never.
	Restart string `koanf:"restart"`
	// Required, for a filter plugin only (Validate refuses it on other
	// points), makes a consumer fail closed without it: a consumer
	// command that refers (call, bench) exits 1 when the plugin cannot
	// start, and a consumer call whose chain holds it fails CLIENT_ERROR,
	// not sent, while it is down (restarting, given up). Default false:
	// a consumer command goes on without a filter plugin that failed to
	// start, warning, and the chains its activation would put it in run
	// without it. A provider fails closed either way: serve does not
	// start without every declared plugin, and its calls fail while a
	// filter plugin of their chain is down.
	Required bool `koanf:"required"`
}

// DefaultConfig returns a configuration usable as is: listen on :20880,
// the default registry, the demo service on, no services, references or
// plugins, a 10s shutdown with a 2s wait.
func DefaultConfig() Config {
	return Config{
		Listen:   DefaultListen,
		Protocol: map[string]string{},
		Consumer: map[string]string{},
		Demo:     true,
		Shutdown: Shutdown{Timeout: DefaultShutdownTimeout, Wait: DefaultShutdownWait},
	}
}

// Points lists the points a plugin may serve, sorted: the catalog points
// filter, loadbalance and registry, and PointService. Transport, codec,
// heartbeat and cluster stay in process (pluginrpc.Points).
var Points = []string{extension.PointFilter, extension.PointLoadBalance, extension.PointRegistry, PointService}

// PointHint returns the did-you-mean of point, a plugin point that is not
// one of Points, in the form of every other misspelt name's
// (`; did you mean "service"?` for "servise"), or "" when no point is
// close (suggest.Closest).
func PointHint(point string) string {
	if m := suggest.Closest(point, Points); m != "" && m != point {
		return fmt.Sprintf("; did you mean %q?", m)
	}
	return ""
}

// PointService is the plugin "point" of a service plugin: a process that
// serves provider implementations, which `airnode serve` exports
// (pluginhost.PointService; a literal here since pluginhost imports config).
const PointService = "service"

// Validate reports every invalid field, each error naming the field path
// ("plugins[1].sha256") and what is allowed; nil when c is usable.
func (c Config) Validate() error {
	var errs []error
	for _, p := range c.problems() {
		errs = append(errs, fmt.Errorf("config: %s: %s", p.path, p.msg))
	}
	return errors.Join(errs...)
}

// fileParams returns params without the keys of fromEnv (consumerEnv,
// providerEnv): a variable's value is a URL's, checked by applyEnvKeys
// and kept as written, where a bare number of milliseconds is allowed
// (AIRNODE_CONSUMER_TIMEOUT=3000), so Validate after Load refuses only
// the file's bare durations. params itself when fromEnv is empty.
func fileParams(params, fromEnv map[string]string) map[string]string {
	if len(fromEnv) == 0 {
		return params
	}
	out := make(map[string]string, len(params))
	for k, v := range params {
		if _, env := fromEnv[k]; !env {
			out[k] = v
		}
	}
	return out
}

// problem is one invalid field: its path ("shutdown.wait",
// "plugins[1].sha256") and what is wrong.
type problem struct{ path, msg string }

// problems lists every invalid field of c, in field order.
func (c Config) problems() []problem {
	var errs []problem
	bad := func(path, format string, args ...any) {
		errs = append(errs, problem{path, fmt.Sprintf(format, args...)})
	}

	if err := checkListen(c.Listen); err != nil {
		bad("listen", "%v", err)
	}
	if strings.TrimSpace(c.Application) != c.Application || strings.ContainsAny(c.Application, ",&=") {
		bad("application", "%q: want a name without spaces around it and without ',', '&' or '=' (Dubbo Admin shows it as given), e.g. shop", c.Application)
	}
	if c.Advertise != "" {
		if _, _, err := SplitAdvertise(c.Advertise); err != nil {
			bad("advertise", "%v", err)
		}
	}
	if c.Registry != "" {
		if _, err := spi.Parse(c.Registry); err != nil {
			bad("registry", "%v", err)
		}
	}
	if err := checkParams(fileParams(c.Protocol, c.providerEnv), true); err != nil {
		bad("protocol", "%v", err)
	}
	if err := checkParams(fileParams(c.Consumer, c.consumerEnv), true); err != nil {
		bad("consumer", "%v", err)
	}
	if c.Shutdown.Timeout <= 0 {
		bad("shutdown.timeout", "%v must be > 0", c.Shutdown.Timeout)
	}
	// With a bad timeout only that is reported: the wait's bound is the
	// timeout, and "wait must be between 0 and 0s" would be its echo.
	if c.Shutdown.Wait < 0 || c.Shutdown.Timeout > 0 && c.Shutdown.Wait > c.Shutdown.Timeout {
		bound := c.Shutdown.Timeout.String()
		if from := c.sourceLabel("shutdown.timeout"); from != "" {
			bound += ", " + from // where the bound came from, as serve's -p form says (tester92 #4)
		}
		bad("shutdown.wait", "%v must be between 0 and shutdown.timeout (%s)", c.Shutdown.Wait, bound)
	}

	keys := map[string]int{}
	for i, s := range c.Services {
		path := fmt.Sprintf("services[%d]", i)
		if s.Interface == "" {
			bad(path+".interface", "required (e.g. demo.Echo)")
		}
		if err := checkParams(s.Params, true); err != nil {
			bad(path+".params", "%v", err)
		}
		k := spi.ServiceKey(s.Params[spi.KeyGroup], s.Interface, s.Params[spi.KeyVersion])
		if j, dup := keys[k]; dup {
			bad(path, "service %q already exported by services[%d]", k, j)
		} else {
			keys[k] = i
		}
	}
	refs := map[string]int{}
	for i, r := range c.References {
		path := fmt.Sprintf("references[%d]", i)
		if r.Interface == "" {
			bad(path+".interface", "required (e.g. demo.Echo)")
		} else if j, dup := refs[r.Interface]; dup {
			// A reference is found by its interface alone
			// (ReferenceParams, ReferenceURL): a second entry, whatever
			// its group or version, would never apply.
			bad(path, "interface %q already has a reference, references[%d]: a reference applies by interface alone (group and version are among its params), so this entry would be ignored; merge the two entries into one", r.Interface, j)
		} else {
			refs[r.Interface] = i
		}
		if r.URL != "" {
			if err := checkReferenceURL(r); err != nil {
				bad(path+".url", "%v", err)
			}
		}
		if err := checkParams(r.Params, true); err != nil {
			bad(path+".params", "%v", err)
		}
	}

	names := map[string]int{}
	for i, p := range c.Plugins {
		path := fmt.Sprintf("plugins[%d]", i)
		if err := extension.ValidName(p.Name); err != nil {
			bad(path+".name", "%v", err)
		}
		if !slices.Contains(Points, p.Point) {
			bad(path+".point", "%q cannot be served by a plugin (want one of %s; transport, codec, heartbeat and cluster stay in process)%s", p.Point, strings.Join(Points, ", "), PointHint(p.Point))
		}
		if p.Command == "" {
			bad(path+".command", "required (path of the plugin binary)")
		}
		if p.SHA256 != "" && !isHex(p.SHA256, 64) {
			bad(path+".sha256", "%q is not 64 hexadecimal digits", p.SHA256)
		}
		if p.StartTimeout < 0 {
			bad(path+".start_timeout", "%v must be ≥ 0 (0 means %v)", p.StartTimeout, DefaultPluginStartTimeout)
		}
		switch p.Restart {
		case "", RestartAlways, RestartOnFailure, RestartNever:
		default:
			bad(path+".restart", "%q is not one of %s, %s, %s", p.Restart, RestartAlways, RestartOnFailure, RestartNever)
		}
		if p.Required && p.Point != extension.PointFilter && slices.Contains(Points, p.Point) {
			bad(path+".required", "true is allowed only with point: %s (a consumer then fails, rather than skips, a filter plugin that cannot start or is down), not with point: %s; remove the key",
				extension.PointFilter, p.Point)
		}
		k := p.Point + "/" + p.Name
		if j, dup := names[k]; dup {
			bad(path+".name", "%s %q already declared by plugins[%d]", p.Point, p.Name, j)
		} else {
			names[k] = i
		}
	}
	return errs
}

func checkListen(addr string) error {
	if addr == "" {
		return fmt.Errorf("required (host:port, e.g. %s)", DefaultListen)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		if h := BracketHint(addr); h != "" {
			return fmt.Errorf("%q is not host:port: %s", addr, h)
		}
		return fmt.Errorf("%q is not host:port: %v", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q of %q must be 0-65535", port, addr)
	}
	return nil
}

// BracketHint returns "IPv6 addresses need brackets: [::1]:20880" for an
// IPv6 host:port written without brackets ("::1:20880"), else "".
func BracketHint(addr string) string {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 || strings.HasPrefix(addr, "[") || !strings.Contains(addr[:i], ":") {
		return ""
	}
	return fmt.Sprintf("IPv6 addresses need brackets: [%s]:%s", addr[:i], addr[i+1:])
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// ExportURL returns the provider URL of s: "airnode://<listen>/<interface>"
// with "application" set to Config.Application (when set), then
// Config.Protocol's parameters, then the service's own, each winning
// over the ones before. The host is
// the listen host as written (empty for ":20880"); the node replaces it
// with the address it actually listens on.
func (c Config) ExportURL(s Service) (spi.URL, error) {
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return spi.URL{}, fmt.Errorf("config: listen: %q is not host:port: %w", c.Listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return spi.URL{}, fmt.Errorf("config: listen: port %q is not a number", port)
	}
	params := make(map[string]string, len(c.Protocol)+len(s.Params)+1)
	if c.Application != "" {
		params[keyApplication] = c.Application
	}
	for k, v := range c.Protocol {
		params[k] = v
	}
	for k, v := range s.Params {
		params[k] = v
	}
	return spi.NewURL("airnode", host, p, s.Interface, params)
}

// applyDefaults fills the per-item defaults a file cannot get from
// DefaultConfig (list items).
func (c *Config) applyDefaults() {
	if c.Protocol == nil {
		c.Protocol = map[string]string{}
	}
	if c.Consumer == nil {
		c.Consumer = map[string]string{}
	}
	for i := range c.Plugins {
		if c.Plugins[i].StartTimeout == 0 {
			c.Plugins[i].StartTimeout = DefaultPluginStartTimeout
		}
		if c.Plugins[i].Restart == "" {
			c.Plugins[i].Restart = RestartOnFailure
		}
	}
}

// ReferenceParams returns a copy of the URL parameters of the first
// reference whose Interface is iface ("demo.Echo"), or nil when no
// reference names it. Consumers (call, bench, list --explain) apply them
// as defaults: a parameter of the URL the user gives wins (ApplyReference).
func (c Config) ReferenceParams(iface string) map[string]string {
	for _, r := range c.References {
		if r.Interface == iface {
			return maps.Clone(r.Params)
		}
	}
	return nil
}

// ReferenceURL returns the providers named by the url of the first
// reference whose Interface is iface, parsed
// ("airnode://10.0.0.1:20880,10.0.0.2:20880/demo.Echo"), and whether
// there is one; false when no reference names iface, it has no url, or
// its url is invalid (Validate refuses that).
func (c Config) ReferenceURL(iface string) (spi.URL, bool) {
	for _, r := range c.References {
		if r.Interface != iface {
			continue
		}
		if r.URL == "" || checkReferenceURL(r) != nil {
			return spi.URL{}, false
		}
		return spi.MustParse(r.URL), true
	}
	return spi.URL{}, false
}

// ApplyReference returns u with the parameters of the reference of u's
// interface (ReferenceParams(u.Path())), then Consumer's for the keys the
// reference does not set either, added where u does not set them itself,
// and the names of the keys it added, sorted. When u names no
// host (a service key, "airnode:///demo.Echo") and the reference has a
// url, u gets that url's hosts (ReferenceURL), so that referring to it
// goes to those providers and bypasses the registry (kernel.Node.Refer
// refers a URL with hosts through the direct registry); a u naming its
// own hosts keeps them. Without a matching reference u is returned
// unchanged (ReferenceMisspelt says whether a reference's interface is a
// near miss of u's).
func (c Config) ApplyReference(u spi.URL) (spi.URL, []string) {
	if direct, ok := c.ReferenceURL(u.Path()); ok && u.Host() == "" {
		u = direct.WithScheme(u.Scheme()).WithPath(u.Path()).WithParams(u.Params())
	}
	add := map[string]string{}
	for k, v := range c.Consumer {
		if _, set := u.Param(k); !set {
			add[k] = v
		}
	}
	for k, v := range c.ReferenceParams(u.Path()) {
		if _, set := u.Param(k); !set {
			add[k] = v
		}
	}
	if len(add) == 0 {
		return u, nil
	}
	return u.WithParams(add), slices.Sorted(maps.Keys(add))
}

// ReferenceMisspelt returns, when c has no reference for interface iface
// but one whose interface is a near miss of it (internal/suggest's edit
// rule, not its Stem rule, since shop.OrderItems is likely another service
// than shop.Order: "shop.Invetory" for "shop.Inventory"), a warning naming both and the
// file key, e.g. `the configuration has a reference for shop.Invetory
// (references[0].interface) and none for shop.Inventory: its params are
// not applied; did you mean shop.Inventory there?`; else "". A consumer
// calls it beside ApplyReference, which then adds nothing, and logs the
// warning once per reference (call, bench and list --explain print it).
func (c Config) ReferenceMisspelt(iface string) string {
	names := make([]string, 0, len(c.References))
	for _, r := range c.References {
		if r.Interface == iface {
			return ""
		}
		names = append(names, r.Interface)
	}
	near := suggest.Closest(iface, names)
	if near == "" || !strings.EqualFold(near, iface) && suggest.Distance(near, iface) > suggest.MaxDistance(iface) {
		return "" // none, or only a longer or shorter name (suggest.Stem): shop.OrderItems is another service than shop.Order
	}
	return fmt.Sprintf("the configuration has a reference for %s (references[%d].interface) and none for %s: its params are not applied; did you mean %s there?",
		near, slices.Index(names, near), iface, iface)
}

// keyApplication is the URL key Config.Application sets
// (kernel.KeyApplication; config does not import kernel).
const keyApplication = "application"

// ApplyApplication returns u with "application" set to c.Application
// when c has one and u does not set the key itself (a consumer's URL:
// its -p, query or reference params win), else u unchanged.
func (c Config) ApplyApplication(u spi.URL) spi.URL {
	if c.Application == "" {
		return u
	}
	if _, set := u.Param(keyApplication); set {
		return u
	}
	return u.With(keyApplication, c.Application)
}

// ReferenceURLForm is the form a reference's url takes, for messages.
const ReferenceURLForm = "airnode://host:port[,host:port...][/interface], e.g. airnode://10.0.0.1:20880,10.0.0.2:20880/demo.Echo"

// checkReferenceURL checks r.URL: an airnode URL naming every provider as
// host:port, with no path but r.Interface and no parameters.
func checkReferenceURL(r Reference) error {
	if !strings.Contains(r.URL, "://") {
		return fmt.Errorf("%q is not a URL: want %s", r.URL, ReferenceURLForm)
	}
	u, err := spi.Parse(r.URL)
	if err != nil {
		return fmt.Errorf("%w; want %s", err, ReferenceURLForm)
	}
	if u.Scheme() != "airnode" {
		return fmt.Errorf("%q: scheme %q is not airnode (want %s; a registry goes under registry)", r.URL, u.Scheme(), ReferenceURLForm)
	}
	hosts := u.Hosts()
	if len(hosts) == 0 || hosts[0].Host == "" {
		return fmt.Errorf("%q names no provider (want %s)", r.URL, ReferenceURLForm)
	}
	for _, h := range hosts {
		if h.Host == "" || h.Port == 0 {
			return fmt.Errorf("%q: provider %q has no port (want %s)", r.URL, h.String(), ReferenceURLForm)
		}
	}
	if u.Path() != "" && u.Path() != r.Interface {
		return fmt.Errorf("%q names service %q, but the reference's interface is %q (leave the path out or make them the same)", r.URL, u.Path(), r.Interface)
	}
	if u.User() != "" {
		return fmt.Errorf("%q has user information, which airnode does not use (want %s)", r.URL, ReferenceURLForm)
	}
	if len(u.Params()) > 0 {
		return fmt.Errorf("%q has parameters (%s): put them under params (want %s)", r.URL, strings.Join(u.Keys(), ", "), ReferenceURLForm)
	}
	return nil
}

// CheckPluginNames checks that no plugin is named like an extension
// already in cat at its point (a bundled one, or one the program
// registered in process): a plugin may not shadow it, so it is refused
// before any plugin starts. Errors name the file (when file is not "")
// and the key, in Load's form: `config: plugins.yaml: key
// "plugins[0].name": plugin "random" may not shadow the bundled
// loadbalance "random": rename the plugin (say "acme.random"; ...)`. Service plugins are not catalogued and not checked.
func (c Config) CheckPluginNames(cat *extension.Catalogs, file string) error {
	var errs []error
	for i, p := range c.Plugins {
		var origin extension.Origin
		var taken bool
		switch p.Point {
		case extension.PointLoadBalance:
			origin, taken = cat.LoadBalance.Origin(p.Name)
		case extension.PointRegistry:
			origin, taken = cat.Registry.Origin(p.Name)
		case extension.PointFilter:
			origin, taken = cat.Filter.Origin(p.Name)
		}
		if !taken {
			continue
		}
		what := fmt.Sprintf("the bundled %s %q", p.Point, p.Name)
		if origin != extension.Bundled {
			what = fmt.Sprintf("the %s %q registered by %s", p.Point, p.Name, origin)
		}
		msg := fmt.Sprintf("plugin %q may not shadow %s: rename the plugin (say %q; URLs then select it by that name)",
			p.Name, what, "acme."+p.Name)
		key := fmt.Sprintf("plugins[%d].name", i)
		if file == "" {
			errs = append(errs, fmt.Errorf("config: %s: %s", key, msg))
		} else {
			errs = append(errs, fmt.Errorf("config: %s: key %q: %s", file, key, msg))
		}
	}
	return errors.Join(errs...)
}

// CheckReferences checks every reference against cat, the catalogs the
// node will use (bundled extensions and started plugins): each extension
// its params name must exist (an unknown name gets the catalog's
// did-you-mean) and build with them; so must Consumer's (CheckConsumer).
// Errors name the reference ("config: references[0].params: unknown
// loadbalance \"rundrobin\" ..."), the `consumer:` section ("config:
// consumer: unknown cluster \"failovr\" ...") or the variable that set the
// key ("config: environment AIRNODE_CONSUMER_CLUSTER: ...").
func (c Config) CheckReferences(cat *extension.Catalogs) error {
	var errs []error
	for i, r := range c.References {
		u, err := spi.NewURL("airnode", "", 0, r.Interface, r.Params)
		if err != nil {
			errs = append(errs, fmt.Errorf("config: references[%d].params: %w", i, err))
			continue
		}
		if _, err := cat.Explain(u, extension.ReferencedMethods(u)); err != nil {
			errs = append(errs, fmt.Errorf("config: references[%d].params: %w", i, err))
		}
	}
	if env, err := c.CheckConsumer(cat); err != nil {
		where := "consumer"
		if env != "" {
			where = "environment " + env
		}
		errs = append(errs, fmt.Errorf("config: %s: %w", where, err))
	}
	return errors.Join(errs...)
}

// CheckConsumer checks Consumer, the defaults of every reference, against
// cat as CheckReferences checks a reference's params: each extension it
// names (loadbalance, cluster, ...) must exist, an unknown name getting
// the catalog's did-you-mean, and build with them. env names the
// AIRNODE_CONSUMER_<KEY> variable that set the refused key (the key of a
// *spi.ParamError, the point of an *extension.UnknownError, else the key
// that chose the extension whose Build failed, such as a plugin that did
// not start), "" when the file's `consumer:` section did.
func (c Config) CheckConsumer(cat *extension.Catalogs) (env string, err error) {
	if len(c.Consumer) == 0 {
		return "", nil
	}
	u, err := spi.NewURL("airnode", "", 0, "", c.Consumer)
	var ex *extension.Explanation
	if err == nil {
		ex, err = cat.Explain(u, extension.ReferencedMethods(u))
	}
	if err == nil {
		return "", nil
	}
	var pe *spi.ParamError
	var ue *extension.UnknownError
	key := ""
	switch {
	case errors.As(err, &pe):
		key = pe.Key
	case errors.As(err, &ue):
		key = ue.Point
	case ex != nil:
		// an extension that is there but fails to build (a plugin that
		// failed to start): the key that chose it
		for _, ch := range ex.Points {
			if ch.Err != nil {
				key = ch.Source
				break
			}
		}
		for _, f := range ex.Filters {
			if key == "" && f.Err != nil {
				key = f.Source // "activated" is no key of Consumer
			}
		}
	}
	if name, isEnv := c.ConsumerSource(key); isEnv {
		env = name
	}
	return env, err
}
