package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// listCommand returns `airnode list [--keys | POINT [EXTENSION]]` and
// `airnode list --explain URL`.
func listCommand(a *app) *cobra.Command {
	var explain, provider, registry string
	var keys, asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--json | --keys | POINT [EXTENSION]] | list --explain URL [--provider PROVIDER_URL]",
		Short: "List extension points, extensions and their URL keys, or explain how a URL selects them",
		Long: `list prints every extension point with its URL key and default, and every
extension registered for it with where it comes from ("bundled", or the path
of the plugin binary that serves it), then the plugins the configuration
declares with their STATE: "running", "failed: REASON" for one that could
not start (a warning on stderr names it too; list still exits 0, and a
URL selecting it fails with REASON; but one declared under a point its
binary does not provide, a mistake in the file, makes list exit 1 once it
has printed everything, naming the plugin, its key, the point declared
and the one the binary implements, and is left out of that point's
extensions), or "checked: started once to check its point, then
stopped; serve runs it" for a service plugin (list, call, bench and
registry serve none: a service plugin is a provider's implementation,
which only serve runs; but list runs each once, stopping it at once, to
check that its binary provides point service, and shows the protocol and
the services that run gave: a balancer, registry or filter declared as
point: service fails list as above, and STATE ("not started: list
started it once to check its point, and it failed to start: REASON; ...")
and a warning on stderr say when the check could not be made: serve,
which runs it, would fail to start with it). --keys, POINT [EXTENSION] and
--explain check the plugins' points the same way: a plugin declared
under the wrong point is left out of the keys listed, and the command
exits 1 with the same error once it has printed the rest. list starts every other plugin;
call, bench and registry only the filter plugins and those their
command line, registry or the configuration's references name.

With --keys it prints instead the URL keys the kernel and each extension
read, one row per key: first the kernel's own keys (timeout, retries,
weight, dispatcher, heartbeat.*, ...) as the group "kernel", then each
extension's under it: key, type (duration: Go syntax or bare milliseconds;
size: bytes, 64KiB, 8MiB; int list: 0,2; hosts: h:p,h:p), default ("-":
none, set by the kernel, or derived from another key as MEANING says) and
meaning with unit and bounds; a kernel key's meaning opens with the side
that reads it (provider, consumer or both sides; node for the shutdown
keys, the node's, read from its exports, never from a reference).
"list POINT" does the same for one point ("airnode list loadbalance";
"airnode list kernel" for
the kernel's keys), "list POINT EXTENSION" for one extension ("airnode
list transport smux"). A plugin extension's keys are those its binary
declares (spi.KeyDescriber, sent at start); an extension whose KEY is "-"
reads no URL key of its own, or, from a plugin, declares none. The keys
that choose an extension (loadbalance=, transport=, ...) are in the plain
listing; the effective values of the kernel's keys in the KEYS section of
--explain, with their meanings below it.

With --explain URL it prints, for the service and for every method the URL
mentions (in methods= or in methods.<method>.<key> keys), which extension
each point resolves to and why: a method-level key, the service-level key,
the config, or the default. Method rows appear only for what the kernel
resolves per method (cluster, loadbalance, codec; timeout, retries,
hash.*, executes, actives); a method-level key of a point chosen per
connection, provider or service (transport, heartbeat, connect.timeout,
filter, ...) has no effect and gets a warning line on stderr. Then the
filter chain of each side, the dispatcher (adaptive, all or direct) and
the registry chosen by the registry URL (--registry, else the
configuration's or AIRNODE_REGISTRY's).

URL is explained as call and bench use it, the consumer's reference (the
config's reference of its interface gives defaults; a key URL sets beats
the reference's method-level forms of it too), and as serve exports
it, the provider URL (the config's protocol, then the service's params,
then URL's keys). Each point and key is read from the URL the kernel reads
it from: cluster, loadbalance, retries and hash.* from the consumer's
reference only (a provider's value is named as not used); the dispatcher,
executes and the provider filters from the provider URL; transport,
codec, heartbeat, timeouts and connection keys from the merged URL (the
provider's, with the consumer's keys winning). Every chosen extension is
built and the kernel's keys checked, so a value serve or call would refuse
fails here with the same error, naming the config file and key when the
file set it, and the command exits 1 (but a method-level form of a
per-address key, e.g. Echo.heartbeat, in a URL naming its provider's
address is a warning, as call gives it: serve refuses it). The KEYS section gives the
effective value of each kernel key and where it comes from; a key the
chosen heartbeat strategy, cluster or balancer does not read
(heartbeat.retries beside heartbeat=dual, retries beside
cluster=failfast, hash.nodes beside loadbalance=random) and a weight,
warmup or timestamp in URL (each provider sets its own) get a "(... is
not used: ...)" row under their own. Each key of URL that call warns
of when it refers to the service gets a warning in the same words, from
the kernel's one list of them (also a Dubbo key airnode does not
implement, a provider's dispatcher or connection.concurrency, a
misspelt key's "did you mean").

URL takes call's SERVICE_URL forms: a URL, or a service key alone
("demo.Echo", "group/demo.Echo:1.0?k=v") found in the registry. A URL
of the wrong form is a usage error (exit 2), as call's: also, without
--provider, a host without a port (airnode://127.0.0.1/demo.Echo: there
is no default port; give host:port, or no host for the registry). For a
service key the registry call would use (--registry, else the config's
or AIRNODE_REGISTRY's, else the default) is asked for the providers (at most 3 s): with any, the first one's URL
as published is the provider URL (as with --provider), the providers row
names them all with their transport, and a method-level key naming a
method the provider's methods= lacks gets a warning, as call gives;
without any, the provider URL is the one serve with this config would
publish, and the providers row says the calls depend on the providers. A direct
URL (airnode://host:port/service) never meets the provider's URL: the
consumer's providers are made from the URL itself, so transport, codec,
heartbeat, timeouts and connection keys come from it alone, and a
different value in the config's protocol is named as the provider's and
not used (only the dispatcher, executes and the provider filters are
read from the provider URL).

With --provider PROVIDER_URL, that URL is the provider URL instead (as a
registry lists it), and KEYS says for every key whether it came from the
consumer, the provider or the default.

With --json the plain listing is one JSON object on stdout instead:
  {"points": [{"name": "loadbalance", "key": "loadbalance", "default": "random",
     "extensions": [{"name": "random", "origin": "bundled", "default": true, "notes": "default"}, ...]}, ...],
   "plugins": [{"name": "acme.p2c", "point": "loadbalance", "binary": "/abs/bin/p2c",
     "protocol": 1, "provides": ["acme.p2c"], "state": "running", "reason": "", "pid": 4242, "restarts": 0}]}
points are sorted by name, extensions by name. A point's key is the URL
key that selects it ("" for registry: the registry URL's scheme does),
default its default extension ("" for filter: the activated set). An
extension's origin is "bundled", the plugin binary's path or an
in-process extension's Go package path; default is true for the point's
default; notes is the NOTES column; a filter has activation {"sides":
["consumer", "provider"], "key": "", "order": 100} (sides []: only when
listed in filter=; key: a URL key that must be present), left out for a
filter plugin that never ran. plugins ([] when the configuration declares
none) are the PLUGINS table: binary is the absolute path, protocol the
negotiated protocol version (0 before the handshake), provides the NAME
IN BINARY ([] until it ran), state one of running, failed, checked, not
started, starting, restarting, stopped, with reason saying why when not running
(a plugin that failed is still a warning on stderr, and list exits 0,
1 for a plugin declared under the wrong point, as above),
pid (0 when not running) and restarts. --json is not taken with --keys,
POINT or --explain.`,
		Example: `  airnode list
  airnode list --keys
  airnode list kernel
  airnode list loadbalance
  airnode list transport smux
  airnode list --explain 'airnode://127.0.0.1:20880/demo.Echo?loadbalance=roundrobin&methods.Echo.loadbalance=random'
  airnode list --explain demo.Echo
  airnode list --explain demo.Echo --registry zookeeper://127.0.0.1:2181`,
		Args: argsRange(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && (cmd.Flags().Changed("explain") || provider != "") {
				return usage(errors.New("list: give either POINT [EXTENSION] or --explain URL, not both"))
			}
			if provider != "" && !cmd.Flags().Changed("explain") {
				return usage(errors.New("list: --provider URL needs --explain URL: it is the provider the explained URL merges with"))
			}
			if asJSON && (keys || len(args) > 0 || cmd.Flags().Changed("explain")) {
				return usage(fmt.Errorf("list: --json prints the plain listing (points, extensions, plugins): not with --keys, POINT [EXTENSION] or --explain"))
			}
			if cmd.Flags().Changed("explain") {
				// a SERVICE_URL of the wrong form is a usage error, as
				// call's and bench's for the same argument (tester87):
				// found before the configuration and its plugins start
				if err := checkServiceURL(explain, provider == ""); err != nil {
					return usage(fmt.Errorf("list --explain: %w", errors.Unwrap(err)))
				}
				if provider != "" {
					if _, err := spi.Parse(provider); err != nil {
						return usage(fmt.Errorf("list --provider: %w", err))
					}
				}
			}
			cfg, err := a.Config(nil)
			if err != nil {
				return err
			}
			if registry != "" { // as call's and bench's: beats the configuration's and AIRNODE_REGISTRY
				cfg.Registry = registry
			}
			cat, err := a.Catalogs()
			if err != nil {
				return err
			}
			// Plugins declared in the config join the catalogs, so list
			// and --explain see exactly what serve and call would.
			quiet, err := newLogger(a.stderr, "warn", a.logFormat)
			if err != nil {
				return err
			}
			warn := commandWarn(a.stderr, a.logFormat, "list")
			plugins, err := launchConsumerPlugins(cmd.Context(), cfg, a.configFile, cat, quiet, warn, nil, nil)
			if err != nil {
				return err
			}
			defer plugins.Close()
			// Every form checks the plugins' points: a plugin declared
			// under a point its binary does not provide fails each of
			// them (exit 1, once it has printed everything).
			infos := checkPluginPoints(cmd.Context(), plugins, warn)
			wrong := errors.Join(wrongPoints(infos, cfg.Plugins, a.configFile),
				serviceClashes(plugins.CheckedServices(), cfg, a.configFile))
			if cmd.Flags().Changed("explain") {
				// whole, then without secrets: the report names the
				// registry URL in several rows (a digest password,
				// tester68 F3) and is what users paste into tickets
				var out bytes.Buffer
				err := runExplain(cmd.Context(), &out, cmd.ErrOrStderr(), a.logFormat, cat, cfg, registry != "", a.configFile, explain, provider)
				if _, werr := io.WriteString(cmd.OutOrStdout(), redactSecrets(out.String())); werr != nil && err == nil {
					err = werr
				}
				return errors.Join(err, wrong)
			}
			points := usablePoints(withKernelKeys(cat.Describe()), infos)
			if keys || len(args) > 0 {
				return errors.Join(printKeys(cmd.OutOrStdout(), points, args, cat.LoadBalance.MissHint()), wrong)
			}
			points = usablePoints(cat.Describe(), infos)
			if asJSON {
				if err := printListJSON(cmd.OutOrStdout(), cat, points, infos); err != nil {
					return err
				}
			} else {
				printList(cmd.OutOrStdout(), cat, points)
				printPlugins(cmd.OutOrStdout(), infos)
			}
			return wrong
		},
	}
	cmd.Flags().StringVar(&explain, "explain", "", "explain how URL (a SERVICE_URL as call takes it) selects an extension at every point, for the service and each method")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the listing (points, extensions, plugins with their state) as one JSON object; fields below")
	cmd.Flags().BoolVar(&keys, "keys", false, "print the URL keys the kernel reads and every extension declares (type, default, meaning) instead of the extension listing")
	cmd.Flags().StringVar(&provider, "provider", "", "with --explain: a provider URL to merge the explained (consumer) URL with")
	cmd.Flags().StringVar(&registry, "registry", "", `registry URL: --explain of a service key asks it for the providers, and the registry row names it (default: the configuration's or AIRNODE_REGISTRY's, else the "file" registry)`)
	return cmd
}

