package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// envCheckConformance switches `airnode plugin check` into its child mode:
// run the conformance suites under package testing and exit.
const envCheckConformance = "AIRNODE_PLUGIN_CHECK_CONFORMANCE"

// pluginCommand returns `airnode plugin` (check).
func pluginCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Inspect plugin binaries",
	}
	cmd.AddCommand(pluginCheckCommand(a))
	groupCommand(cmd)
	return cmd
}

type checkFlags struct {
	registryURL string
	sha256      string
	timeout     time.Duration
	args        []string
	// filterParams ("KEY=VALUE"), filterAdds (attachment keys),
	// filterAttachments ("KEY=VALUE") and filterRespAdds (response
	// attachment keys) are the filter suite's spitest.FilterOptions
	// (--filter-param, --filter-adds-attachment, --filter-attachment,
	// --filter-adds-response-attachment)
	filterParams      []string
	filterAdds        []string
	filterAttachments []string
	filterRespAdds    []string
}

// filterOptions returns the filter suite's options from the flags: the
// URL keys its filter is built with, the attachments it may set and the
// ones the suite's calls carry. An entry of --filter-param or
// --filter-attachment without "=" is an error naming it.
func (f checkFlags) filterOptions() (o spitest.FilterOptions, err error) {
	if o.Params, err = keyValues("--filter-param", "a URL key the filter is built with (executes=100)", f.filterParams); err != nil {
		return o, err
	}
	if o.Attachments, err = keyValues("--filter-attachment", "an attachment the suite's calls carry (tenant=acme)", f.filterAttachments); err != nil {
		return o, err
	}
	o.AddsAttachments = f.filterAdds
	o.AddsResponseAttachments = f.filterRespAdds
	return o, nil
}

// keyValues parses the KEY=VALUE entries of flag (what: what one is, for
// the error), nil for none.
func keyValues(flag, what string, kvs []string) (map[string]string, error) {
	var m map[string]string
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%s %q: want KEY=VALUE, %s", flag, kv, what)
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = v
	}
	return m, nil
}

