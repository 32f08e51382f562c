package config

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/spi"
	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
)

// EnvPrefix starts every environment variable Load reads.
const EnvPrefix = "AIRNODE_"

// delim separates koanf key paths. It is not "." so that dotted keys —
// URL keys such as "heartbeat.interval" under protocol or params, plugin
// environment names — are never split into nested maps.
const delim = "/"

// scalar is a node setting that the environment and flags can set.
type scalar struct {
	path string // koanf path, delim-separated
	env  string // environment variable
	flag string // flag name
	dflt string // the default, as a warning names it (EnvWarnings)
}

// scalars are the settings overridable by environment and flags. Anything
// else (services, references, plugins, protocol) comes from the file.
var scalars = []scalar{
	{"listen", "AIRNODE_LISTEN", "listen", DefaultListen},
	{"advertise", "AIRNODE_ADVERTISE", "advertise", "the address listened on"},
	{"application", "AIRNODE_APPLICATION", "application", "the executable's base name"},
	{"registry", "AIRNODE_REGISTRY", "registry", "the file registry"},
	{"shutdown/timeout", "AIRNODE_SHUTDOWN_TIMEOUT", "shutdown-timeout", DefaultShutdownTimeout.String()},
	{"shutdown/wait", "AIRNODE_SHUTDOWN_WAIT", "shutdown-wait", DefaultShutdownWait.String() + ", at most half of shutdown.timeout"},
	{"demo", "AIRNODE_DEMO", "demo", "true"},
}

// AddFlags defines the flags Load reads on fs: --listen, --advertise, --application, --registry,
// --shutdown-timeout, --shutdown-wait, --demo. Only flags the user sets override
// the file and environment; their defaults shown in --help are
// DefaultConfig's.
func AddFlags(fs *pflag.FlagSet) {
	d := DefaultConfig()
	fs.String("listen", d.Listen, "provider listen address host:port (env AIRNODE_LISTEN)")
	fs.String("advertise", d.Advertise, "address to publish in the registry instead of the listen address (NAT, port-forward, container, multi-homed host): HOST, HOST:PORT, [IPv6]:PORT, :PORT or an interface name such as eth1; a host alone keeps the listen port (config key advertise, env AIRNODE_ADVERTISE)")
	fs.String("application", d.Application, "application name in registry entries (Dubbo's application, by which Dubbo Admin groups services); default the executable's base name; a URL's application key wins (config key application, env AIRNODE_APPLICATION)")
	fs.String("registry", d.Registry, "registry URL, e.g. zookeeper://127.0.0.1:2181 (env AIRNODE_REGISTRY)")
	fs.Duration("shutdown-timeout", d.Shutdown.Timeout, "graceful shutdown budget (env AIRNODE_SHUTDOWN_TIMEOUT)")
	fs.Duration("shutdown-wait", d.Shutdown.Wait, "pause between unregistering and closing the listener; the default is cut to half of a shorter --shutdown-timeout (env AIRNODE_SHUTDOWN_WAIT)")
	fs.Bool("demo", d.Demo, "export the built-in demo.Echo test service; --demo=false leaves it out, as production should (config key demo, env AIRNODE_DEMO; true/false, yes/no, on/off, 1/0, t/f)")
}