// printList writes one row per extension of points (cat.Describe(),
// usablePoints), points sorted by name and extensions by name; the
// point's URL key and default are on its first row.
func printList(w io.Writer, cat *extension.Catalogs, points []extension.PointInfo) {
	tw := newTable(w)
	fmt.Fprintf(tw, "POINT\tURL KEY\tDEFAULT\tEXTENSION\tORIGIN\tNOTES\n")
	for _, p := range points {
		key, def := p.Key, p.Default
		switch {
		case p.Name == extension.PointFilter:
			def = "(activated set)"
		case key == "":
			key = "(URL scheme)"
		}
		if len(p.Extensions) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t(none registered)\t\t\n", p.Name, key, def)
		}
		for i, e := range p.Extensions {
			name, k, d := p.Name, key, def
			if i > 0 {
				name, k, d = "", "", ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, k, d, e.Name, e.Origin, extensionNote(cat, p, e.Name))
		}
	}
	tw.Flush()
}

// kernelGroup is the name list --keys gives the kernel's own keys, in the
// POINT column, and that "list kernel" selects. It is no extension point.
const kernelGroup = "kernel"

// withKernelKeys returns points with the kernel's own keys
// (kernel.KernelKeyDocs) first, as the group kernelGroup with one
// extension named "-".
func withKernelKeys(points []extension.PointInfo) []extension.PointInfo {
	k := extension.PointInfo{Name: kernelGroup, Extensions: []extension.ExtensionInfo{{Name: "-", Origin: extension.Bundled, Keys: kernel.KernelKeyDocs()}}}
	return append([]extension.PointInfo{k}, points...)
}