// pluginCheckCommand returns `airnode plugin check BINARY`.
func pluginCheckCommand(a *app) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check BINARY",
		Short: "Start a plugin binary, handshake, list what it provides, run its conformance suites, stop it",
		Long: `check starts BINARY as airnode would (go-plugin handshake, protocol
version negotiation, optional --sha256 check), lists every point it
provides and the URL keys it declares (spi.KeyDescriber; a malformed
declaration fails the start; a key that chooses an extension, or a kernel
key such as timeout declared with another type than the kernel's, fails
the check, and serve, call, bench, list and registry log the same text as
a warning when they start such a plugin, which they still run; a kernel key declared as the kernel reads it, such as a
balancer's weight, is noted; a service method without a leading
context.Context is warned about: it works but cannot see the call's
deadline, cancellation or attachments), runs the conformance suite of each (spitest: loadbalance always;
registry when --registry-url names registries that share one backend, e.g.
memory://; for a read-only registry, whose Register returns
spi.ErrNotSupported like static:///path, the read-only subset that needs
no change of its backend: Register refused, an unknown service looked up
and subscribed to is empty, the lifecycle; filter, against the plugin's
filter on each side it is active on, built with the URL keys
--filter-param KEY=VALUE gives (none by default; a filter activated by
a URL key is checked only when --filter-param gives that key, as the
kernel builds it only from URLs with it; every call carries the
attachments --filter-attachment KEY=VALUE gives, what a provider-side gate
requires of the calls it lets through, and on the provider side of a
filter active on both sides those of --filter-adds-attachment its consumer
side set, as a consumer sends them): with nothing to do it must call next
once with the invocation unchanged, but for the attachments
--filter-adds-attachment names, return next's result unchanged (its value
and error always; its response attachments but for the keys
--filter-adds-response-attachment names, which it may set, change or
remove, as a filter adding a header does), pass next's errors with their
status, and serve concurrent calls), then stops it. Exit 0 when
everything passed.`,
		Example: `  airnode plugin check ./bin/p2c
  airnode plugin check ./bin/staticregistry --registry-url static:///tmp/providers.txt
  airnode plugin check ./bin/tracer --filter-adds-attachment x-trace
  airnode plugin check ./bin/servedby --filter-adds-response-attachment x-served-by
  airnode plugin check ./bin/tenant --filter-param tenant=acme --filter-adds-attachment tenant
  airnode plugin check ./bin/authz --filter-param authz.key=k --filter-attachment x-auth=k`,
		Args: argsRange(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(args[0]) == "" {
				return usage(fmt.Errorf("plugin check: PATH %q: want the path of a plugin binary (./bin/p2c), not an empty argument", args[0]))
			}
			if f.timeout <= 0 {
				return usage(fmt.Errorf("plugin check: --start-timeout %v: want a positive duration such as 10s (the bound on launch and handshake)", f.timeout))
			}
			if f.sha256 != "" && !isHex64(f.sha256) {
				return usage(fmt.Errorf("plugin check: --sha256 %q: want the 64 hexadecimal digits of BINARY's SHA-256 (sha256sum BINARY)", f.sha256))
			}
			if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
				return fmt.Errorf("plugin check: PATH %q is a directory: want the path of a plugin binary (./bin/p2c)", args[0])
			}
			spec := config.Plugin{Command: args[0], Args: f.args, SHA256: f.sha256, StartTimeout: f.timeout}
			verbose := cmd.Flags().Changed("log-level")
			quiet, _ := newLogger(a.stderr, "warn", a.logFormat)
			if verbose {
				quiet = a.Logger()
			}
			if os.Getenv(envCheckConformance) == "1" {
				runConformance(spec, f, quiet) // exits
			}
			return runPluginCheck(cmd.Context(), a, spec, f, quiet, verbose)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.registryURL, "registry-url", "", "registry URL for the registry conformance suite (skipped when empty)")
	fl.StringVar(&f.sha256, "sha256", "", "expected hex SHA-256 of BINARY")
	fl.DurationVar(&f.timeout, "start-timeout", config.DefaultPluginStartTimeout, "bound on launch and handshake")
	fl.StringArrayVar(&f.args, "arg", nil, "argument passed to BINARY (repeatable)")
	fl.StringArrayVar(&f.filterParams, "filter-param", nil, "KEY=VALUE: a URL key the filter suite builds a filter plugin's filter with, so that it has nothing to do (executes=100; repeatable)")
	fl.StringArrayVar(&f.filterAdds, "filter-adds-attachment", nil, "an attachment key the filter plugin documents setting on each call (x-trace): the filter suite accepts it added or changed, and its provider side gets what its consumer side set (repeatable)")
	fl.StringArrayVar(&f.filterRespAdds, "filter-adds-response-attachment", nil, "a response attachment key the filter plugin documents setting, changing or removing on the result it returns (x-served-by): the filter suite accepts it and still compares the value, the error and the other response attachments (repeatable)")
	fl.StringArrayVar(&f.filterAttachments, "filter-attachment", nil, "KEY=VALUE: an attachment every call of the filter suite carries, as a caller's, so that a provider-side gate requiring it lets the call through (x-auth=k; repeatable)")
	return cmd
}

