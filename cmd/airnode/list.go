package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// listCommand returns `airnode list [--explain URL]`.
func listCommand(a *app) *cobra.Command {
	var explain, provider string
	cmd := &cobra.Command{
		Use:   "list [--explain URL [--provider PROVIDER_URL]]",
		Short: "List extension points and extensions, or explain how a URL selects them",
		Long: `list prints every extension point with its URL key and default, and every
extension registered for it with where it comes from ("bundled", or the path
of the plugin binary that serves it).

With --explain URL it prints, for the service and for every method the URL
mentions (in methods= or in methods.<method>.<key> keys), which extension
each point resolves to and why: a method-level key, the service-level key,
or the default (the provider's dispatcher key too: adaptive, all or
direct, checked like an extension name); then the filter chain of each side and the registry chosen
by the configured registry URL. It also builds every chosen extension with
the URL and checks the kernel's own keys (timeout, retries, payload,
heartbeat.*, ...), so a misspelled name or a malformed value fails with an
error naming it, and the command exits 1. The KEYS section gives the
effective value of each kernel key and where it comes from.

With --provider PROVIDER_URL, URL is taken as the consumer's reference and
merged with the provider's URL the way the consumer does it (provider base,
consumer settings win except timestamp, weight, warmup, methods, group,
version and token; filter lists concatenated), and KEYS says for every
key whether it came from the consumer, the provider or the default.`,
		Example: `  airnode list
  airnode list --explain 'airnode://127.0.0.1:20880/demo.Echo?loadbalance=roundrobin&methods.Echo.loadbalance=random'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.Config(nil)
			if err != nil {
				return err
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
			plugins, err := launchPlugins(cmd.Context(), cfg, a.configFile, cat, quiet)
			if err != nil {
				return err
			}
			defer plugins.Close()
			if cmd.Flags().Changed("explain") {
				return runExplain(cmd.OutOrStdout(), cat, cfg, explain, provider)
			}
			if provider != "" {
				return fmt.Errorf("list: --provider needs --explain")
			}
			printList(cmd.OutOrStdout(), cat)
			if infos := plugins.Plugins(); len(infos) > 0 {
				printPlugins(cmd.OutOrStdout(), infos)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&explain, "explain", "", "explain how URL selects an extension at every point, for the service and each method")
	cmd.Flags().StringVar(&provider, "provider", "", "with --explain: a provider URL to merge the explained (consumer) URL with")
	return cmd
}

// printList writes one row per extension, points sorted by name and
// extensions by name; the point's URL key and default are on its first row.
func printList(w io.Writer, cat *extension.Catalogs) {
	tw := newTable(w)
	fmt.Fprintf(tw, "POINT\tURL KEY\tDEFAULT\tEXTENSION\tORIGIN\tNOTES\n")
	for _, p := range cat.Describe() {
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
			note := ""
			switch {
			case p.Name == extension.PointFilter:
				note = activation(cat, e.Name)
			case e.Name == p.Default:
				note = "default"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, k, d, e.Name, e.Origin, note)
		}
	}
	tw.Flush()
}

// activation describes when filter name is switched on.
func activation(cat *extension.Catalogs, name string) string {
	f, err := cat.Filter.Get(name)
	if err != nil {
		return ""
	}
	a := f.Activation()
	var sides []string
	for _, s := range a.Sides {
		sides = append(sides, string(s))
	}
	s := "activated on " + strings.Join(sides, ",")
	if len(sides) == 0 {
		s = "only when listed in filter="
	}
	if a.Key != "" {
		s += fmt.Sprintf(" when key %q is present", a.Key)
	}
	return s + fmt.Sprintf(", order %d", a.Order)
}

// runExplain prints how raw selects every point and returns every problem
// found: unknown names, Build errors, malformed kernel keys.
func runExplain(w io.Writer, cat *extension.Catalogs, cfg config.Config, raw, rawProvider string) error {
	u, err := spi.Parse(raw)
	if err != nil {
		return fmt.Errorf("list --explain: %w", err)
	}
	// The configuration's reference of this interface gives defaults; the
	// URL's own parameters win (as call and bench apply it).
	u, fromRef := cfg.ApplyReference(u)
	src := keySources{consumer: u, reference: fromRef}
	if rawProvider != "" {
		p, err := spi.Parse(rawProvider)
		if err != nil {
			return fmt.Errorf("list --provider: %w", err)
		}
		src.provider = &p
		u = spi.MergeURL(p, u)
	}
	methods := extension.ReferencedMethods(u)
	e, explainErr := cat.Explain(u, methods)

	tw := newTable(w)
	fmt.Fprintf(tw, "url\t%s\n", u)
	fmt.Fprintf(tw, "service\t%s\n", u.ServiceKey())
	if len(methods) > 0 {
		fmt.Fprintf(tw, "methods\t%s\n", strings.Join(methods, ", "))
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "POINT\tSCOPE\tEXTENSION\tORIGIN\tWHY\n")
	disp := explainDispatcher(u)
	for _, c := range e.Points {
		if disp != nil && c.Point > keyDispatcher { // in point order
			printDispatcher(tw, u, *disp, src)
			disp = nil
		}
		reason := why(u, c.Point, c.Selection)
		if slices.Contains(src.reference, c.Source) {
			reason += ", from the config's reference"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Point, scope(c.Method), c.Name, origin(c.Origin), reason)
	}
	if disp != nil {
		printDispatcher(tw, u, *disp, src)
	}
	reg := registryChoice(cat, cfg)
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", reg.Point, "node", reg.Name, origin(reg.Origin), registryWhy(cfg, reg))
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "FILTERS\tSCOPE\tCHAIN (outermost first)\tWHY\n")
	for _, f := range e.Filters {
		chain := strings.Join(f.Names, ", ")
		if chain == "" {
			chain = "(none)"
		}
		reason := "activated set"
		if f.Source != "activated" {
			v, _ := u.Param(f.Source)
			reason = fmt.Sprintf("key %s=%s edits the activated set", f.Source, v)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Side, scope(f.Method), chain, reason)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "KEYS\tSCOPE\tVALUE\tFROM\n")
	for _, spec := range config.KernelKeys {
		for _, m := range append([]string{""}, methods...) {
			v, key, ok := u.MethodParam(m, spec.Key)
			switch {
			case !ok && m == "":
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", spec.Key, scope(m), spec.Default, "default")
			case ok && (m == "" || key != spec.Key): // a method row only for a method-level key
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", spec.Key, scope(m), v, src.of(key))
			}
		}
	}
	tw.Flush()

	dispErr := explainDispatcher(u).Err
	return errors.Join(explainErr, dispErr, reg.Err, unreported(config.CheckURL(u), explainErr))
}

// keyDispatcher is the provider URL key that chooses where the provider
// runs requests (kernel/export.go keyDispatcher, Dubbo's "dispatcher").
const keyDispatcher = "dispatcher"

// dispatchers are the values of keyDispatcher, the default first.
var dispatchers = kernel.Dispatchers()

// explainDispatcher returns the choice of u's dispatcher key, as a point's
// choice: Origin "kernel" (the kernel's own values, not extensions), Err an
// *extension.UnknownError for a value the kernel does not accept.
func explainDispatcher(u spi.URL) *extension.Choice {
	c := &extension.Choice{Point: keyDispatcher, Selection: extension.Selection{Name: dispatchers[0], Source: extension.SourceDefault}, Origin: "kernel"}
	if v, ok := u.Param(keyDispatcher); ok {
		c.Name, c.Source = v, keyDispatcher
	}
	if !slices.Contains(dispatchers, c.Name) {
		c.Origin = ""
		c.Err = &extension.UnknownError{Point: keyDispatcher, Name: c.Name, Available: dispatchers}
	}
	return c
}

// printDispatcher prints the dispatcher row of the POINT table.
func printDispatcher(tw io.Writer, u spi.URL, c extension.Choice, src keySources) {
	reason := why(u, c.Point, c.Selection) + ", provider side"
	if slices.Contains(src.reference, c.Source) {
		reason += ", from the config's reference"
	}
	orig := "kernel"
	if c.Err != nil {
		orig = "(unknown value)"
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Point, scope(""), c.Name, orig, reason)
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

// keySources tells where a key of the explained URL comes from.
type keySources struct {
	consumer spi.URL
	provider *spi.URL // nil without --provider
	// reference lists the consumer keys taken from the configuration's
	// reference of the interface (config.ApplyReference).
	reference []string
}

// providerOwned are the keys spi.MergeURL always takes from the provider.
var providerOwned = []string{"timestamp", "weight", "warmup", spi.KeyMethods, spi.KeyGroup, spi.KeyVersion, "token"}

// of names the origin of key: "key K" for a single URL; with a provider,
// "consumer (K)", "provider (K)" or "provider+consumer (K)" for filters.
func (s keySources) of(key string) string {
	fromRef := slices.Contains(s.reference, key)
	if s.provider == nil {
		if fromRef {
			return "reference (" + key + ")"
		}
		return "key " + key
	}
	_, inC := s.consumer.Param(key)
	_, inP := s.provider.Param(key)
	switch {
	case key == spi.KeyFilter && inC && inP:
		return "provider+consumer (" + key + ")"
	case inP && (!inC || slices.Contains(providerOwned, key)):
		return "provider (" + key + ")"
	case fromRef:
		return "reference (" + key + ")"
	default:
		return "consumer (" + key + ")"
	}
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

func registryWhy(cfg config.Config, c extension.Choice) string {
	if cfg.Registry == "" {
		return "default (no registry configured)"
	}
	return "scheme of the configured registry " + cfg.Registry
}