// printKeys writes the URL keys every extension declares (its
// ExtensionInfo.Keys), one row per key under its extension, points sorted
// by name and extensions by name, after the kernel's own keys when points
// has them (withKernelKeys); args narrows it to one point (or "kernel")
// and optionally one of its extensions. An unknown point or extension is
// an error naming the available ones and a close match: a usage error for
// a point (the points are fixed), a failure for an extension (which the
// configuration's plugins may add), which carries missHint when the
// point is one a plugin may serve (Catalogs.SetMissHint).
func printKeys(w io.Writer, points []extension.PointInfo, args []string, missHint string) error {
	if len(args) > 0 {
		var names []string
		kernelKeys := false
		i := -1
		for j, p := range points {
			if p.Name == kernelGroup {
				kernelKeys = true
			} else {
				names = append(names, p.Name)
			}
			if p.Name == args[0] {
				i = j
			}
		}
		if i < 0 {
			avail := strings.Join(names, ", ")
			if kernelKeys {
				avail += ", and " + kernelGroup + " for the kernel's own keys"
				names = append(names, kernelGroup)
			}
			msg := fmt.Sprintf("list: unknown point %q (available: %s)", args[0], avail)
			if c := extension.Closest(args[0], names); c != "" {
				msg += fmt.Sprintf("; did you mean %q?", c)
			}
			return usage(errors.New(msg)) // the points are fixed: the command line names none (exit 2)
		}
		points = points[i : i+1]
	}
	if len(args) > 1 && points[0].Name == kernelGroup {
		return usage(fmt.Errorf("list: %s has no extensions: \"list %s\" lists the kernel's own keys", kernelGroup, kernelGroup))
	}
	if len(args) > 1 {
		p := points[0]
		var names []string
		i := -1
		for j, e := range p.Extensions {
			names = append(names, e.Name)
			if e.Name == args[1] {
				i = j
			}
		}
		if i < 0 {
			ue := &extension.UnknownError{Point: p.Name, Name: args[1], Available: names}
			if slices.Contains([]string{extension.PointLoadBalance, extension.PointRegistry, extension.PointFilter}, p.Name) {
				ue.Hint = missHint
			}
			return fmt.Errorf("list: %w", ue)
		}
		p.Extensions = p.Extensions[i : i+1]
		points = []extension.PointInfo{p}
	}
	tw := newTable(w)
	fmt.Fprintf(tw, "POINT\tEXTENSION\tKEY\tTYPE\tDEFAULT\tMEANING\n")
	for _, p := range points {
		point := p.Name
		if len(p.Extensions) == 0 {
			fmt.Fprintf(tw, "%s\t(none registered)\t\t\t\t\n", point)
		}
		for _, e := range p.Extensions {
			if len(e.Keys) == 0 {
				why := "no URL keys of its own"
				if e.Origin != extension.Bundled {
					why = "declares no URL keys"
				}
				fmt.Fprintf(tw, "%s\t%s\t-\t\t\t%s\n", point, e.Name, why)
				point = ""
				continue
			}
			name := e.Name
			for _, k := range e.Keys {
				typ, def := k.Type, k.Default
				if k.Type == spi.KeyTypeEnum {
					typ = strings.Join(k.Values, "|")
				}
				if def == "" {
					def = "-"
				}
				doc := k.Doc
				if k.FromProviders {
					doc += " (read from provider URLs: serve -p " + k.Key + "=...)"
				}
				if k.Secret {
					doc += " (secret: URLs in logs and output show ***)"
				}
				if k.ProviderLocal {
					doc += " (the provider's own: left out of the entry it publishes)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", point, name, k.Key, typ, readAs(k.Type, def), doc)
				point, name = "", ""
			}
		}
	}
	return tw.Flush()
}

