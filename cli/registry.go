package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/directory"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/extensions/registry/direct"
	fileregistry "github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/groupversion"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// registryCommand returns `airnode registry` with its ls and watch
// subcommands.
func registryCommand(a *app) *cobra.Command {
	var registry string
	var asJSON, summary bool
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "Inspect a registry: list services and providers, watch changes",
	}
	cmd.PersistentFlags().StringVar(&registry, "registry", "", "registry URL "+registryDefaultHelp)
	// open builds the registry, after starting the configuration's plugins
	// (a registry plugin joins the catalogs as it does for call and serve);
	// done closes the registry, then the plugins. Warnings name cmd.
	open := func(ctx context.Context, cmd *cobra.Command) (reg spi.Registry, desc string, done func(), err error) {
		cat, err := a.Catalogs()
		if err != nil {
			return nil, "", nil, err
		}
		cfg, err := a.Config(nil)
		if err != nil {
			return nil, "", nil, err
		}
		if registry == "" {
			registry = cfg.Registry
		}
		quiet, err := newLogger(a.stderr, "warn", a.logFormat)
		if err != nil {
			return nil, "", nil, err
		}
		plugins, err := launchConsumerPlugins(ctx, cfg, a.configFile, cat, quiet, commandWarn(a.stderr, a.logFormat, commandPath(cmd)), pluginsNamed(cfg, registry), nil)
		if err != nil {
			return nil, "", nil, err
		}
		reg, desc, err = openRegistry(cat, registry)
		if err != nil {
			_ = plugins.Close()
			return nil, "", nil, err
		}
		if lu, ok := reg.(spi.LoggerUser); ok {
			lu.UseLogger(quiet) // its warnings (an invalid entry skipped) on stderr
		}
		return reg, desc, func() { _ = reg.Close(); _ = plugins.Close() }, nil
	}
	ls := &cobra.Command{
		Use:   "ls [SERVICE]",
		Short: "List services and their providers with weight, warm-up and uptime",
		Long: `ls prints every service with providers in the registry (or only SERVICE,
a service key such as "demo.Echo" or "group/demo.Echo:1.0"), and for each
provider its address, weight, warm-up progress (Dubbo's: the effective
weight grows linearly over "warmup" from the provider's "timestamp") and
uptime. A file registry directory named in the URL that does not exist
is an error (exit 1: a typo, or no node has registered there yet; ls
creates nothing); the default directory, not created yet, lists no
services. With a zookeeper registry that cannot be reached (ls waits its
connect.timeout, 5s by default) and a file.cache, the lists are the
cache's: a first line says so, naming ZooKeeper and how long it has been
unreachable, and each service gives its cached list's age; without a
cache, ls fails saying the same. Ctrl-C (SIGINT) ends ls at once, also
while it waits for ZooKeeper: exit 130 (SIGTERM 143), as for watch,
call and bench. A listing of several services ends with
a total line: services, provider entries (on how many addresses) and
consumer entries (those the references registered; the file and
zookeeper registries list them). --summary prints one line per service
(providers and consumers) instead of the provider tables: the view for a
registry of hundreds of services. Entries a file registry's consumers skip
(hand-written: not a URL, a scheme no transport serves such as http://,
no port, another service's URL, a directory) are shown as invalid
entries, with their path and why (--summary: a count, --json:
"invalid"), also for a service that has no other entry, and a service
whose providers directory cannot be read is skipped with a warning on
stderr. Entries that exist but cannot be read (another user's or group's:
a provider with a token writes its entry readable by its group only) are
counted on a first line, naming the first and why (--json: "unreadable");
when nothing else could be read, ls fails (exit 1) saying so instead of
listing no services. A direct:// registry has no service list (it names
its provider by address, for whatever service is asked): ls of it needs
SERVICE. A memory:// registry lives inside one process: ls of one lists
no services, whatever another process registered in its own.`,
		Args: argsRange(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && summary {
				return usage(errors.New("registry ls: --json and --summary both given: give one (--json prints every provider as JSON, --summary one text line per service)"))
			}
			if len(args) > 0 {
				if err := serviceNotURL("registry ls", args[0]); err != nil {
					return err
				}
			}
			// Ctrl-C ends ls at once, also while it waits for the
			// registry (a ZooKeeper session, up to its connect.timeout):
			// exit 130 (SIGTERM 143), as watch, call and bench do.
			sctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err := func() error {
				reg, desc, done, err := open(sctx, cmd)
				if err != nil {
					return err
				}
				defer done()
				if err := checkFileRegistryDir("registry ls", registry, a.registrySource(cmd.Flags().Changed("registry"))); err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(sctx, 10*time.Second)
				defer cancel()
				if !asJSON {
					return registryList(ctx, reg, desc, args, time.Now(), summary, a.stdout)
				}
				jw := &lsJSONWriter{}
				if err := registryList(ctx, reg, desc, args, time.Now(), false, jw); err != nil {
					return err
				}
				if jw.out == nil { // no service, or none fits
					jw.out = &lsJSON{Services: []lsServiceJS{}}
				}
				enc := jsonOutput(a.stdout)
				return enc.Encode(jw.out)
			}()
			if sig, ok := signalOf(sctx); ok {
				msg := "registry ls: interrupted by " + signalName(sig)
				errorLine(a.stderr, a.logFormat, "registry ls", "airnode: "+msg, msg)
				return &interruptedError{sig: sig, msg: msg}
			}
			return err
		},
	}
	ls.Flags().BoolVar(&asJSON, "json", false, `print one JSON object: {"services": [{"service", "providers": [{"address", "weight", "effective_weight", "warmup", "warmup_left_s", "uptime", "uptime_s", "started", "protocol", "url", "stale"}]}]}; weight and effective_weight (the weight it is picked with now, warming up) are numbers (null, with "problem", when the entry's weight is malformed), warmup and uptime the table's text, warmup_left_s (0: done or off) and uptime_s the same in seconds (null when the entry's timestamp or warmup is missing or malformed), started its start (RFC 3339); stale marks an older entry at a newer one's address, which consumers ignore; each service's "consumers" is the number of consumer entries, null when the registry does not list them`)
	ls.Flags().BoolVar(&summary, "summary", false, "one line per service, its provider and consumer counts, then the total line, instead of the provider tables")
	var watchJSON bool
	watch := &cobra.Command{
		Use:   "watch SERVICE",
		Short: "Print every change of a service's providers until interrupted",
		Long: `watch prints SERVICE's providers, then every provider that joins (+) or
leaves (-), until interrupted: Ctrl-C (SIGINT) exits 130 and SIGTERM 143,
as call and bench do, whether it was watching or still waiting for the
registry (a ZooKeeper session). The "watching ..." line goes to stderr,
the changes to stdout. A file registry directory named in the URL that
does not exist is an error (exit 1), as for ls: watch creates nothing.

--json prints one JSON object per line instead, for each provider that
joins, each that leaves, then the count after each change:
  {"time": "2025-06-01T18:09:38.692+02:00", "event": "added", "service": "demo.Echo", "url": "airnode://...", "providers": 2}
time is RFC 3339 with milliseconds and the zone; event is "added",
"removed" or "count" (a count event has no url); service is SERVICE's
key; providers is the number of providers after the change; url is the
provider's URL, its token masked.

With a ZooKeeper registry watch also says when ZooKeeper goes away and
comes back, so that a list kept meanwhile is not taken for a current one:
  {"time": "...", "event": "registry", "service": "demo.Echo", "state": "disconnected", "unheard_ms": 1200, "message": "registry disconnected ...", "providers": 2}
state is "disconnected" (the last list is kept; changes are not seen),
"expired" (nothing heard for session.timeout: a new session is opened) or
"connected" ("new_session": true when the old session had expired and
the list is read afresh). The text form prints the message after "!".

A count of 0 says which providers of the same interface the registry
lists under another group or version, as call's "no provider available"
does ("0 providers; left out: 127.0.0.1:20880 is in group g1, version
1.0 (watch g1/demo.Echo:1.0)"; "left_out" under --json).`,
		Args: argsRange(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := serviceNotURL("registry watch", args[0]); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			reg, desc, done, err := open(ctx, cmd)
			if err == nil {
				defer done()
				err = checkFileRegistryDir("registry watch", registry, a.registrySource(cmd.Flags().Changed("registry")))
				if err == nil {
					err = registryWatch(ctx, reg, desc, args[0], a.stdout, a.stderr, a.logFormat, watchJSON)
				}
			}
			// Ctrl-C is how watch ends, while it watches or still waits
			// for the registry (a ZooKeeper session): exit 130 (SIGTERM
			// 143) either way, as call and bench do.
			if sig, ok := signalOf(ctx); ok {
				msg := "registry watch: interrupted by " + signalName(sig)
				errorLine(a.stderr, a.logFormat, "registry watch", "airnode: "+msg, msg)
				return &interruptedError{sig: sig, msg: msg}
			}
			return err
		},
	}
	watch.Flags().BoolVar(&watchJSON, "json", false, `print one JSON object per line: {"time", "event": "added"|"removed"|"count"|"rule"|"registry", "service", "url", "path", "state", "new_session", "unheard_ms", "message", "providers", "left_out"} (see above)`)
	cmd.AddCommand(ls, watch)
	groupCommand(cmd)
	return cmd
}