// Source says where Load reads from. The zero value reads nothing but the
// defaults.
type Source struct {
	// File is the path of plugins.yaml; "" reads no file. A missing file
	// is an error.
	File string
	// Environ is the environment as "KEY=value" strings (os.Environ());
	// nil reads none. Only the variables of EnvNames and the URL-key
	// variables (EnvKey) are used; an empty value is ignored rather than
	// blanking the setting, and warned of (EnvWarnings).
	Environ []string
	// Flags is a flag set with AddFlags' flags (others are ignored); only
	// flags that were set override. nil reads none.
	Flags *pflag.FlagSet
	// Keys is the key catalog AIRNODE_CONSUMER_<KEY> and
	// AIRNODE_PROVIDER_<KEY> variables are mapped back through (EnvKey):
	// kernel.KnownKeys(cat) for the catalogs the program uses, so that
	// AIRNODE_CONSUMER_RETRY_TOKENS is failover's retry.tokens. nil: the
	// kernel's own keys and the points' selecting keys only
	// (extension.KernelKeys: timeout, retries, loadbalance, ...).
	Keys []string
	// Logger gets Load's warnings about AIRNODE_* variables it reads
	// nothing from (Config.UnknownEnv), and those of EnvWarnings (an
	// empty variable, a provider-set key); nil: slog.Default().
	Logger *slog.Logger
}