// extensionNote is the NOTES column of extension name of point p: a
// filter's activation, a codec's wire id (the id a frame's flags carry,
// docs/wire.md: peers must agree on it), and "default" for the point's
// default.
func extensionNote(cat *extension.Catalogs, p extension.PointInfo, name string) string {
	if p.Name == extension.PointFilter {
		return activation(cat, name)
	}
	var notes []string
	if p.Name == extension.PointCodec {
		if c, err := cat.Codec.Get(name); err == nil {
			notes = append(notes, fmt.Sprintf("wire id %d", c.ID()))
		}
	}
	if name == p.Default {
		notes = append(notes, "default")
	}
	return strings.Join(notes, ", ")
}

// activation describes when filter name is switched on; for a filter
// plugin that never ran, that its activation is unknown and why.
func activation(cat *extension.Catalogs, name string) string {
	f, err := cat.Filter.Get(name)
	if err != nil {
		return ""
	}
	if nr, ok := f.(interface{ NotRunning() string }); ok { // a plugin that never ran (pluginhost)
		return "activation unknown: the plugin " + nr.NotRunning()
	}
	a := f.Activation()
	var sides []string
	for _, s := range a.Sides {
		sides = append(sides, string(s))
	}
	s := "activated on " + strings.Join(sides, ",")
	switch {
	case len(sides) == 0 && a.Key != "":
		// a key without a side activates nothing (sidelessKey)
		s = fmt.Sprintf("only when listed in filter= (key %q activates it on no side: its activation names none)", a.Key)
	case len(sides) == 0:
		s = "only when listed in filter="
	case a.Key != "":
		s += fmt.Sprintf(" when key %q is present", a.Key)
	}
	return s + fmt.Sprintf(", order %d", a.Order)
}