// openRegistry builds the registry named by raw ("" is the default
// registry extension with its default location).
func openRegistry(cat *extension.Catalogs, raw string) (spi.Registry, string, error) {
	var u spi.URL
	if raw == "" {
		if u = defaultRegistry(cat); u.IsZero() {
			return nil, "", fmt.Errorf("no registry: give --registry")
		}
	} else {
		var err error
		if u, err = spi.Parse(raw); err != nil {
			return nil, "", fmt.Errorf("--registry: %w", err)
		}
	}
	b, err := cat.Registry.Get(u.Scheme())
	if err != nil {
		return nil, "", fmt.Errorf("registry %s: %w", u, err)
	}
	reg, err := b.Build(u)
	if err != nil {
		return nil, "", err
	}
	return reg, registryDesc(u), nil
}

// checkFileRegistryDir returns an error when raw, the registry URL ls
// was given, is a file registry naming a directory that does not exist,
// so that a typo (file:///tmp/my-reg for file:///tmp/myreg) is not read as
// an empty registry. The file registry creates its directory when a
// provider registers; ls only reads. Other registries, and the default
// file directory (file:// or none: a fresh machine), are not checked.
//
// command prefixes the error ("registry ls"); source says where raw came
// from, as registrySource returns it, for the question the error ends
// with: "(is --registry file:///tmp/x the directory serve uses?)".
// call, bench and watch check too (the file registry would create the
// directory when they subscribe, and ls would no longer report the typo);
// the Go API's consumers do create it, as one may start before its
// provider.
func checkFileRegistryDir(command, raw, source string) error {
	u, err := spi.Parse(raw)
	if err != nil || u.Scheme() != fileregistry.Name || u.Path() == "" {
		return nil
	}
	dir := filepath.Clean("/" + u.Path())
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: file registry directory %s does not exist: no node has registered there (is %s the directory serve uses?)", command, dir, fmt.Sprintf(source, u))
	case err != nil:
		return fmt.Errorf("%s: file registry directory %s: %w", command, dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%s: file registry directory %s is not a directory", command, dir)
	}
	return nil
}

// registrySource returns where the registry URL of a command came from, as
// a format for fmt.Sprintf with the URL: "--registry %s" when the flag was
// given (flagSet), else "AIRNODE_REGISTRY=%s" when that variable is set,
// else "registry %s (from CONFIG_FILE)" when the configuration file the
// last Config call read names one, else "--registry %s".
func (a *app) registrySource(flagSet bool) string {
	if flagSet {
		return "--registry %s"
	}
	for _, kv := range a.environ() {
		if v, ok := strings.CutPrefix(kv, "AIRNODE_REGISTRY="); ok && v != "" {
			return "AIRNODE_REGISTRY=%s"
		}
	}
	if a.configFile != "" {
		return "registry %s (from " + a.configFile + ")"
	}
	return "--registry %s"
}

// registryDesc describes registry URL u for messages and logs: its
// canonical form with any password masked, and for a file registry URL
// that names no directory the directory it resolves to, since that
// depends on the environment (XDG_RUNTIME_DIR, the user's cache
// directory) and processes started by sudo, ssh or systemd may not share
// it: "file:// (/run/user/1000/airnode/registry)".
func registryDesc(u spi.URL) string {
	desc := u.String()
	if pw := u.Password(); pw != "" {
		desc = strings.Replace(desc, ":"+url.QueryEscape(pw)+"@", ":***@", 1)
	}
	if isDefaultFileRegistry(u) {
		desc += " (" + fileregistry.DefaultDir() + ")"
	}
	return desc
}

// slashesUnescaped returns desc, a registry URL's registryDesc, with
// the slashes of its query unescaped, as they were written:
// "zookeeper://h:2181?root=/dubbo", not the canonical "?root=%2Fdubbo"
// (tester90 #3b). A slash needs no escaping in a query (RFC 3986), so the
// text still parses to the same URL.
func slashesUnescaped(desc string) string {
	base, query, ok := strings.Cut(desc, "?")
	if !ok {
		return desc
	}
	return base + "?" + strings.NewReplacer("%2F", "/", "%2f", "/").Replace(query)
}

// withRegistryDir returns u with the file registry's default directory
// made explicit (file:// -> file:///run/user/1000/airnode/registry), so
// that the messages the kernel builds from the URL ("no provider
// available for demo.Echo (registry: ...)") name the directory; any
// other URL is returned as is. Both forms open the same directory.
func withRegistryDir(u spi.URL) spi.URL {
	if !isDefaultFileRegistry(u) {
		return u
	}
	return u.WithPath(fileregistry.DefaultDir())
}

// showDefaultRegistry returns text, a message the kernel built from reg
// (a reference's "no provider available for demo.Echo (registry: ...)"),
// with the default file registry written as serve's serving line and
// registry ls write it, "file:// (/run/user/1000/airnode/registry)", when
// reg is that registry with its directory made explicit (withRegistryDir);
// any other text or registry is returned as is.
func showDefaultRegistry(text string, reg spi.URL) string {
	def, err := spi.Parse(fileregistry.Name + "://")
	if err != nil || reg.IsZero() || reg.String() != withRegistryDir(def).String() {
		return text
	}
	return strings.ReplaceAll(text, "(registry: "+reg.String()+")", "(registry: "+registryDesc(def)+")")
}

// withRegistryShown returns err with its text passed through
// showDefaultRegistry (errors.Is and As still see err), or err itself
// when that changes nothing.
func withRegistryShown(err error, reg spi.URL) error {
	if t := showDefaultRegistry(err.Error(), reg); t != err.Error() {
		return &registryShownError{err: err, text: t}
	}
	return err
}

// registryShownError is an error shown with another text (withRegistryShown).
type registryShownError struct {
	err  error
	text string
}

func (e *registryShownError) Error() string { return e.text }
func (e *registryShownError) Unwrap() error { return e.err }

// isDefaultFileRegistry reports whether u is a file registry URL that
// names no directory (file://, file://localhost).
func isDefaultFileRegistry(u spi.URL) bool {
	return u.Scheme() == fileregistry.Name && u.Path() == ""
}

// lsJSON is what registry ls --json prints: one object, services in the
// order the table lists them.
type lsJSON struct {
	// Note says the lists are a file.cache's (ZooKeeper unreachable);
	// empty otherwise.
	Note string `json:"note,omitempty"`
	// Unreadable counts the entries that exist but could not be read
	// (file registry: another user's or group's), which the lists leave
	// out; omitted when there are none.
	Unreadable *lsUnreadable `json:"unreadable,omitempty"`
	Services   []lsServiceJS `json:"services"`
}