// Load builds a Config from DefaultConfig, then src.File, then the
// environment, then the flags, each overriding the ones before, decodes it
// strictly and validates it. Errors name the source of the bad value — the
// environment variable ("config: environment AIRNODE_LISTEN: ...") or the
// flag ("config: flag --listen: ...") that set it — or else the file and the
// key: an unknown
// key with the closest allowed one (`config: plugins.yaml: unknown key
// "shutdown.tiemout"; did you mean "shutdown.timeout"?`), a duration
// without a unit (`... "shutdown.timeout": 60000 needs a unit, e.g. 60s`),
// a value of the wrong type, a map where a URL key's value belongs
// (`key "protocol.heartbeat": want a value, got a map: write the URL key
// flat, "heartbeat.interval: 60s"`; nesting is not flattened, see
// nestedProblems), a YAML syntax error with the line it is on
// (`yaml: line 3: did not find expected key (line 3 is " wait: 1s")`) or a
// top level that is not a mapping (`yaml: line 1: the top level is a
// string, ...`), either followed by a note that the file is read as YAML
// and, for a .toml, .ini, .properties or .env file, that its format is
// not (formatNote), a file that cannot be read (`open plugins.yaml:
// permission denied`, without that note), or anything Validate rejects.
func Load(src Source) (Config, error) {
	k := koanf.NewWithConf(koanf.Conf{Delim: delim, StrictMerge: false})
	where := "defaults"
	if src.File != "" {
		where = src.File
		if _, err := os.Stat(src.File); err != nil {
			return Config{}, fmt.Errorf("config: %w", err)
		}
		if err := k.Load(file.Provider(src.File), yamlParser{}); err != nil {
			if _, read := errors.AsType[*fs.PathError](err); read { // not read (permission denied, a directory): no parse to explain
				return Config{}, fmt.Errorf("config: %s: %w", src.File, err)
			}
			return Config{}, fmt.Errorf("config: %s: %w%s", src.File, err, formatNote(src.File))
		}
	}
	// origin says where the value of each setting came from, by field
	// path ("shutdown.timeout"): the file, an environment variable or a
	// flag, so that an error names the source the user has to fix.
	origin := map[string]string{}
	for _, key := range k.Keys() {
		origin[strings.ReplaceAll(key, delim, ".")] = src.File
	}
	if src.Environ != nil {
		environ := src.Environ
		err := k.Load(env.Provider(delim, env.Opt{
			Prefix:      EnvPrefix,
			EnvironFunc: func() []string { return environ },
			TransformFunc: func(name, v string) (string, any) {
				for _, s := range scalars {
					if s.env == name && v != "" {
						origin[strings.ReplaceAll(s.path, delim, ".")] = "environment " + name
						return s.path, v
					}
				}
				return "", nil
			},
		}), nil)
		if err != nil {
			return Config{}, fmt.Errorf("config: environment: %w", err)
		}
	}
	if src.Flags != nil {
		err := k.Load(posflag.ProviderWithFlag(src.Flags, delim, nil, func(f *pflag.Flag) (string, any) {
			for _, s := range scalars {
				if s.flag == f.Name && f.Changed {
					origin[strings.ReplaceAll(s.path, delim, ".")] = "flag --" + f.Name
					return s.path, f.Value.String()
				}
			}
			return "", nil
		}), nil)
		if err != nil {
			return Config{}, fmt.Errorf("config: flags: %w", err)
		}
	}

	// First pass: collect unknown keys, so each is reported as a whole path.
	probe := DefaultConfig()
	var md mapstructure.Metadata
	_ = decode(k, &probe, &md)
	if len(md.Unused) > 0 {
		sort.Strings(md.Unused)
		var errs []error
		for _, u := range md.Unused {
			msg := fmt.Sprintf("config: %s: unknown key %q", where, u)
			if m, keys := caseOnly(u); m != "" {
				msg += fmt.Sprintf(": keys are lower case, as documented: %s; did you mean %q?", strings.Join(keys, ", "), m)
			} else if m := closestKey(u); m != "" {
				msg += fmt.Sprintf("; did you mean %q?", m)
			} else if keys := keysAt(u); len(keys) > 0 {
				at := "the top level"
				if i := strings.LastIndex(u, "."); i >= 0 {
					at = fmt.Sprintf("%q", u[:i])
				}
				msg += fmt.Sprintf(" (allowed at %s: %s)", at, strings.Join(keys, ", "))
				if key, ok := entryKey(u); ok {
					// version: 2.0.0 beside interface, as Dubbo's
					// <dubbo:service version=...> reads
					msg += fmt.Sprintf("; URL keys go under params: %q (params: {%s: ...})", u[:len(u)-len(key)]+"params."+key, key)
				}
			}
			errs = append(errs, errors.New(msg))
		}
		return Config{}, errors.Join(errs...)
	}
	nested := slices.Concat(listProblems(k.Raw()), nestedProblems(k.Raw()), pluginValueProblems(k.Raw()))
	// say reports msg about the setting at path, naming where its value
	// came from: "config: plugins.yaml: key "listen": ...", or, for an
	// environment variable or a flag (which name the setting themselves),
	// "config: environment AIRNODE_LISTEN: ...", "config: flag --listen: ...".
	say := func(path, msg string) error {
		for p := path; p != ""; {
			if o, ok := origin[p]; ok {
				if o == src.File {
					break
				}
				if flag, ok := strings.CutPrefix(o, "flag "); ok {
					return &FlagError{Flag: flag, Msg: msg}
				}
				return fmt.Errorf("config: %s: %s", o, msg)
			}
			i := strings.LastIndexAny(p, ".[")
			if i < 0 {
				break
			}
			p = p[:i]
		}
		if path == "" {
			return fmt.Errorf("config: %s: %s", where, msg)
		}
		return fmt.Errorf("config: %s: key %q: %s", where, path, msg)
	}
	if len(nested) > 0 {
		var errs []error
		for _, p := range nested {
			errs = append(errs, say(p.path, p.msg))
		}
		return Config{}, errors.Join(errs...)
	}
	c := DefaultConfig()
	if err := decode(k, &c, nil); err != nil {
		var errs []error
		for _, p := range decodeProblems(err) {
			errs = append(errs, say(p.path, p.msg))
		}
		return Config{}, errors.Join(errs...)
	}
	c.applyDefaults()
	if src.File != "" {
		c.dropFileSetKeys(src.File) // before the checks: a value that is dropped is not refused
	}
	if _, given := origin["shutdown.wait"]; !given && c.Shutdown.Timeout > 0 && c.Shutdown.Wait > c.Shutdown.Timeout/2 {
		// The default wait (2s) is cut to half of a shorter budget: with
		// --shutdown-timeout 1s alone, serve refused the wait nobody gave
		// (tester75 #1); half is left for the drain.
		c.Shutdown.Wait = c.Shutdown.Timeout / 2
	}
	if src.File != "" {
		if err := shutdownTwice(c, origin, src.File); err != nil {
			return Config{}, err
		}
	}
	// the sources first: a problem may name where a bound came from (nil
	// when no source gave anything: Load is then DefaultConfig)
	for path, o := range origin {
		if name, ok := strings.CutPrefix(o, "environment "); ok {
			o = "env " + name
		}
		if c.origin == nil {
			c.origin = map[string]string{}
		}
		c.origin[path] = o
	}
	if ps := c.problems(); len(ps) > 0 {
		var errs []error
		for _, p := range ps {
			errs = append(errs, say(p.path, p.msg))
		}
		return Config{}, errors.Join(errs...)
	}
	if src.Environ != nil {
		if err := c.applyEnvKeys(src.Environ, src.Keys); err != nil {
			return Config{}, err
		}
		var hints []string
		c.UnknownEnv, hints = UnknownEnv(src.Environ, src.Keys, nil)
		logger := src.Logger
		if logger == nil {
			logger = slog.Default()
		}
		warnUnknownEnv(logger, c.UnknownEnv, hints)
		for _, w := range EnvWarnings(src.Environ, src.Keys) {
			logger.Warn(w, "component", logComponent)
		}
	}
	if len(c.ignored) > 0 {
		logger := src.Logger
		if logger == nil {
			logger = slog.Default()
		}
		for _, w := range c.ignored {
			logger.Warn(w, "component", logComponent)
		}
	}
	return c, nil
}