// runPluginCheck probes the binary, prints what it provides, then runs the
// conformance suites in a child airnode process (package testing exits the
// process it runs in).
func runPluginCheck(ctx context.Context, a *app, spec config.Plugin, f checkFlags, logger *slog.Logger, verbose bool) error {
	pr, err := pluginhost.NewProbe(ctx, spec, pluginhost.WithLogger(logger))
	if err != nil {
		return fmt.Errorf("plugin check: %w", err)
	}
	printProbe(a.stdout, pr)
	for _, w := range methodsWithoutContext(pr.Provides) {
		fmt.Fprintf(a.stdout, "warning   %s\n", w)
	}
	for _, w := range serviceWarnings(pr.Provides) {
		fmt.Fprintf(a.stdout, "warning   %s\n", w)
	}
	notes, err := kernelKeyClashes(pr.Provides)
	for _, n := range notes {
		fmt.Fprintf(a.stdout, "note      %s\n", n)
	}
	if err != nil {
		pr.Close()
		return fmt.Errorf("plugin check: %w", err)
	}
	fopts, err := f.filterOptions()
	if err != nil {
		pr.Close()
		return fmt.Errorf("plugin check: %w", err)
	}
	suites := conformanceSuites(pr, f)
	if fb := pr.Filter(); fb != nil {
		switch act := fb.Activation(); {
		case sidelessKey(fb.Name(), act) != "":
			fmt.Fprintf(a.stdout, "warning   %s; the filter suite runs it on both sides, where a filter key naming it puts it\n", sidelessKey(fb.Name(), act))
		case len(act.Sides) == 0:
			fmt.Fprintf(a.stdout, "note      filter %q is activated on no side (Activation.Sides is empty): only a URL whose filter key names it (filter=%s) uses it; the filter suite runs it on both sides, where that puts it\n", fb.Name(), fb.Name())
		}
	}
	if fb := pr.Filter(); fb != nil && !filterSuiteApplies(fb, fopts) {
		key := fb.Activation().Key
		fmt.Fprintf(a.stdout, "note      filter suite not run: filter %q is active only on URLs with key %q, which it is built from; give --filter-param %s=VALUE (a value with which it has nothing to do), --filter-adds-attachment KEY for each attachment it sets, and --filter-attachment KEY=VALUE for each one its provider side requires\n",
			fb.Name(), key, key)
	}
	registryWithoutURL := pr.Registry() != nil && f.registryURL == ""
	pr.Close()
	if len(suites) == 0 {
		if registryWithoutURL {
			fmt.Fprintln(a.stdout, "conformance  none run: a registry plugin's suite needs a registry URL to build it with (--registry-url URL)")
			return nil
		}
		fmt.Fprintln(a.stdout, "conformance  no suite applies")
		return nil
	}
	fmt.Fprintf(a.stdout, "conformance  %s\n", strings.Join(suites, ", "))
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("plugin check: %w", err)
	}
	argv := []string{"plugin", "check", spec.Command, "--start-timeout", spec.StartTimeout.String(), "--log-format", a.logFormat}
	if verbose {
		argv = append(argv, "--log-level", a.logLevel)
	}
	if f.registryURL != "" {
		argv = append(argv, "--registry-url", f.registryURL)
	}
	if f.sha256 != "" {
		argv = append(argv, "--sha256", f.sha256)
	}
	for _, x := range f.args {
		argv = append(argv, "--arg", x)
	}
	for _, x := range f.filterParams {
		argv = append(argv, "--filter-param", x)
	}
	for _, x := range f.filterAdds {
		argv = append(argv, "--filter-adds-attachment", x)
	}
	for _, x := range f.filterAttachments {
		argv = append(argv, "--filter-attachment", x)
	}
	for _, x := range f.filterRespAdds {
		argv = append(argv, "--filter-adds-response-attachment", x)
	}
	child := exec.CommandContext(ctx, self, argv...)
	child.Env = append(os.Environ(), envCheckConformance+"=1")
	child.Stdout, child.Stderr = a.stdout, a.stderr
	if err := child.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("plugin check: conformance failed (%v)", ee.ProcessState)
		}
		return fmt.Errorf("plugin check: conformance: %w", err)
	}
	fmt.Fprintln(a.stdout, "result       ok")
	return nil
}