// lsServiceJS is one service key of registry ls --json.
type lsServiceJS struct {
	Service   string       `json:"service"`
	Providers []lsProvider `json:"providers"`
	// Consumers is the number of consumer entries of the service; nil
	// (null) when the registry does not list them or listing failed.
	Consumers *int `json:"consumers"`
	// Invalid lists the entries of the service's providers that
	// consumers skip (file registry: not a URL, a scheme no transport
	// serves, no port, another service's URL, a directory; zookeeper: a
	// node name that is not a URL-encoded URL, another interface's URL;
	// any registry: a scheme no transport serves, no port); omitted when
	// there are none.
	Invalid []lsInvalid `json:"invalid,omitempty"`
	// Dubbo lists the service's providers that are Dubbo's own (a
	// dubbo:// URL, token redacted), which consumers skip;
	// omitted when there are none.
	Dubbo []string `json:"dubbo,omitempty"`
	// Rules are the Dubbo Admin rules of the service's interface, which
	// airnode does not apply (zookeeper: the Dubbo 2.6 configurators and
	// routers nodes that hold some, and the Dubbo 2.7/3 config center's
	// rules by path); omitted when there are none.
	Rules []string `json:"rules,omitempty"`
}

// lsProvider is one provider entry of registry ls --json: the table's
// columns, the entry's URL (token redacted), and Stale: an older entry
// with the protocol and address of a newer one, which consumers ignore
// (staleEntries). Weight is the entry's weight key as a JSON number
// (default 100), and EffectiveWeight the weight it is picked with now
// (warm-up: warmup.Effective; clamped as the balancers clamp it), both
// null when the entry's weight is malformed, which Problem then names
// (the weight key's error; omitted otherwise). Warmup and
// Uptime are the table's text ("weight 6 of 100 (6%), 28s left", "done",
// "off" for warmup=0, "none: weight 0, not picked", "-"; "28s", "3d4h5m"
// past a day); for scripts the same as numbers:
// UptimeSec (seconds since Started, negative when the provider's clock is
// ahead of this host's) and WarmupLeftSec (seconds of warm-up left, 0 when
// done, off or weight 0), null when the entry's timestamp, weight or warmup key is
// missing or malformed; Started is its timestamp key in RFC 3339 (omitted
// then).
type lsProvider struct {
	Address         string   `json:"address"`
	Weight          *int64   `json:"weight"`
	EffectiveWeight *int64   `json:"effective_weight"`
	Problem         string   `json:"problem,omitempty"`
	Warmup          string   `json:"warmup"`
	WarmupLeftSec   *float64 `json:"warmup_left_s"`
	Uptime          string   `json:"uptime"`
	UptimeSec       *float64 `json:"uptime_s"`
	Started         string   `json:"started,omitempty"`
	Protocol        string   `json:"protocol"`
	URL             string   `json:"url"`
	Stale           bool     `json:"stale"`
	// Disabled: the entry says enabled=false, and no consumer picks it
	// (EffectiveWeight 0); omitted otherwise.
	Disabled bool `json:"disabled,omitempty"`
}

// memoryHint follows registry ls's "no services in memory://...": a
// memory registry lives inside one process, so this command's is empty
// whatever other processes registered in theirs.
const memoryHint = "memory:// lives inside one process: this command has its own, empty, so another process's registrations (serve --registry memory://) are never seen here; share a registry between processes with file:// or zookeeper://"

// unlistableHint says, after registry ls's error for a registry that
// cannot list its services (spi.ErrNotSupported), what it can do
// instead: a direct:// registry has no service list, it names its
// provider by address for whatever service is asked, so ls and watch of
// one service work. "" for any other error.
func unlistableHint(desc string, err error) string {
	if !errors.Is(err, spi.ErrNotSupported) {
		return ""
	}
	if strings.HasPrefix(desc, direct.Name+"://") {
		return fmt.Sprintf(": %s:// has no service list, it names its provider by address for whatever service is asked: name one, as in `airnode registry ls --registry %s demo.Echo` (registry watch works the same way)", direct.Name, desc)
	}
	return fmt.Sprintf(": this registry cannot list its services: name one, as in `airnode registry ls --registry %s demo.Echo`", desc)
}