// unreported drops from check (config.CheckURL's joined *spi.ParamError)
// the keys an extension's Build error already reported, so each bad key is
// named once.
func unreported(check, reported error) error {
	if check == nil || reported == nil {
		return check
	}
	var out []error
	for _, err := range unjoin(check) {
		var pe *spi.ParamError
		if errors.As(err, &pe) && strings.Contains(reported.Error(), fmt.Sprintf("URL key %q", pe.Key)) {
			continue
		}
		out = append(out, err)
	}
	return errors.Join(out...)
}

// unjoin returns the errors errors.Join joined into err, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// table is a tabwriter whose Flush also drops the padding at line ends.
type table struct {
	*tabwriter.Writer
	buf strings.Builder
	out io.Writer
}

func newTable(w io.Writer) *table {
	t := &table{out: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 4, 2, ' ', 0)
	return t
}

// Flush writes the table to its writer.
func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(t.buf.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \n") + strings.Repeat("\n", strings.Count(l, "\n"))
	}
	t.buf.Reset()
	_, err := io.WriteString(t.out, strings.Join(lines, ""))
	return err
}

func scope(method string) string {
	if method == "" {
		return "service"
	}
	return "method " + method
}

func origin(o extension.Origin) string {
	if o == "" {
		return "(not registered)"
	}
	return string(o)
}