// applyEnvKeys sets, over the file's, the Consumer and Protocol keys of
// the URL-key variables of environ (EnvKey through keys; an empty value
// is ignored, and so is a key the kernel sets itself, AIRNODE_PROVIDER_<KEY>
// of ProviderSetKeys, AIRNODE_CONSUMER_<KEY> of ConsumerSetKeys:
// EnvWarnings says so). A kernel key's value is checked as a URL's
// (CheckParams: a duration may be bare milliseconds, Dubbo's
// timeout=3000), each error naming the variable: `config: environment
// AIRNODE_CONSUMER_TIMEOUT: invalid value "2x" for URL key "timeout":
// want ...`. The value is kept as written, a bare number too, so that the
// URL shows what the kernel reads and Export and Refer warn of
// AIRNODE_PROVIDER_TIMEOUT=5 as of -p timeout=5 ("timeout=5 is 5ms ...").
// Extensions check their own keys at Refer and Export, as the file's.
func (c *Config) applyEnvKeys(environ, keys []string) error {
	var errs []error
	for _, kv := range environ {
		name, v, _ := strings.Cut(kv, "=")
		key, field, ok := EnvKey(name, keys)
		if _, _, set := setKeyVar(name); !ok || v == "" || set {
			continue
		}
		if err := CheckParams(map[string]string{key: v}); err != nil {
			errs = append(errs, fmt.Errorf("config: environment %s: %w", name, err))
			continue
		}
		if field == "consumer" {
			c.Consumer[key] = v
			if c.consumerEnv == nil {
				c.consumerEnv = map[string]string{}
			}
			c.consumerEnv[key] = name
		} else {
			c.Protocol[key] = v
			if c.providerEnv == nil {
				c.providerEnv = map[string]string{}
			}
			c.providerEnv[key] = name
		}
	}
	return errors.Join(errs...)
}

// caseOnly returns, for path, an unknown key of the file whose last part
// differs from a key the schema allows at that place only in case
// ("Services", "shutdown.Timeout"), path with that key ("services",
// "shutdown.timeout") and the keys allowed there (keysAt); "" and nil
// otherwise. The file's keys are matched exactly (decode), as URL keys
// are, so that one spelling is documented and a near miss is caught.
func caseOnly(path string) (string, []string) {
	last := path[strings.LastIndex(path, ".")+1:]
	keys := keysAt(path)
	for _, k := range keys {
		if k != last && strings.EqualFold(k, last) {
			return strings.TrimSuffix(path, last) + k, keys
		}
	}
	return "", nil
}