// registryList is registry ls, printing a table to w (with summary, one
// line per service) or, when w is an *lsJSONWriter (--json), leaving the
// listing in it (the text's notes are dropped; Note keeps the cache's).
func registryList(ctx context.Context, reg spi.Registry, desc string, args []string, now time.Time, summary bool, w io.Writer) error {
	var services []spi.URL
	if len(args) == 1 {
		u, err := parseServiceKey(args[0])
		if err != nil {
			return err
		}
		if directory.Multi(u) { // group=a,b or group=*: each service key the reference takes
			keys, err := directory.ServiceKeys(ctx, reg, desc, u)
			if err != nil {
				return fmt.Errorf("look up %s in %s: %w", args[0], desc, err)
			}
			if len(keys) == 0 {
				fmt.Fprintf(w, "%s: no service key of %s in %s fits\n", args[0], u.Interface(), desc)
				return nil
			}
			services = append(services, keys...)
		} else {
			services = append(services, u)
		}
	} else {
		keys, err := listedServices(ctx, reg)
		if err != nil {
			return fmt.Errorf("list services of %s: %w%s", desc, err, unlistableHint(desc, err))
		}
		for _, k := range keys {
			u, err := parseServiceKey(k)
			if err != nil {
				return err
			}
			services = append(services, u)
		}
		if len(services) == 0 {
			if n, first := unreadableIn(reg); n > 0 {
				return nothingReadError(desc, n, first)
			}
			fmt.Fprintf(w, "no services in %s\n", slashesUnescaped(desc))
			if strings.HasPrefix(desc, memory.Name+"://") {
				fmt.Fprintln(w, memoryHint)
			}
			if zr, ok := reg.(interface{ EmptyRootHint(context.Context) string }); ok {
				if hint := zr.EmptyRootHint(ctx); hint != "" {
					fmt.Fprintln(w, hint)
				}
			}
			return nil
		}
	}
	// Every list first, so that a note that ZooKeeper is unreachable and
	// the lists are file.cache's comes before them.
	cached, _ := reg.(cacheNoter)
	var note *zookeeper.CacheNote
	if cached != nil && len(args) == 0 {
		if n, ok := cached.FromCache(""); ok {
			note = &n
		}
	}
	lists := make([][]spi.URL, len(services))
	ages := make([]string, len(services))
	invalid := make([][]fileregistry.Invalid, len(services))
	dubbo := make([][]spi.URL, len(services)) // Dubbo's own providers (unservable)
	il, _ := reg.(invalidLister)
	wide, err := lookupByInterface(ctx, reg, desc, services)
	if err != nil {
		return err
	}
	for i, svc := range services {
		noteKey := svc.ServiceKey()
		if w, ok := wide[svc.Interface()]; ok && oneGroupVersion(svc) != "" {
			lists[i], noteKey = w.keys[oneGroupVersion(svc)], w.noteKey
			if lists[i] == nil {
				lists[i] = []spi.URL{}
			}
		} else {
			providers, err := reg.Lookup(ctx, svc)
			if err != nil {
				return fmt.Errorf("look up %s in %s: %w", svc.ServiceKey(), desc, err)
			}
			lists[i] = providers
		}
		if il != nil {
			invalid[i], _ = il.Invalid(ctx, svc) // an error is Lookup's, which passed
		}
		if zl, ok := reg.(zkInvalidLister); ok {
			ivs, _ := zl.Invalid(ctx, svc) // as the file registry's
			for _, iv := range ivs {
				invalid[i] = append(invalid[i], fileregistry.Invalid{Name: iv.Name, Path: iv.Path, Why: iv.Why})
			}
		}
		var unserved []fileregistry.Invalid
		lists[i], unserved, dubbo[i] = unservable(lists[i])
		invalid[i] = append(invalid[i], unserved...)
		if cached == nil {
			continue
		}
		if n, ok := cached.FromCache(noteKey); ok {
			if note == nil {
				note = &n
			}
			ages[i] = ", cached list saved at an unknown time"
			if !n.Saved.IsZero() {
				ages[i] = ", cached list saved " + now.Sub(n.Saved).Round(time.Second).String() + " ago"
			}
		}
	}
	consumers, consumersWhy := consumerCounts(ctx, reg, services)
	rr, _ := reg.(rulesReader)
	if summary || note != nil {
		rr = nil // the summary has no room for them; file.cache's lists: ZooKeeper is down
	}
	rulesText, rulesPaths := rulePaths(ctx, rr, services)
	nUnread, firstUnread := unreadableIn(reg)
	if nUnread > 0 && nothingListed(lists, invalid, dubbo) {
		return nothingReadError(desc, nUnread, firstUnread)
	}
	noteText := ""
	if note != nil {
		noteText = fmt.Sprintf("ZooKeeper %s unreachable for %v: lists from %s %s, which may be out of date",
			note.Servers, note.Unreachable.Round(100*time.Millisecond), zookeeper.KeyFileCache, note.Path)
		fmt.Fprintln(w, noteText)
	}
	var unread *lsUnreadable
	if nUnread > 0 {
		unread = &lsUnreadable{Count: nUnread, First: firstUnread.Path + ": " + firstUnread.Why}
		if _, ok := w.(*lsJSONWriter); !ok {
			fmt.Fprintf(w, "%s of %s could not be read and %s not listed (first: %s)\n",
				entries(nUnread), desc, map[bool]string{true: "is", false: "are"}[nUnread == 1], unread.First)
		}
	}
	if jw, ok := w.(*lsJSONWriter); ok {
		out := lsJSON{Note: noteText, Unreadable: unread, Services: []lsServiceJS{}}
		for i, svc := range services {
			stale := staleEntries(lists[i])
			s := lsServiceJS{Service: svc.ServiceKey(), Providers: []lsProvider{}}
			for j, p := range lists[i] {
				d := describeProvider(p, now)
				lp := lsProvider{Address: p.Address(), Warmup: d.warmup, Uptime: d.uptime,
					WarmupLeftSec: d.warmupLeft, UptimeSec: d.upSec,
					Protocol: p.Scheme(), URL: p.Redacted(), Stale: stale[j] == 's'}
				if !d.started.IsZero() {
					lp.Started = d.started.UTC().Format(time.RFC3339Nano)
				}
				if d.weightOK {
					lp.Weight, lp.EffectiveWeight = &d.weightN, &d.effective
				} else {
					lp.Problem = d.problem
				}
				if disabled(p) {
					lp.Disabled, lp.EffectiveWeight = true, new(int64) // not picked
				}
				s.Providers = append(s.Providers, lp)
			}
			if consumers != nil {
				s.Consumers = &consumers[i]
			}
			for _, iv := range invalid[i] {
				s.Invalid = append(s.Invalid, lsInvalid{Name: iv.Name, Path: iv.Path, Why: iv.Why})
			}
			for _, d := range dubbo[i] {
				s.Dubbo = append(s.Dubbo, d.Redacted())
			}
			s.Rules = rulesPaths[i]
			out.Services = append(out.Services, s)
		}
		jw.out = &out
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if summary {
		fmt.Fprintln(tw, "SERVICE\tPROVIDERS\tCONSUMERS")
	}
	for i, svc := range services {
		providers := lists[i]
		nOff := countDisabled(providers)
		if summary {
			n := strconv.Itoa(len(providers) - nOff)
			if st := strings.Count(string(staleEntries(providers)), "s"); st > 0 {
				n += fmt.Sprintf(" (%d stale)", st)
			}
			if nOff > 0 {
				n += fmt.Sprintf(" (%d disabled)", nOff)
			}
			if len(invalid[i]) > 0 {
				n += fmt.Sprintf(" (%d invalid)", len(invalid[i]))
			}
			if len(dubbo[i]) > 0 {
				n += fmt.Sprintf(" (%d Dubbo)", len(dubbo[i]))
			}
			c := "-"
			if consumers != nil {
				c = strconv.Itoa(consumers[i])
			}
			fmt.Fprintf(tw, "%s\t%s\t%s%s\n", svc.ServiceKey(), n, c, ages[i])
			continue
		}
		if i > 0 {
			fmt.Fprintln(tw)
		}
		stale := staleEntries(providers)
		nStale := ""
		if n := strings.Count(string(stale), "s"); n > 0 {
			nStale = fmt.Sprintf(", %d stale", n)
		}
		nInvalid := ""
		if len(invalid[i]) > 0 {
			nInvalid = ", 1 invalid entry"
			if n := len(invalid[i]); n > 1 {
				nInvalid = fmt.Sprintf(", %d invalid entries", n)
			}
		}
		nDisabled := ""
		if nOff > 0 {
			nDisabled = fmt.Sprintf(", %d disabled", nOff)
		}
		nDubbo := ""
		switch n := len(dubbo[i]); {
		case n == 1:
			nDubbo = ", 1 Dubbo provider (" + dubboProviderNote + ")"
		case n > 1:
			nDubbo = fmt.Sprintf(", %d Dubbo providers (%s)", n, dubboProviderNote)
		}
		fmt.Fprintf(tw, "%s\t(%s%s%s%s%s%s)\n", svc.ServiceKey(), providersCount(len(providers)-nOff), nStale, nDisabled, nInvalid, nDubbo, ages[i])
		for _, iv := range invalid[i] {
			fmt.Fprintf(tw, "  invalid entry %s (consumers skip it): %s\n", iv.Path, iv.Why)
		}
		for _, d := range dubbo[i] {
			fmt.Fprintf(tw, "  Dubbo provider %s (%s; consumers skip it)\n", d.Redacted(), dubboProviderNote)
		}
		if len(rulesText[i]) > 0 {
			fmt.Fprintf(tw, "  Dubbo Admin rules airnode does not apply (overrides, routes): %s\n", strings.Join(rulesText[i], ", "))
		}
		if len(providers) == 0 {
			if len(args) == 1 {
				if others := otherGroupsVersions(ctx, reg, svc); len(others) > 0 {
					fmt.Fprintf(tw, "  registered in another group or version: %s (ask for it by that key: registry ls %s)\n", strings.Join(others, ", "), others[0])
				} else if strings.HasPrefix(desc, "file:") && !anyProvider(ctx, reg) {
					// A consumer (call, bench) creates the directory it
					// watches, so a mistyped path exists after one call.
					fmt.Fprintf(tw, "  no provider of any service is registered in %s now: if one runs, is this the directory its serve uses (its 'serving' line names it)?\n", desc)
				}
			}
			continue
		}
		fmt.Fprintln(tw, "  ADDRESS\tWEIGHT\tWARM-UP\tUPTIME\tPROTOCOL")
		for j, p := range providers {
			s := describeProvider(p, now)
			note := ""
			if stale[j] == 's' {
				note = "  " + staleNote
			}
			if disabled(p) {
				s.warmup = "-" // not picked at any weight
				note += "  " + disabledNote
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s%s\n", p.Address(), s.weight, s.warmup, s.uptime, p.Scheme(), note)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(args) == 0 || len(services) > 1 || summary {
		if !summary {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, lsTotal(lists, consumers, consumersWhy))
	}
	return nil
}

// unreadableLister is a registry that reports the entries its reads
// found but could not read (the file registry: a token entry of another
// group, a service directory of another user), which its lists leave out.
type unreadableLister interface {
	Unreadable() []fileregistry.Invalid
}

// unreadableIn returns how many entries reg's reads so far could not
// read (unreadableLister), and the first of them by path; 0 when reg
// does not say.
func unreadableIn(reg spi.Registry) (int, fileregistry.Invalid) {
	ul, ok := reg.(unreadableLister)
	if !ok {
		return 0, fileregistry.Invalid{}
	}
	bad := ul.Unreadable()
	if len(bad) == 0 {
		return 0, fileregistry.Invalid{}
	}
	return len(bad), bad[0]
}

// nothingListed reports whether a listing holds no provider entry, no
// invalid entry and no Dubbo provider.
func nothingListed(lists [][]spi.URL, invalid [][]fileregistry.Invalid, dubbo [][]spi.URL) bool {
	for i := range lists {
		if len(lists[i]) > 0 || len(invalid[i]) > 0 || len(dubbo[i]) > 0 {
			return false
		}
	}
	return true
}

// nothingReadError is registry ls's error when the registry at desc
// holds n entries (first the first of them) that could not be read and
// nothing that could: listing no services would hide that the user may
// not read them.
func nothingReadError(desc string, n int, first fileregistry.Invalid) error {
	return fmt.Errorf("nothing could be read in %s: %s could not be read (first: %s: %s); list it as a user who may read the providers' entries (their user, or their group when the registry is shared)",
		desc, entries(n), first.Path, first.Why)
}

// entries is "1 entry" or "n entries".
func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return strconv.Itoa(n) + " entries"
}

// lsUnreadable is registry ls --json's count of the entries that could
// not be read, and the first of them (its path and the error).
type lsUnreadable struct {
	Count int    `json:"count"`
	First string `json:"first"`
}

// invalidServicer is a registry that also names the services whose
// providers directory holds only invalid entries (the file registry),
// which Services leaves out.
type invalidServicer interface {
	ServicesWithInvalid(ctx context.Context) (keys, invalidOnly []string, err error)
}

// listedServices returns the service keys registry ls lists: reg's
// Services and, from a registry that names them (invalidServicer), the
// services whose every provider entry is invalid, so that ls shows those
// entries without being asked for the service; sorted.
func listedServices(ctx context.Context, reg spi.Registry) ([]string, error) {
	is, ok := reg.(invalidServicer)
	if !ok {
		return reg.Services(ctx)
	}
	keys, invalidOnly, err := is.ServicesWithInvalid(ctx)
	if err != nil {
		return nil, err
	}
	keys = append(keys, invalidOnly...)
	sort.Strings(keys)
	return keys, nil
}

// invalidLister is a registry that lists the entries of a service's
// providers that its readers skip (the file registry: hand-written
// entries that are not a provider URL of that service).
type invalidLister interface {
	Invalid(ctx context.Context, consumer spi.URL) ([]fileregistry.Invalid, error)
}

// rulesReader is the zookeeper registry's Rules: where the Dubbo Admin
// rules of an interface are, which airnode does not apply.
type rulesReader interface {
	Rules(ctx context.Context, iface, app string) (zookeeper.RulesOf, error)
}

// rulePaths returns, read once per interface through rr (nil: none),
// the Dubbo Admin rules of each of services for registry ls: the Dubbo
// 2.6 rules nodes with their counts ("/dubbo/demo.Echo/configurators (1
// rule)") and the config center's rules by path, one list per service;
// an interface whose rules could not be read has none (its providers'
// read, which failed or not, says more).
func rulePaths(ctx context.Context, rr rulesReader, services []spi.URL) (text, paths [][]string) {
	text, paths = make([][]string, len(services)), make([][]string, len(services))
	if rr == nil {
		return text, paths
	}
	byIface := map[string]*zookeeper.RulesOf{}
	for i, svc := range services {
		r, ok := byIface[svc.Interface()]
		if !ok {
			if got, err := rr.Rules(ctx, svc.Interface(), ""); err == nil {
				r = &got
			}
			byIface[svc.Interface()] = r
		}
		if r == nil {
			continue
		}
		for _, n := range r.Legacy {
			text[i] = append(text[i], fmt.Sprintf("%s (%d %s)", n.Path, n.Rules, map[bool]string{true: "rule", false: "rules"}[n.Rules == 1]))
			paths[i] = append(paths[i], n.Path)
		}
		text[i] = append(text[i], r.ConfigCenter...)
		paths[i] = append(paths[i], r.ConfigCenter...)
	}
	return text, paths
}

// zkInvalidLister is the zookeeper registry's Invalid: the children of
// a providers node its Lookup leaves out (not a URL, another interface's).
type zkInvalidLister interface {
	Invalid(ctx context.Context, consumer spi.URL) ([]zookeeper.Invalid, error)
}

// unservable splits providers, as a registry's Lookup returned them, into
// those a consumer can call, Dubbo's own providers (a dubbo:// URL with
// a port: a Java provider in a shared tree, which every consumer
// skips, dubboProviderNote) and, as invalid entries (Path and Name the
// redacted URL), those of another scheme or with no port, which every
// consumer skips too ("speaks protocol http, not airnode"). The file
// registry never returns these (its Invalid has them); the zookeeper
// registry returns them, as Dubbo lists every protocol. The results are
// new slices: providers may be a registry's shared list.
func unservable(providers []spi.URL) (ok []spi.URL, bad []fileregistry.Invalid, dubbo []spi.URL) {
	ok = make([]spi.URL, 0, len(providers))
	for _, p := range providers {
		why := ""
		switch {
		case p.Port() <= 0:
			why = "no port (want host:port)"
		case p.Scheme() == "dubbo":
			dubbo = append(dubbo, p)
			continue
		case p.Scheme() != kernel.Protocol:
			why = fmt.Sprintf("scheme %q, which no transport serves (want %s://)", p.Scheme(), kernel.Protocol)
		}
		if why == "" {
			ok = append(ok, p)
			continue
		}
		bad = append(bad, fileregistry.Invalid{Name: p.Redacted(), Path: p.Redacted(), Why: why})
	}
	return ok, bad, dubbo
}

// dubboProviderNote is what registry ls says of a Dubbo provider's entry.
const dubboProviderNote = "dubbo:// protocol, not callable by airnode"

// disabled reports whether provider p says enabled=false (Dubbo's
// disabled provider), which no consumer picks (kernel/directory; a
// malformed value counts as enabled there too).
func disabled(p spi.URL) bool {
	on, err := p.Bool("enabled", true)
	return err == nil && !on
}

// countDisabled counts the disabled providers of a list.
func countDisabled(providers []spi.URL) int {
	n := 0
	for _, p := range providers {
		if disabled(p) {
			n++
		}
	}
	return n
}

// disabledNote marks a provider entry that says enabled=false.
const disabledNote = "(disabled: enabled=false in its URL; consumers do not pick it)"

// lsInvalid is an invalid entry of registry ls --json: its file name,
// path, and why consumers skip it.
type lsInvalid struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Why  string `json:"why"`
}

// consumerLister is a registry that lists the consumer entries of a
// service key (the file and zookeeper registries).
type consumerLister interface {
	Consumers(ctx context.Context, consumer spi.URL) ([]spi.URL, error)
}

// interfaceReader is a registry that keeps every group and version of an
// interface under one node (zookeeper: Dubbo's layout), so that its
// Lookup and Consumers of one service key read the entries of all of
// them. registry ls reads such a registry once per interface (Lookup with
// group and version "*", ConsumersOfInterface) and splits the entries by
// service key: read per key, n keys of one interface cost n reads of n
// entries each (nu43: 301 versions took 6 s of CPU).
type interfaceReader interface {
	ConsumersOfInterface(ctx context.Context, iface string) ([]spi.URL, error)
}

// interfaceProviders is one read of the providers of every group and
// version of an interface: by groupVersionOf, and the service key under
// which the registry notes an answer from its file.cache (cacheNoter).
type interfaceProviders struct {
	keys    map[string][]spi.URL
	noteKey string
}

// lookupByInterface reads, from an interfaceReader, the providers of each
// interface that more than one of services belongs to, once (the others
// are looked up by key, as from every other registry); nil for another
// registry. Each service's list is the entries of its group and version,
// in the registry's order: what its own Lookup returns.
func lookupByInterface(ctx context.Context, reg spi.Registry, desc string, services []spi.URL) (map[string]interfaceProviders, error) {
	if _, ok := reg.(interfaceReader); !ok {
		return nil, nil
	}
	perInterface := map[string]int{}
	for _, svc := range services {
		if oneGroupVersion(svc) != "" {
			perInterface[svc.Interface()]++
		}
	}
	out := map[string]interfaceProviders{}
	for _, svc := range services {
		iface := svc.Interface()
		if _, done := out[iface]; done || perInterface[iface] < 2 {
			continue
		}
		anyKey := spi.MustParse("airnode:///"+iface).With(spi.KeyGroup, "*").With(spi.KeyVersion, "*")
		all, err := reg.Lookup(ctx, anyKey)
		if err != nil {
			return nil, fmt.Errorf("look up %s (%d service keys) in %s: %w", iface, perInterface[iface], desc, err)
		}
		w := interfaceProviders{keys: map[string][]spi.URL{}, noteKey: anyKey.ServiceKey()}
		for _, p := range all {
			k := groupVersionOf(p)
			w.keys[k] = append(w.keys[k], p)
		}
		out[iface] = w
	}
	return out, nil
}

// groupVersionOf is provider u's group and version (absent: ""), the two
// values by which a consumer takes it (groupversion.Matcher.Match).
func groupVersionOf(u spi.URL) string {
	return u.ParamOr(spi.KeyGroup, "") + "\x00" + u.ParamOr(spi.KeyVersion, "")
}

// oneGroupVersion is, for a consumer svc that takes one group and one
// version, the groupVersionOf of the providers it takes; "" when it takes
// several or they are malformed (its own Lookup says so).
func oneGroupVersion(svc spi.URL) string {
	m, err := groupversion.ForConsumer(svc)
	if err != nil || m.Multi() {
		return ""
	}
	return m.Groups.Values()[0] + "\x00" + m.Versions.Values()[0]
}

// consumerCounts returns the number of consumer entries of each of
// services, or nil and why not: the registry does not list them, or a
// listing failed (ZooKeeper unreachable: file.cache keeps no consumers).
// An interfaceReader's consumers node is read once per interface.
func consumerCounts(ctx context.Context, reg spi.Registry, services []spi.URL) ([]int, string) {
	if ir, ok := reg.(interfaceReader); ok {
		counts := map[string]map[string]int{} // interface -> service key -> entries
		out := make([]int, len(services))
		for i, svc := range services {
			iface := svc.Interface()
			c, ok := counts[iface]
			if !ok {
				l, err := ir.ConsumersOfInterface(ctx, iface)
				if err != nil {
					return nil, err.Error()
				}
				c = map[string]int{}
				for _, u := range l {
					c[u.ServiceKey()]++
				}
				counts[iface] = c
			}
			out[i] = c[svc.ServiceKey()]
		}
		return out, ""
	}
	cl, ok := reg.(consumerLister)
	if !ok {
		return nil, "the registry does not list them"
	}
	out := make([]int, len(services))
	for i, svc := range services {
		l, err := cl.Consumers(ctx, svc)
		if err != nil {
			return nil, err.Error()
		}
		out[i] = len(l)
	}
	return out, ""
}

// lsTotal is the last line of a listing of several services: "3
// services, 5 providers (1 stale) on 2 addresses, 4 consumers"; with
// consumers nil, why they are not counted.
func lsTotal(lists [][]spi.URL, consumers []int, why string) string {
	entries, stale, off := 0, 0, 0
	addrs := map[string]bool{}
	for _, l := range lists {
		entries += len(l)
		stale += strings.Count(string(staleEntries(l)), "s")
		off += countDisabled(l)
		for _, p := range l {
			if !disabled(p) {
				addrs[p.Address()] = true
			}
		}
	}
	s := plural(len(lists), "service") + ", " + plural(entries-off, "provider")
	if stale > 0 {
		s += fmt.Sprintf(" (%d stale)", stale)
	}
	if off > 0 {
		s += fmt.Sprintf(" (%d disabled)", off)
	}
	s += " on " + plural(len(addrs), "address")
	if consumers == nil {
		return s + "; consumers not counted: " + why
	}
	n := 0
	for _, c := range consumers {
		n += c
	}
	return s + ", " + plural(n, "consumer")
}

// plural says "1 service" or "n services" ("address": "addresses").
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// lsJSONWriter stands for the output in registry ls --json: the text
// written to it is dropped, and the listing is left in out.
type lsJSONWriter struct{ out *lsJSON }

func (*lsJSONWriter) Write(b []byte) (int, error) { return len(b), nil }

// staleNote marks a provider entry that consumers ignore (staleEntries).
const staleNote = "(stale: same address as a newer entry; consumers ignore it)"

// staleEntries marks, for one service's providers, each entry consumers
// ignore with 's' (others '-'): of the entries with one protocol and
// address, kernel/directory keeps the one with the highest timestamp
// (directory.KeyTimestamp; absent or malformed is 0), on a tie the one it
// saw last (here: listed last). A provider killed and restarted on its
// port is listed twice until its old registry session expires: ls shows
// both, marking the old one, as consumers count it once.
func staleEntries(providers []spi.URL) []byte {
	marks := bytes.Repeat([]byte{'-'}, len(providers))
	best := map[string]int{} // protocol://address -> index of the newest entry
	for i, p := range providers {
		k := p.Scheme() + "://" + p.Address()
		j, ok := best[k]
		if !ok {
			best[k] = i
			continue
		}
		if entryTimestamp(p) >= entryTimestamp(providers[j]) {
			marks[j], best[k] = 's', i
		} else {
			marks[i] = 's'
		}
	}
	return marks
}

func entryTimestamp(u spi.URL) int64 {
	t, err := u.Int(directory.KeyTimestamp, 0)
	if err != nil {
		return 0
	}
	return t
}

// anyProvider reports whether reg lists a provider of any service; false
// when the listing fails.
func anyProvider(ctx context.Context, reg spi.Registry) bool {
	keys, err := reg.Services(ctx)
	if err != nil {
		return false
	}
	for _, k := range keys {
		u, err := parseServiceKey(k)
		if err != nil {
			continue
		}
		if ps, err := reg.Lookup(ctx, u); err == nil && len(ps) > 0 {
			return true
		}
	}
	return false
}

// otherGroupsVersions returns the service keys reg lists for svc's
// interface in another group or version (g/demo.Echo:1.0 for demo.Echo),
// sorted; none when the listing fails.
func otherGroupsVersions(ctx context.Context, reg spi.Registry, svc spi.URL) []string {
	keys, err := reg.Services(ctx)
	if err != nil {
		return nil
	}
	var others []string
	for _, k := range keys {
		u, err := parseServiceKey(k)
		if err == nil && u.Path() == svc.Path() && k != svc.ServiceKey() {
			others = append(others, k)
		}
	}
	sort.Strings(others)
	return others
}

// cacheNoter is the zookeeper registry's report that an answer came from
// its file.cache while ZooKeeper was unreachable.
type cacheNoter interface {
	FromCache(serviceKey string) (zookeeper.CacheNote, bool)
}

// providerState is what ls shows of one provider: the table's text, and
// for --json the configured weight (weightN; weightOK false when it is
// malformed) and the weight the provider is picked with now (effective:
// warmed up, weightN clamped as the balancers clamp it).
type providerState struct {
	weight, warmup, uptime string
	weightN, effective     int64
	weightOK               bool
	problem                string // why weightN is not known: the weight key's error

	started    time.Time // the provider's timestamp key; zero when absent or malformed
	upSec      *float64  // seconds since started (negative: its clock is ahead); nil when unknown
	warmupLeft *float64  // seconds of warm-up left (0: done or off); nil when unknown
}

// Defaults of the provider keys ls reads.
const (
	defaultWeight = 100
	defaultWarmup = 10 * time.Minute
)

// describeProvider computes weight, warm-up progress and uptime from the
// provider's weight, warmup and timestamp keys. The weight a provider
// warming up is picked with is warmup.Effective, the function the load
// balancers use (Dubbo's calculateWarmupWeight: weight * uptime / warmup,
// at least 1, reaching weight once warmup has passed); ls shows it with its
// share of the configured weight, "weight 1 of 100 (1%), 9m59s left",
// never "0%" for a provider that is picked (a share below 1% reads "<1%").
func describeProvider(p spi.URL, now time.Time) providerState {
	weight, err := p.Int("weight", defaultWeight)
	if err != nil {
		// consumers pick it with the default weight (warmup.Weigher, which
		// says so once at Warn): say it here too (tester74 #9)
		return providerState{weight: fmt.Sprintf("bad %s (consumers pick it as %d)", p.ParamOr("weight", ""), defaultWeight), warmup: "-", uptime: "-", problem: err.Error()}
	}
	st := providerState{weight: strconv.FormatInt(weight, 10), warmup: "-", uptime: "-",
		weightN: weight, effective: max(0, min(weight, warmup.MaxWeight)), weightOK: true}
	if wu, err := p.Duration("warmup", defaultWarmup); err == nil && wu <= 0 {
		// warmup=0: the provider never warms up (full weight from its
		// start), which "done" (finished warming) would hide
		st.warmup, st.warmupLeft = "off", seconds(0)
	}
	ts, err := p.Int("timestamp", 0)
	if err != nil || ts <= 0 {
		return st
	}
	st.started = time.UnixMilli(ts)
	up := now.Sub(st.started)
	st.upSec = seconds(up)
	st.uptime = longDuration(up)
	if up < 0 {
		st.uptime = "clock skew " + longDuration(-up)
	}
	wu, err := p.Duration("warmup", defaultWarmup)
	if err != nil {
		st.warmup = "bad " + p.ParamOr("warmup", "")
		return st
	}
	if up < 0 && wu > 0 && weight > 0 {
		// The balancers pick a provider whose clock is ahead of this
		// host's with weight 1 until its timestamp is in the past
		// (warmup.Effective; scenario W3): say so, not "-".
		st.effective = warmup.Effective(min(weight, warmup.MaxWeight), wu.Milliseconds(), up.Milliseconds())
		st.warmup = fmt.Sprintf("weight %d of %d: its clock is ahead of this host's", st.effective, weight)
		st.warmupLeft = warmupLeft(weight, wu, up) // its warm-up starts when its timestamp passes
		return st
	}
	if wu <= 0 {
		st.warmup, st.warmupLeft = "off", seconds(0)
		return st
	}
	if weight <= 0 {
		// taken out (weight 0): never picked, warming or not; "done"
		// would say its warm-up had passed (tester65 #6)
		st.warmup, st.warmupLeft = "none: weight 0, not picked", seconds(0)
		return st
	}
	if up >= wu {
		st.warmup, st.warmupLeft = "done", seconds(0)
		return st
	}
	st.warmupLeft = warmupLeft(weight, wu, up)
	weight = min(weight, warmup.MaxWeight) // as the balancers clamp it
	eff := warmup.Effective(weight, wu.Milliseconds(), up.Milliseconds())
	st.effective = eff
	share := strconv.FormatInt(eff*100/weight, 10) + "%"
	if eff*100 < weight {
		share = "<1%"
	}
	st.warmup = fmt.Sprintf("weight %d of %d (%s), %s left", eff, weight, share, (wu - up).Round(time.Second))
	return st
}

// longDuration is d to the second as Go writes it ("9m58s", "23h59m0s"),
// with days split off past a day, as an operator reads an uptime:
// "50d0h0m1s" for 1200h0m1s (tester65 #8). d >= 0.
func longDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d < 24*time.Hour {
		return d.String()
	}
	s := int64(d / time.Second)
	return fmt.Sprintf("%dd%dh%dm%ds", s/86400, s/3600%24, s/60%60, s%60)
}