// why says in words why sel was chosen.
func why(u spi.URL, point string, sel extension.Selection) string {
	var s string
	switch {
	case sel.Source == extension.SourceDefault:
		s = fmt.Sprintf("default (no %s key)", point)
	case strings.HasPrefix(sel.Source, spi.KeyMethods+"."), sel.Source != point:
		v, _ := u.Param(sel.Source)
		s = fmt.Sprintf("method-level key %s=%s", sel.Source, v)
	default:
		v, _ := u.Param(sel.Source)
		s = fmt.Sprintf("service-level key %s=%s", sel.Source, v)
	}
	if sel.Note != "" {
		s += " (" + sel.Note + ")"
	}
	return s
}

// registryChoice resolves the registry of the node's configuration.
func registryChoice(cat *extension.Catalogs, cfg config.Config) extension.Choice {
	if cfg.Registry == "" {
		def := cat.Registry.Default()
		ch := extension.Choice{Point: extension.PointRegistry, Selection: extension.Selection{Name: def, Source: extension.SourceDefault}}
		ch.Origin, _ = cat.Registry.Origin(def)
		_, ch.Err = cat.Registry.Get(def)
		return ch
	}
	u, err := spi.Parse(cfg.Registry)
	if err != nil { // Validate already checked it; keep the error anyway
		return extension.Choice{Point: extension.PointRegistry, Err: err}
	}
	return cat.ExplainRegistry(u)
}

// registryWhy is the WHY of --explain's registry row: the default, or
// the scheme of cfg's registry, followed by where that came from when not
// from the file: "(--registry)" when list's --registry flag set it
// (flagged), "(env AIRNODE_REGISTRY)" for the variable.
func registryWhy(cfg config.Config, flagged bool) string {
	if cfg.Registry == "" {
		return "default (no registry configured)"
	}
	why := "scheme of the configured registry " + cfg.Registry
	switch src := cfg.SettingSource("registry"); {
	case flagged:
		why += " (--registry)"
	case strings.HasPrefix(src, "env "):
		why += " (" + src + ")"
	}
	return why
}

// wrongPoints is list's failure, after the listing, for each plugin
// declared under a point its binary does not provide
// (PluginInfo.ProvidedPoints), naming the plugin, its plugins.yaml key,
// the point declared and the ones the binary provides: a mistake in the
// file that no restart mends, as a plugin named like a bundled extension
// (config.CheckPluginNames), which fails list too. A plugin that failed
// to start otherwise (it exited, timed out) leaves list's status 0: its
// STATE column says why, and the cause may be of the moment.
func wrongPoints(infos []pluginhost.PluginInfo, specs []config.Plugin, file string) error {
	var errs []error
	for _, in := range infos {
		if len(in.ProvidedPoints) == 0 {
			continue
		}
		key := "plugins"
		if i := slices.IndexFunc(specs, func(p config.Plugin) bool { return p.Name == in.Name }); i >= 0 {
			key = fmt.Sprintf("plugins[%d].point", i)
		}
		if file != "" {
			key = fmt.Sprintf("%s: key %q", file, key)
		}
		errs = append(errs, fmt.Errorf("list: plugin %q is declared under point %s (%s), but its binary %s implements %s, not %s: declare it with point: %s",
			in.Name, in.Point, key, in.Path, strings.Join(in.ProvidedPoints, " and "), in.Point, strings.Join(in.ProvidedPoints, " or ")))
	}
	return errors.Join(errs...)
}