// closestKey returns the did-you-mean of path, an unknown key of the file
// as mapstructure reports it ("registri", "shutdown.tiemout",
// "plugins[0].comand"): path with its last part replaced by the closest
// key the schema allows at that place (a koanf tag of the struct holding
// it, one or two edits away: internal/suggest's rule, as for URL keys),
// such as "registry", "shutdown.timeout" or "plugins[0].command"; "" when
// none is that close or path leads through no struct of Config.
func closestKey(path string) string {
	last := path[strings.LastIndex(path, ".")+1:]
	m := suggest.Closest(last, keysAt(path))
	if m == "" || m == last {
		return ""
	}
	return strings.TrimSuffix(path, last) + m
}

// keysAt returns the keys the schema allows where path's last part is
// (the koanf tags of the struct holding it: "listen", "registry", ... for
// a top-level key), sorted; nil when path leads through no struct of
// Config.
func keysAt(path string) []string {
	parts := strings.Split(path, ".")
	t := reflect.TypeOf(Config{})
	for _, p := range parts[:len(parts)-1] {
		name, _, _ := strings.Cut(p, "[")
		f, ok := fieldByTag(t, name)
		if !ok {
			return nil
		}
		t = f.Type
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
	}
	var keys []string
	for i := range t.NumField() {
		if tag := koanfTag(t.Field(i)); tag != "" {
			keys = append(keys, tag)
		}
	}
	sort.Strings(keys)
	return keys
}

// fieldByTag returns the field of struct type t whose koanf tag is name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if koanfTag(t.Field(i)) == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// koanfTag returns f's koanf key, "" for an untagged or skipped field.
func koanfTag(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("koanf"), ",")
	if tag == "-" {
		return ""
	}
	return tag
}

// decode unmarshals k onto c strictly: a key matches a field's koanf tag
// exactly (mapstructure's default, strings.EqualFold, took "Services:"
// for services:, where URL keys are case-sensitive), so any other
// spelling is an unknown key (caseOnly names the one meant). With md it
// collects unused keys instead of failing on them.
func decode(k *koanf.Koanf, c *Config, md *mapstructure.Metadata) error {
	return k.UnmarshalWithConf("", c, koanf.UnmarshalConf{
		Tag: "koanf",
		DecoderConfig: &mapstructure.DecoderConfig{
			DecodeHook:       strictHook,
			ErrorUnused:      md == nil,
			WeaklyTypedInput: false,
			Metadata:         md,
			TagName:          "koanf",
			MatchName:        func(key, field string) bool { return key == field },
		},
	})
}

// strictHook converts raw YAML/env/flag values into the Config's field
// types without mapstructure's weak typing: a duration must be a string
// with a unit (Go syntax: "60s", "1m30s"); a bool field takes a YAML bool
// or text ParseBool takes (from the file: YAML 1.1's yes, no, on, off,
// which YAML 1.2 reads as text; from the environment or a flag:
// "false", "0"; YAML's integers 1 and 0 likewise), and nothing else
// (demo: maybe is refused, naming BoolForms); a string field accepts any YAML scalar in its natural
// spelling (true, 100, 0.5).
func strictHook(from, to reflect.Type, data any) (any, error) {
	if to == reflect.TypeOf(time.Duration(0)) {
		switch v := data.(type) {
		case time.Duration:
			return v, nil
		case string:
			d, err := time.ParseDuration(strings.TrimSpace(v))
			if _, perr := spi.ParseDuration(v); err != nil && errors.Is(perr, spi.ErrDurationUnitCase) {
				return nil, fmt.Errorf("%q is not a duration: want %s", v, spi.DurationWantWithUnit(perr))
			}
			if err != nil {
				return nil, fmt.Errorf("%q is not a duration with a unit (e.g. 60s, 1m30s, 200ms)", v)
			}
			return d, nil
		default:
			return nil, fmt.Errorf("%v needs a unit (e.g. 60s, 200ms)", v)
		}
	}
	if to.Kind() == reflect.Bool && from.Kind() == reflect.String {
		// the environment and flags give text; YAML gives a bool, or
		// text for YAML 1.1's yes/no/on/off (YAML 1.2 has true and false)
		b, ok := ParseBool(data.(string))
		if !ok {
			return nil, fmt.Errorf("%q is not a bool: want %s", data, BoolForms)
		}
		return b, nil
	}
	if to.Kind() == reflect.Bool && from.Kind() != reflect.Bool {
		if b, ok := ParseBool(fmt.Sprint(data)); ok && from.Kind() == reflect.Int {
			return b, nil // YAML's 1 and 0, as the environment's "1" and "0"
		}
		return nil, fmt.Errorf("%v is not a bool: want %s", data, BoolForms)
	}
	if to.Kind() == reflect.String && from.Kind() != reflect.String {
		switch v := data.(type) {
		case bool:
			return strconv.FormatBool(v), nil
		case int, int64, uint64, int32, uint32:
			return fmt.Sprint(v), nil
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64), nil
		}
	}
	return data, nil
}