// warmupLeft is warmup.Left in seconds (seconds): the warm-up left of a
// provider of weight and warm-up period wu, up since its timestamp, as
// the consumers' /stats and airnode_consumer_provider_warmup_remaining_seconds
// give it.
func warmupLeft(weight int64, wu, up time.Duration) *float64 {
	return seconds(time.Duration(warmup.Left(min(weight, warmup.MaxWeight), wu.Milliseconds(), up.Milliseconds())) * time.Millisecond)
}

// seconds returns d in seconds, to the millisecond, for registry ls --json.
func seconds(d time.Duration) *float64 {
	s := float64(d.Milliseconds()) / 1000
	return &s
}

// registryWatch subscribes to service in reg (desc names it) and prints
// each change of its provider list on w (one JSON object per line with
// asJSON) until ctx ends; the "watching ..." line goes to stderr, a JSON
// record of level INFO under logFormat "json".
func registryWatch(ctx context.Context, reg spi.Registry, desc, service string, w, stderr io.Writer, logFormat string, asJSON bool) error {
	u, err := parseServiceKey(service)
	if err != nil {
		return err
	}
	lists := make(chan []spi.URL, 16)
	rules := make(chan zookeeper.RuleChange, 16)
	if zr, ok := reg.(interface {
		OnRuleChange(func(zookeeper.RuleChange))
	}); ok {
		// Dubbo Admin rules written while watching (tester74 #6): the
		// registry's hook must not block; a full channel drops a change
		// (the registry's Warn still says it)
		zr.OnRuleChange(func(rc zookeeper.RuleChange) {
			select {
			case rules <- rc:
			default:
			}
		})
	}
	sessions := make(chan zookeeper.SessionChange, 16)
	if zr, ok := reg.(interface {
		OnSessionChange(func(zookeeper.SessionChange))
	}); ok {
		// ZooKeeper lost, expired, back (tester76 #3): without them a
		// script reading --json cannot tell "no change" from "a list
		// kept while ZooKeeper is away". A full channel drops one (the
		// registry's Warn still says it).
		zr.OnSessionChange(func(c zookeeper.SessionChange) {
			select {
			case sessions <- c:
			default:
			}
		})
	}
	sub, err := reg.Subscribe(ctx, u, func(l []spi.URL) {
		select {
		case lists <- l:
		case <-ctx.Done():
		}
	})
	if err != nil {
		return fmt.Errorf("watch %s in %s: %w", u.ServiceKey(), desc, err)
	}
	defer sub.Stop()
	watching := fmt.Sprintf("watching %s in %s (Ctrl-C to stop)", u.ServiceKey(), desc)
	stderrLine(stderr, logFormat, slog.LevelInfo, "registry watch", watching, watching)
	enc := json.NewEncoder(w) // one object per line
	enc.SetEscapeHTML(false)
	prev := map[string]string{} // provider URL -> as printed, token redacted
	for {
		select {
		case <-ctx.Done():
			return nil
		case sc := <-sessions:
			t := time.Now()
			msg := sessionChangeText(sc, len(prev))
			var err error
			if asJSON {
				err = enc.Encode(watchEvent{Time: t.Format(watchTime), Event: "registry", Service: u.ServiceKey(), State: sc.State,
					NewSession: sc.NewSession, UnheardMS: sc.Unheard.Milliseconds(), Message: msg, Providers: len(prev)})
			} else {
				_, err = fmt.Fprintf(w, "%s ! %s\n", t.Format("15:04:05.000"), msg)
			}
			if err != nil {
				return err
			}
		case rc := <-rules:
			t := time.Now()
			what := "written"
			if rc.Changed {
				what = "changed"
			}
			var err error
			if asJSON {
				err = enc.Encode(watchEvent{Time: t.Format(watchTime), Event: "rule", Service: u.ServiceKey(), URL: rc.Rule, Path: rc.Path, Providers: len(prev)})
			} else {
				_, err = fmt.Fprintf(w, "%s ! Dubbo Admin rule %s, not applied by airnode: %s (%s); take a provider out by stopping it or restarting it with weight=0\n",
					t.Format("15:04:05.000"), what, rc.Rule, rc.Path)
			}
			if err != nil {
				return err
			}
		case l := <-lists:
			t := time.Now()
			now := t.Format("15:04:05.000")
			ev := watchEvent{Time: t.Format(watchTime), Service: u.ServiceKey(), Providers: len(l)}
			print := func(event, sign, url string) error {
				if !asJSON {
					_, err := fmt.Fprintf(w, "%s %s %s\n", now, sign, url)
					return err
				}
				ev.Event, ev.URL = event, url
				return enc.Encode(ev)
			}
			cur := map[string]string{}
			for _, p := range l {
				cur[p.String()] = p.Redacted()
			}
			for _, p := range l {
				if _, ok := prev[p.String()]; !ok {
					if err := print("added", "+", p.Redacted()); err != nil {
						return err
					}
				}
			}
			var gone []string
			for s, printed := range prev {
				if _, ok := cur[s]; !ok {
					gone = append(gone, printed)
				}
			}
			sort.Strings(gone)
			for _, s := range gone {
				if err := print("removed", "-", s); err != nil {
					return err
				}
			}
			var err error
			var left []string
			if len(l) == 0 {
				// as call's "no provider available": providers of the
				// interface in another group or version (tester71 #12)
				left = leftOutElsewhere(ctx, reg, u)
			}
			if asJSON {
				ev.Event, ev.URL, ev.LeftOut = "count", "", left
				err = enc.Encode(ev)
				ev.LeftOut = nil
			} else {
				line := providersCount(len(l))
				if len(left) > 0 {
					line += "; left out: " + strings.Join(left, "; ")
				}
				_, err = fmt.Fprintf(w, "%s %s: %s\n", now, u.ServiceKey(), line)
			}
			if err != nil {
				return err
			}
			prev = cur
		}
	}
}