// serviceClashes is list's failure, after the listing, for the services
// of the service plugins list ran to check them (Host.CheckedServices) that
// serve refuses to start with: a service provided by two plugins (serve's
// impls), a plugin's demo.Echo beside the built-in one that no services
// entry assigns to it (planExports: exported twice on the address), and
// an airnode.Health without a method Check (the kernel's export refuses
// it: it would replace the health service with one every probe fails).
func serviceClashes(services []pluginhost.Service, cfg config.Config, file string) error {
	var errs []error
	where := orDefault(file, "the configuration")
	by := map[string]pluginhost.Service{}
	for _, ps := range services {
		if other, dup := by[ps.Name]; dup {
			errs = append(errs, fmt.Errorf("list: service %s is provided by two service plugins, %q and %q, and serve refuses to start: keep one of them in %s",
				ps.Name, other.Plugin, ps.Plugin, where))
			continue
		}
		by[ps.Name] = ps
	}
	if ps, ok := by[demo.Interface]; ok && cfg.Demo &&
		!slices.ContainsFunc(cfg.Services, func(s config.Service) bool { return s.Interface == demo.Interface }) {
		errs = append(errs, fmt.Errorf("list: service plugin %q provides %s, which serve exports built in too, and serve refuses to start (the service key is exported twice on its address): list %s under services in %s (it then replaces the built-in one), give it another group or version there, or set demo: false",
			ps.Plugin, demo.Interface, demo.Interface, where))
	}
	if ps, ok := by[kernel.HealthService]; ok && !slices.Contains(ps.Methods, kernel.HealthCheck) {
		errs = append(errs, fmt.Errorf("list: service plugin %q provides %s without a method %s (methods: %s), and serve refuses to export it: %s is the health service every provider address serves, which it would replace with one every probe fails against; rename the service or give it a method %s(service string) string",
			ps.Plugin, kernel.HealthService, kernel.HealthCheck, strings.Join(ps.Methods, ", "), kernel.HealthService, kernel.HealthCheck))
	}
	return errors.Join(errs...)
}

// checkPluginPoints runs each service plugin of host once to check its
// point, as a started plugin's is checked (pluginhost.Host.CheckPoints),
// warns (warn) of each that could not be run for the check (its
// binary is missing, it gave no handshake: serve, which runs it, fails
// to start with it), as a consumer command warns of a plugin that failed
// to start (warnFailedStarts), and returns host's plugins: each checked
// (pluginhost.StateChecked) with the protocol and services its run gave
// and a reason saying it was started once and stopped, each not started
// with a reason saying why list did not start it.
func checkPluginPoints(ctx context.Context, host *pluginhost.Host, warn warnFunc) []pluginhost.PluginInfo {
	unchecked := host.CheckPoints(ctx)
	infos := host.Plugins()
	for i := range infos {
		if infos[i].State == pluginhost.StateChecked {
			infos[i].Reason = "started once to check its point, then stopped; serve runs it"
			continue
		}
		if infos[i].State != pluginhost.StateNotStarted {
			continue
		}
		if err, ok := unchecked[infos[i].Name]; ok {
			warn("service plugin failed to start, so list could not check its point; serve, which runs it, fails to start with it",
				"plugin", infos[i].Name, "point", infos[i].Point, "err", err)
			// list did start it, once, for the check (tester66 F10)
			infos[i].Reason = "list started it once to check its point, and it failed to start: " +
				strings.TrimPrefix(infos[i].Reason, "its point could not be checked: ") + "; serve, which runs it, fails to start with it"
			continue
		}
		why := "list, like call, runs no service plugin; serve does"
		if infos[i].Reason != "" {
			why += "; " + infos[i].Reason
		}
		infos[i].Reason = why
	}
	return infos
}

// usablePoints returns points without the extensions of the plugins
// declared under a point their binary does not provide
// (PluginInfo.ProvidedPoints): the catalog holds one under its declared
// name, so that a URL selecting it fails saying why, but it is no
// extension of that point, and list names it in the PLUGINS table and in
// its error (wrongPoints) instead.
func usablePoints(points []extension.PointInfo, infos []pluginhost.PluginInfo) []extension.PointInfo {
	wrong := map[[2]string]string{} // point, name -> binary
	for _, in := range infos {
		if len(in.ProvidedPoints) > 0 {
			wrong[[2]string{in.Point, in.Name}] = in.Path
		}
	}
	if len(wrong) == 0 {
		return points
	}
	out := make([]extension.PointInfo, 0, len(points))
	for _, p := range points {
		p.Extensions = slices.DeleteFunc(slices.Clone(p.Extensions), func(e extension.ExtensionInfo) bool {
			path, ok := wrong[[2]string{p.Name, e.Name}]
			return ok && string(e.Origin) == path
		})
		out = append(out, p)
	}
	return out
}