func printProbe(w io.Writer, pr *pluginhost.Probe) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "binary\t%s\n", pr.Path)
	fmt.Fprintf(tw, "protocol\t%d\n", pr.ProtocolVersion)
	for i, d := range pr.Provides {
		label := "provides"
		if i > 0 {
			label = ""
		}
		what := d.Name
		if d.Point == pluginrpc.PointFilter {
			what += fmt.Sprintf(" (sides %v, key %q, order %d)", d.Activation.Sides, d.Activation.Key, d.Activation.Order)
		}
		if d.Point == pluginrpc.PointService {
			var s []string
			for _, svc := range d.Services {
				s = append(s, svc.Name+" ("+strings.Join(svc.Methods, ", ")+")")
			}
			what = strings.Join(s, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", label, d.Point, what)
	}
	// The URL keys the extension declares (spi.KeyDescriber), as
	// `airnode list --keys` will show them.
	for _, d := range pr.Provides {
		for i, k := range d.Keys {
			label := "keys"
			if i > 0 {
				label = ""
			}
			def := "default " + k.Default
			if k.Default == "" {
				def = "no fixed default"
			}
			fmt.Fprintf(tw, "%s\t%s (%s, %s): %s\n", label, k.Key, k.Type, def, k.Doc)
		}
	}
	tw.Flush()
}

// serviceWarnings returns what the sdk found wrong in the services of a
// service plugin (pluginrpc.ServiceDesc.Warnings): a method whose
// argument type only null fills (a chan, an io.Reader, a complex number,
// a map keyed by a struct) or whose result type no codec encodes, a
// variadic method, which the sdk skips, and pointer-receiver methods a
// value Impl leaves out, which are not served. Warnings, not failures:
// the other methods work (tester F18, tester71 #5).
func serviceWarnings(provides []pluginrpc.Description) []string {
	var out []string
	for _, d := range provides {
		for _, svc := range d.Services {
			out = append(out, svc.Warnings...)
		}
	}
	return out
}

// methodsWithoutContext returns one warning per service method of a
// service plugin that takes no leading context.Context (the sdk sends
// them: pluginrpc.ServiceDesc.WithoutContext). The sdk calls such a
// method, as the kernel calls one in process, but the method cannot see
// the call's deadline (the consumer's timeout), its cancellation when the
// consumer gives up or the provider shuts down, or its attachments
// (sdk.Attachments): it runs to its end whatever happens to the call. A
// warning, not a failure: the call works.
func methodsWithoutContext(provides []pluginrpc.Description) []string {
	var out []string
	for _, d := range provides {
		for _, svc := range d.Services {
			for _, m := range svc.WithoutContext {
				out = append(out, fmt.Sprintf("%s.%s takes no context.Context first: it cannot see the call's deadline, its cancellation or its attachments, and runs to its end after the consumer gave up; write func (T) %s(ctx context.Context, ...)",
					svc.Name, m, m))
			}
		}
	}
	return out
}

// kernelKinds maps config.KernelKeys' kinds to the spi.KeyDoc types that
// read a value the same way.
var kernelKinds = map[config.KeyKind]string{
	config.KindDuration: spi.KeyTypeDuration,
	config.KindInt:      spi.KeyTypeInt,
	config.KindSize:     spi.KeyTypeSize,
	config.KindIntList:  spi.KeyTypeIntList,
	config.KindBool:     spi.KeyTypeBool,
}

// kernelKeyClashes checks the URL keys an extension plugin declares
// against those the kernel reads itself (kernel.KernelKeys) and those
// that choose an extension (loadbalance, filter, ...: the bundled
// catalogs' point keys). A URL's value of such a key reaches the kernel
// and the plugin alike, so the error names every declaration that
// cannot mean the same: a point's selecting key, or a kernel key
// declared with another type than the kernel reads it with (timeout as
// an int: the kernel takes a duration). A kernel key declared with the
// kernel's type, or one the kernel has no type for (group, token...),
// is legitimate (a balancer reading the provider's weight, as
// shortestresponse does) and only noted: the returned notes say which
// keys the plugin shares with the kernel.
func kernelKeyClashes(provides []pluginrpc.Description) (notes []string, err error) {
	selects := map[string]string{} // key -> point
	if cat, cerr := bundledCatalogs(); cerr == nil {
		for _, p := range cat.Describe() {
			if p.Key != "" {
				selects[p.Key] = p.Name
			}
		}
	}
	specs := map[string]config.KeySpec{}
	for _, ks := range config.KernelKeys {
		specs[ks.Key] = ks
	}
	var errs []error
	for _, d := range provides {
		for _, k := range d.Keys {
			own := fmt.Sprintf("%q", d.Name+"."+k.Key)
			if point, ok := selects[k.Key]; ok {
				errs = append(errs, fmt.Errorf("%s %q declares URL key %q, which the kernel reads to choose the %s extension: declare a key of the plugin's own, such as %s",
					d.Point, d.Name, k.Key, point, own))
				continue
			}
			if !slices.Contains(kernel.KernelKeys(), k.Key) {
				continue
			}
			spec, typed := specs[k.Key]
			if typed && kernelKinds[spec.Kind] != k.Type {
				errs = append(errs, fmt.Errorf("%s %q declares URL key %q as %s, but the kernel reads %q itself (type %s: %s, default %s): one value would have to suit both; declare a key of the plugin's own, such as %s, or declare %s with type %s",
					d.Point, d.Name, k.Key, k.Type, k.Key, kernelKinds[spec.Kind], spec.Meaning, spec.Default, own, k.Key, kernelKinds[spec.Kind]))
				continue
			}
			what := "the kernel reads it too"
			if typed {
				what = fmt.Sprintf("the kernel reads it too (type %s: %s)", kernelKinds[spec.Kind], spec.Meaning)
			}
			notes = append(notes, fmt.Sprintf("key %q of %s %q is a kernel key: %s; a URL's %s= reaches both", k.Key, d.Point, d.Name, what, k.Key))
		}
	}
	return notes, errors.Join(errs...)
}

// conformanceSuites names the suites that apply to what pr provides.
func conformanceSuites(pr *pluginhost.Probe, f checkFlags) []string {
	var s []string
	if pr.LoadBalance(nil) != nil {
		s = append(s, "loadbalance")
	}
	if pr.Registry() != nil && f.registryURL != "" {
		s = append(s, "registry")
	}
	if fb := pr.Filter(); fb != nil {
		if o, err := f.filterOptions(); err == nil && filterSuiteApplies(fb, o) {
			s = append(s, "filter")
		}
	}
	return s
}

// filterSuiteApplies reports whether the filter suite runs for a filter
// plugin with options o: always, unless the filter is activated by a URL
// key (spi.Activation.Key: the kernel builds it only from URLs that have
// the key, like the tenant example's tenant=) that o.Params does not give,
// since the suite would build it from a URL the kernel never builds it
// from; --filter-param KEY=VALUE gives it.
func filterSuiteApplies(fb spi.FilterBuilder, o spitest.FilterOptions) bool {
	key := fb.Activation().Key
	_, given := o.Params[key]
	return key == "" || given
}

// runConformance runs the suites against a fresh probe of the binary under
// package testing, prints the verbose test log and exits with its status.
func runConformance(spec config.Plugin, f checkFlags, logger *slog.Logger) {
	testing.Init()
	_ = flag.Set("test.v", "true")
	_ = flag.Set("test.timeout", "5m")
	tests := []testing.InternalTest{{Name: "Conformance", F: func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), spec.StartTimeout+10*time.Second)
		defer cancel()
		pr, err := pluginhost.NewProbe(ctx, spec, pluginhost.WithLogger(logger))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pr.Close)
		if b := pr.LoadBalance(func(err error) { t.Errorf("plugin Select failed: %v", err) }); b != nil {
			t.Run("loadbalance", func(t *testing.T) { spitest.TestLoadBalance(t, b) })
		}
		if rb := pr.Registry(); rb != nil && f.registryURL != "" {
			u, err := spi.Parse(f.registryURL)
			if err != nil {
				t.Fatalf("--registry-url: %v", err)
			}
			build := func(t *testing.T) spi.Registry {
				r, err := rb.Build(u)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			t.Run("registry", func(t *testing.T) {
				if err := writable(rb, u); err != nil {
					t.Logf("registry %s is read-only (Register: %v): the full suite registers providers, so the read-only subset runs, without changing the backend (sdktest.TestReadOnlyRegistry with a publish function also checks lookups and pushes of changes)", u, err)
					spitest.TestReadOnlyRegistry(t, build, nil)
					return
				}
				spitest.TestRegistry(t, build)
			})
		}
		if fb := pr.Filter(); fb != nil {
			opts, err := f.filterOptions()
			if err != nil {
				t.Fatal(err)
			}
			if filterSuiteApplies(fb, opts) {
				t.Run("filter", func(t *testing.T) { spitest.TestFilter(t, fb, opts) })
			}
		}
	}}}
	testing.Main(func(string, string) (bool, error) { return true, nil }, tests, nil, nil)
}