// watchTime is the time of registry watch --json: RFC 3339 with
// milliseconds and the zone.
const watchTime = "2006-01-02T15:04:05.000Z07:00"

// watchEvent is one line of registry watch --json.
type watchEvent struct {
	Time    string `json:"time"`
	Event   string `json:"event"` // added, removed, count, rule (a Dubbo Admin rule written or changed: URL is the rule, Path its node)
	Service string `json:"service"`
	URL     string `json:"url,omitempty"`  // the provider's, token masked; none for count
	Path    string `json:"path,omitempty"` // a rule's node (event rule)
	// State, NewSession, UnheardMS and Message: event registry, a change
	// of the registry's ZooKeeper session (zookeeper.SessionChange):
	// state "disconnected" (the list is kept), "expired" (a new session
	// is opened) or "connected" (new_session: the old one had expired);
	// unheard_ms, how long ZooKeeper had not been heard
	State      string `json:"state,omitempty"`
	NewSession bool   `json:"new_session,omitempty"`
	UnheardMS  int64  `json:"unheard_ms,omitempty"`
	Message    string `json:"message,omitempty"`
	Providers  int    `json:"providers"` // after the change (registry, rule: as listed)
	// LeftOut, in a count of 0, says which providers of the service's
	// interface the registry lists under another group or version, one
	// line each, as call's "no provider available" does; absent when none
	LeftOut []string `json:"left_out,omitempty"`
}