// BoolForms lists the spellings a bool setting takes (ParseBool), for
// errors: the same in the file, in AIRNODE_* variables and in airnode's
// boolean flags.
const BoolForms = "true or false (also yes/no, on/off, 1/0, t/f)"

// ParseBool reads a bool setting written as text: strconv.ParseBool's
// spellings (true, false, 1, 0, t, f and their capitalised forms) and
// YAML 1.1's yes, no, on and off (lowercase, capitalised or upper case,
// as YAML 1.1 has them), so that "demo: yes" means what a YAML 1.1 reader
// (PyYAML, Ansible, yaml.v2) makes of it. ok is false for anything else.
// The file, AIRNODE_* variables and airnode's boolean flags all take
// these spellings (BoolForms).
func ParseBool(s string) (v, ok bool) {
	s = strings.TrimSpace(s)
	if b, err := strconv.ParseBool(s); err == nil {
		return b, true
	}
	switch s {
	case "yes", "Yes", "YES", "on", "On", "ON":
		return true, true
	case "no", "No", "NO", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

// decodeProblems splits mapstructure's multi-line error into one problem
// per line, with the key it names as path ("shutdown.timeout"; "" when the
// line names none).
func decodeProblems(err error) []problem {
	s := err.Error()
	s = strings.TrimPrefix(s, "decoding failed due to the following error(s):")
	var out []problem
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(l, "'"); ok {
			if key, msg, ok := strings.Cut(rest, "' "); ok {
				out = append(out, problem{key, yamlTypes(msg)})
				continue
			}
		}
		out = append(out, problem{"", yamlTypes(l)})
	}
	return out
}

// Go's type words in mapstructure's messages.
var (
	unconvertible = regexp.MustCompile(`^expected type '([^']+)', got unconvertible type '([^']+)'`)
	notMap        = regexp.MustCompile(`^expected a map(?: or struct)?, got ["']([a-z]+)["']`)
)

// yamlTypes says a decode message's expected and given types as the
// file's YAML reads ("want a string, got a list") instead of Go's
// ("expected type 'string', got unconvertible type '[]interface {}'"); a
// message in other words is returned as it is.
func yamlTypes(msg string) string {
	if m := unconvertible.FindStringSubmatch(msg); m != nil {
		want, got := yamlKind(m[1]), yamlKind(m[2])
		if want != "" && got != "" {
			return "want " + want + ", got " + got
		}
	}
	if m := notMap.FindStringSubmatch(msg); m != nil {
		if got := yamlKind(m[1]); got != "" {
			return "want a mapping (key: value lines, or {key: value}), got " + got
		}
	}
	return msg
}

// yamlKind names a Go type (or reflect kind) of decoded YAML as a YAML
// value: "a string", "a number", "true or false", "a list", "a mapping"; ""
// for one it does not know.
func yamlKind(t string) string {
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	case t == "slice", t == "array", strings.HasPrefix(t, "[]"):
		return "a list"
	case t == "map", t == "struct", strings.HasPrefix(t, "map["):
		return "a mapping"
	}
	return ""
}