// writable returns nil when a registry built from u accepts a provider
// registration, and the Register error wrapping spi.ErrNotSupported when
// it is read-only (like the staticregistry example); other failures return
// nil too, so the suite reports them.
func writable(rb spi.RegistryBuilder, u spi.URL) error {
	r, err := rb.Build(u)
	if err != nil {
		return nil
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := spi.MustParse("airnode://127.0.0.1:1/airnode.plugincheck.Probe?side=provider")
	if err := r.Register(ctx, p); errors.Is(err, spi.ErrNotSupported) {
		return err
	}
	_ = r.Unregister(ctx, p)
	return nil
}

// printPlugins writes the PLUGINS table of `airnode list`: one row per
// plugin declared in the configuration, with its binary, negotiated
// protocol version, the names the binary itself gives what it serves
// (namesInBinary) and state ("running", "restarting: reason",
// "failed: reason"). Nothing when there are none.
func printPlugins(w io.Writer, plugins []pluginhost.PluginInfo) {
	if len(plugins) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nPLUGIN\tPOINT\tBINARY\tPROTOCOL\tNAME IN BINARY\tSTATE\n")
	for _, p := range plugins {
		proto := "-"
		if p.ProtocolVersion > 0 {
			proto = fmt.Sprint(p.ProtocolVersion)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Point, p.Path, proto, namesInBinary(p), p.StateString())
	}
	tw.Flush()
}

// namesInBinary renders the NAME IN BINARY column of `airnode list`'s
// PLUGINS table (pluginhost.PluginInfo.Provides): for a balancer, registry
// or filter plugin, the name its extension gives itself (the builder's
// Name()), followed by "(differs: URLs use DECLARED)" when that is not
// the name the plugin is declared and selected by; for a service plugin,
// the services it serves. "-" until the plugin first ran.
func namesInBinary(p pluginhost.PluginInfo) string {
	switch {
	case len(p.Provides) == 0:
		return "-"
	case p.Point != pluginhost.PointService && p.Provides[0] != p.Name:
		return fmt.Sprintf("%s (differs: URLs use %s)", p.Provides[0], p.Name)
	}
	return strings.Join(p.Provides, ", ")
}

// isHex64 reports whether s is 64 hexadecimal digits, a SHA-256 in hex.
func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}