// sessionChangeText says c for registry watch, with n, the number of
// providers last listed.
func sessionChangeText(c zookeeper.SessionChange, n int) string {
	unheard := ""
	if c.Unheard > 0 {
		unheard = fmt.Sprintf(" (ZooKeeper not heard for %v)", c.Unheard.Round(time.Millisecond))
	}
	switch c.State {
	case zookeeper.SessionDisconnected:
		return fmt.Sprintf("registry disconnected%s: keeping the last list of %s until ZooKeeper is back; changes meanwhile are not seen", unheard, providersCount(n))
	case zookeeper.SessionExpired:
		return fmt.Sprintf("registry session expired%s: opening a new session; the list is read afresh once it is up", unheard)
	case zookeeper.SessionConnected:
		if c.NewSession {
			return fmt.Sprintf("registry connected with a new session%s: reading the list afresh", unheard)
		}
		return fmt.Sprintf("registry connected again%s: the list is current", unheard)
	}
	return "registry " + c.State
}

// leftOutElsewhere returns a line for each provider reg lists for u's
// interface under another service key (group or version): "127.0.0.1:N
// is in group g1, version 1.0 (watch g1/demo.Echo:1.0)", at most
// maxLeftOutKeys keys looked up, within leftOutTimeout; nothing when reg
// cannot list its services.
func leftOutElsewhere(ctx context.Context, reg spi.Registry, u spi.URL) []string {
	ctx, cancel := context.WithTimeout(ctx, leftOutTimeout)
	defer cancel()
	keys, err := reg.Services(ctx)
	if err != nil {
		return nil
	}
	var lines []string
	looked := 0
	for _, k := range keys {
		other, err := parseServiceKey(k)
		if err != nil || other.Interface() != u.Interface() || k == u.ServiceKey() {
			continue
		}
		if looked == maxLeftOutKeys {
			lines = append(lines, "and more in another group or version (registry ls)")
			break
		}
		looked++
		ps, err := reg.Lookup(ctx, other)
		if err != nil {
			continue
		}
		for _, p := range ps {
			lines = append(lines, fmt.Sprintf("%s is in %s, %s (watch %s)", p.Address(),
				namedValue(p, spi.KeyGroup, "group"), namedValue(p, spi.KeyVersion, "version"), k))
		}
	}
	return lines
}