// shutdownTwice refuses a file that sets shutdown.wait or
// shutdown.timeout both in its shutdown: section and as a URL key
// (protocol: or a service's params:) with different values: the URL key
// would win unnoticed (the kernel reads the exports' keys, the largest
// winning), so the file says two things about one setting. origin says
// which settings the file gave (a flag or variable outranks both). The
// same duration twice (500ms and 0.5s) is accepted; a URL key's value
// that is not a duration is left for the export's check to name.
func shutdownTwice(c Config, origin map[string]string, file string) error {
	for _, s := range []struct {
		key string
		v   time.Duration
	}{{"shutdown.wait", c.Shutdown.Wait}, {"shutdown.timeout", c.Shutdown.Timeout}} {
		if origin[s.key] != file {
			continue
		}
		check := func(where string, params map[string]string) error {
			raw, ok := params[s.key]
			if !ok {
				return nil
			}
			d, err := spi.ParseDuration(raw)
			if err != nil || d == s.v {
				return nil
			}
			return fmt.Errorf("config: %s: key %q is %s and key %q is %s: one setting given twice (the URL key would win); give it once, under shutdown:",
				file, s.key, s.v, where+"."+s.key, raw)
		}
		if err := check("protocol", c.Protocol); err != nil {
			return err
		}
		for i, svc := range c.Services {
			if err := check(fmt.Sprintf("services[%d].params", i), svc.Params); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryRE matches the path of a key directly in a services or references
// entry ("services[0].version").
var entryRE = regexp.MustCompile(`^(?:services|references)\[\d+\]\.([^.\[]+)$`)

// entryKey reports whether unknown key path u is directly in a services
// or references entry, where a URL key written beside interface instead
// of under params lands, and returns the key.
func entryKey(u string) (key string, ok bool) {
	m := entryRE.FindStringSubmatch(u)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// otherFormats are configuration file extensions that name a format
// other than YAML, which Load does not read: formatNote names it.
var otherFormats = map[string]string{
	".toml":       "TOML",
	".ini":        "INI",
	".properties": "a Java properties file",
	".env":        "a dotenv file (KEY=value lines)",
	".xml":        "XML",
	".hcl":        "HCL",
}

// formatNote is what Load adds to the error of a configuration file that
// does not parse as YAML, or whose top level is not a mapping: the file
// is read as YAML, JSON too (JSON parses as YAML), and, when file's
// extension names another format (otherFormats), that it is not read:
//
//	; the configuration file is read as YAML (JSON parses too, as YAML): ".toml" suggests TOML, which airnode does not read; write the settings as YAML key: value lines (listen: ":20880")
func formatNote(file string) string {
	note := "; the configuration file is read as YAML (JSON parses too, as YAML)"
	ext := strings.ToLower(filepath.Ext(file))
	if f, ok := otherFormats[ext]; ok {
		note += fmt.Sprintf(": %q suggests %s, which airnode does not read; write the settings as YAML key: value lines (listen: \":20880\")", ext, f)
	}
	return note
}

// FlagError is Load's error for a setting whose value came from a flag
// (Source.Flags) and is out of its bounds or of the wrong form: a
// command line the program cannot run, which the airnode command exits
// 2 for (a usage error). It reads "config: flag --listen: <Msg>".
// Load may return it joined (errors.Join) with errors of other sources:
// match it with errors.As.
type FlagError struct {
	Flag string // the flag as typed: "--shutdown-timeout"
	Msg  string // what is wrong and what is allowed: "-1s must be > 0"
}

func (e *FlagError) Error() string { return "config: flag " + e.Flag + ": " + e.Msg }