// maxLeftOutKeys bounds the service keys leftOutElsewhere looks up.
const maxLeftOutKeys = 3

// leftOutTimeout bounds leftOutElsewhere's look-ups.
const leftOutTimeout = time.Second

// namedValue says u's value of key as "group g" or "no group".
func namedValue(u spi.URL, key, what string) string {
	if v := u.ParamOr(key, ""); v != "" {
		return what + " " + v
	}
	return "no " + what
}

// providersCount says "1 provider" or "n providers".
func providersCount(n int) string { return plural(n, "provider") }

// serviceNotURL refuses, as a usage error, a SERVICE argument of cmd that
// is a URL ("acme.cat://h:1"): ls and watch would look for a service of
// that name and list none (tester73 #8); the registry goes in --registry.
// A service key of the wrong form ("g/", "demo.Echo?x=%zz":
// parseServiceKey's errors) is a usage error too, as call's SERVICE_URL
// (tester87), found before the registry is opened.
func serviceNotURL(cmd, service string) error {
	if strings.Contains(service, "://") {
		return usage(fmt.Errorf("%s: %q is a URL, not a service key (demo.Echo, group/demo.Echo:1.0); the registry's URL goes in --registry", cmd, service))
	}
	if _, err := parseServiceKey(service); err != nil {
		return usage(fmt.Errorf("%s: %w", cmd, err))
	}
	return nil
}

// registryFlagRefusal returns err as a usage error (exit 2) when it is the
// refusal of raw, the registry URL that --registry gave on the command
// line, named as typed in the words of the other refused flags:
//
//	--registry /tmp/x: url: "/tmp/x" has no scheme (want scheme://host[:port]/path)
//	--registry zookeper://127.0.0.1:2181: unknown registry "zookeper" (available: ...); did you mean "zookeeper"?
//	--registry zookeeper://127.0.0.1:2181?sesion.timeout=1s: zookeeper registry: unknown URL key "sesion.timeout" (...)
//
// That is: raw does not parse (and err says so), its scheme is no
// registry extension's (an *extension.UnknownError of point registry), or
// the registry refuses a key of raw's query with raw's value (an
// *spi.KeyError or *spi.ParamError). Otherwise (an unreachable registry,
// a refusal of something else) nil: the caller reports err as before. The
// same URL from the configuration or AIRNODE_REGISTRY is not the command
// line's: callers pass only a flag that was given.
func registryFlagRefusal(raw string, err error) error {
	if raw == "" || err == nil {
		return nil
	}
	if _, ok := errors.AsType[*usageError](err); ok {
		return nil
	}
	by := "--registry " + raw
	u, perr := spi.Parse(raw)
	if perr != nil {
		if !strings.Contains(err.Error(), perr.Error()) {
			return nil
		}
		return usage(&keyRefusedError{msg: by + ": " + perr.Error(), err: err})
	}
	if ue, ok := errors.AsType[*extension.UnknownError](err); ok && ue.Point == "registry" && ue.Name == u.Scheme() {
		return usage(&keyRefusedError{msg: by + ": " + ue.Error(), err: err})
	}
	given := func(k, v string) bool {
		q, ok := u.Param(k)
		return ok && q == v
	}
	if ke, ok := errors.AsType[*spi.KeyError](err); ok {
		for i, k := range ke.Keys {
			if i < len(ke.Values) && given(k, ke.Values[i]) {
				return usage(&keyRefusedError{msg: by + ": " + ke.Error(), err: err})
			}
		}
	}
	if pe, ok := errors.AsType[*spi.ParamError](err); ok && given(pe.Key, pe.Value) && strings.Contains(err.Error(), "registry") {
		return usage(&keyRefusedError{msg: by + ": " + registryWords(err), err: err})
	}
	return nil
}

// registryWords returns the registry's own refusal within err, the
// innermost error of err's chain naming the registry ("zookeeper
// registry: invalid value ..."), without the layers the kernel and the
// command put before it ("kernel: registry URL: "), which name the URL
// that registryFlagRefusal names as the flag gave it: the words of a
// KeyError's refusal, which is the registry's message itself.
func registryWords(err error) string {
	words := err.Error()
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), "registry") {
			words = e.Error()
		}
	}
	return words
}

// commandRegistryRefusal is registryFlagRefusal for command c's
// --registry, when c has one and the command line gave it.
func commandRegistryRefusal(c *cobra.Command, err error) error {
	if c == nil {
		return nil
	}
	f := c.Flags().Lookup("registry")
	if f == nil || !f.Changed {
		return nil
	}
	return registryFlagRefusal(f.Value.String(), err)
}
