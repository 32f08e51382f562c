package config

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/kernel/extension"
)

// EnvNames returns the environment variables Load reads (EnvPrefix and a
// setting's name: AIRNODE_LISTEN, AIRNODE_REGISTRY, ...), in the order of
// the settings, so that a command can tell a variable Load ignores, a
// typo such as AIRNODE_REGISTY, from one it reads. A new slice each call.
// The URL-key variables (EnvConsumerPrefix, EnvProviderPrefix) are not
// listed: which exist depends on the key catalog (EnvKey).
func EnvNames() []string {
	names := make([]string, 0, len(scalars))
	for _, s := range scalars {
		names = append(names, s.env)
	}
	return names
}

// EnvFlag returns the flag (without "--": "listen") that sets what
// variable name of EnvNames sets (AIRNODE_LISTEN), and the setting's
// path in the configuration file ("listen", "shutdown.timeout"); ok is
// false for a name EnvNames does not list.
func EnvFlag(name string) (flag, path string, ok bool) {
	for _, s := range scalars {
		if s.env == name {
			return s.flag, strings.ReplaceAll(s.path, delim, "."), true
		}
	}
	return "", "", false
}

// Prefixes of the variables that set a URL key for every reference
// (Config.Consumer, Dubbo's DUBBO_CONSUMER_TIMEOUT for
// dubbo.consumer.timeout) or every export (Config.Protocol):
// AIRNODE_CONSUMER_TIMEOUT=2s, AIRNODE_CONSUMER_RETRY_TOKENS=10,
// AIRNODE_PROVIDER_WEIGHT=200. The rest of the name is a URL key of the
// key catalog in upper case with '.' written '_' (EnvKey).
const (
	EnvConsumerPrefix = "AIRNODE_CONSUMER_"
	EnvProviderPrefix = "AIRNODE_PROVIDER_"
)

// PluginEnvNames are the AIRNODE_* variables read by plugin processes
// rather than by Load: a service plugin's log level (sdk.EnvLogLevel,
// which plugins inherit from their host) and go-plugin's handshake
// cookie, set by a host for its plugins. Load does not report them.
var PluginEnvNames = []string{"AIRNODE_PLUGIN_LOG", "AIRNODE_PLUGIN"}

// envForm is URL key k as a variable names it: upper case, '.' and '-'
// written '_' ("retry.tokens" is RETRY_TOKENS).
func envForm(k string) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(k))
}

// EnvKey maps a URL-key variable back to its key through keys, the key
// catalog (kernel.KnownKeys; nil: extension.KernelKeys, the kernel's
// own and the points' selecting keys): for AIRNODE_CONSUMER_RETRY_TOKENS
// it returns "retry.tokens" and the field it sets, "consumer" (or
// "protocol" for EnvProviderPrefix). ok is false for a name with neither
// prefix or whose rest is no key of keys (a method-level key,
// methods.M.timeout, cannot be given this way: the method's case is
// lost).
func EnvKey(name string, keys []string) (key, field string, ok bool) {
	rest, ok := strings.CutPrefix(name, EnvConsumerPrefix)
	field = "consumer"
	if !ok {
		if rest, ok = strings.CutPrefix(name, EnvProviderPrefix); !ok {
			return "", "", false
		}
		field = "protocol"
	}
	if keys == nil {
		keys = extension.KernelKeys()
	}
	for _, k := range keys {
		if k != "" && envForm(k) == rest {
			return k, field, true
		}
	}
	return "", "", false
}

// UnknownEnv returns the AIRNODE_* variables of environ that nothing
// reads, sorted, each once: not EnvNames, not a URL-key variable of keys
// (EnvKey), not PluginEnvNames nor other (variables the program reads
// itself). hints has "NAME: did you mean KNOWN?" for each that is a few
// edits from a known one (internal/suggest), AIRNODE_REGISTY: did you
// mean AIRNODE_REGISTRY?, AIRNODE_CONSUMER_TIMOUT: did you mean
// AIRNODE_CONSUMER_TIMEOUT?.
func UnknownEnv(environ, keys, other []string) (unknown, hints []string) {
	if keys == nil {
		keys = extension.KernelKeys()
	}
	known := append(append(EnvNames(), PluginEnvNames...), other...)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || slices.Contains(known, name) || slices.Contains(unknown, name) {
			continue
		}
		if _, _, ok := EnvKey(name, keys); ok {
			continue
		}
		if _, _, ok := setKeyVar(name); ok {
			continue
		}
		unknown = append(unknown, name)
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		candidates := known
		for _, p := range []string{EnvConsumerPrefix, EnvProviderPrefix} {
			if strings.HasPrefix(name, p) {
				candidates = nil
				for _, k := range keys {
					candidates = append(candidates, p+envForm(k))
				}
			}
		}
		if c := suggest.Closest(name, candidates); c != "" && c != name {
			hints = append(hints, name+": did you mean "+c+"?")
		}
	}
	return unknown, hints
}

// logComponent is the "component" attribute of the records this package
// writes (Load's warning about unknown AIRNODE_* variables).
const logComponent = "config"

// warnUnknownEnv logs one warning on logger for unknown, the names
// UnknownEnv found, with hints; nothing when there are none. The record
// is component=config (logComponent), as every kernel record names its
// writer (tester84 #8), and its msg does not repeat it.
func warnUnknownEnv(logger *slog.Logger, unknown, hints []string) {
	if len(unknown) == 0 {
		return
	}
	args := []any{"component", logComponent, "unknown", strings.Join(unknown, ", "), "known", strings.Join(EnvNames(), ", ") + fmt.Sprintf(", %s<KEY>, %s<KEY>", EnvConsumerPrefix, EnvProviderPrefix)}
	if len(hints) > 0 {
		args = append(args, "hint", strings.Join(hints, "; "))
	}
	logger.Warn("environment variables with the AIRNODE_ prefix that airnode does not read; they have no effect", args...)
}

// ProviderSetKeys are the provider URL keys the kernel sets at export:
// the start time, the side, the method list and the process id. A value
// given for one would be replaced silently, so serve refuses it with -p
// and Load ignores it, with a warning, from AIRNODE_PROVIDER_<KEY>
// (EnvWarnings) and from the file's protocol: and services' params:
// (Config.IgnoredKeys).
var ProviderSetKeys = []string{"timestamp", "side", "methods", "pid"}

// ConsumerSetKeys returns the ProviderSetKeys a consumer sets too, on
// every reference: side at refer, pid and timestamp in its registry
// entry; a value given for one is ignored with a warning (EnvWarnings for
// AIRNODE_CONSUMER_<KEY>, Config.IgnoredKeys for the file). methods is
// left out: a reference may give the methods it calls (Refer checks its
// method-level keys against them). A new slice each call.
func ConsumerSetKeys() []string {
	return slices.DeleteFunc(slices.Clone(ProviderSetKeys), func(k string) bool { return k == "methods" })
}

// setKeys returns the keys the kernel sets itself on a provider URL
// (field "protocol": ProviderSetKeys) or a reference URL ("consumer":
// ConsumerSetKeys), and who sets them, as setKeyIgnored words it.
func setKeys(field string) (keys []string, who string) {
	if field == "consumer" {
		return ConsumerSetKeys(), "consumer"
	}
	return ProviderSetKeys, "provider"
}

// setKeyIgnored is the warning for key, one of setKeys(field), given at
// where (a variable, "plugins.yaml: protocol.timestamp"): "WHERE is
// ignored: KEY is set by the provider at export and cannot be given
// (provider-set keys: ...)", or for a consumer "... set by the consumer
// at refer ... (consumer-set keys: ...)".
func setKeyIgnored(where, key, field string) string {
	keys, who := setKeys(field)
	when := "export"
	if who == "consumer" {
		when = "refer"
	}
	return fmt.Sprintf("%s is ignored: %s is set by the %s at %s and cannot be given (%s-set keys: %s)",
		where, key, who, when, who, strings.Join(keys, ", "))
}

// dropSetKeys removes from params (a section or an entry's params of
// the file, whose keys field's URLs carry: "protocol" or "consumer") each
// key the kernel sets itself (setKeys), returning a setKeyIgnored line
// for each, in sorted key order, naming it as where.key.
func dropSetKeys(params map[string]string, field, where string) []string {
	keys, _ := setKeys(field)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if slices.Contains(keys, k) {
			delete(params, k)
			out = append(out, setKeyIgnored(where+"."+k, k, field))
		}
	}
	return out
}

// dropFileSetKeys removes from c the URL keys its file gave that the
// kernel sets itself (dropSetKeys: protocol:, each service's params:,
// consumer:, each reference's params:) and records why (IgnoredKeys),
// each line opening with file.
func (c *Config) dropFileSetKeys(file string) {
	add := func(lines []string) {
		for _, l := range lines {
			c.ignored = append(c.ignored, file+": "+l)
		}
	}
	add(dropSetKeys(c.Protocol, "protocol", "protocol"))
	for i := range c.Services {
		add(dropSetKeys(c.Services[i].Params, "protocol", fmt.Sprintf("services[%d].params", i)))
	}
	add(dropSetKeys(c.Consumer, "consumer", "consumer"))
	for i := range c.References {
		add(dropSetKeys(c.References[i].Params, "consumer", fmt.Sprintf("references[%d].params", i)))
	}
}

// EnvWarnings returns, sorted, one line for each AIRNODE_*
// variable Load reads but ignores:
//
//   - one of EnvNames, or a URL-key variable (AIRNODE_CONSUMER_<KEY>,
//     AIRNODE_PROVIDER_<KEY>, EnvKey), set but empty: Load takes it as
//     unset, so the file's value or the default applies, which the line
//     names ("AIRNODE_REGISTRY is set but empty: ignored as if unset;
//     registry comes from --registry, the configuration file or the
//     default (the file registry)");
//   - AIRNODE_PROVIDER_<KEY> for a ProviderSetKeys key, whatever the
//     value ("AIRNODE_PROVIDER_TIMESTAMP is ignored: timestamp is set by
//     the provider at export and cannot be given (provider-set keys:
//     ...)"), and AIRNODE_CONSUMER_<KEY> for a ConsumerSetKeys key
//     ("AIRNODE_CONSUMER_PID is ignored: pid is set by the consumer at
//     refer ...").
//
// keys is the key catalog the URL-key variables are mapped back through
// (as Source.Keys; nil: extension.KernelKeys); a variable it does not
// map is UnknownEnv's to report, not EnvWarnings'. nil when there is
// none. Load logs each on Source.Logger; the airnode command writes each
// as a warning of the command.
func EnvWarnings(environ, keys []string) []string {
	var out []string
	for _, kv := range environ {
		name, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		if key, field, ok := setKeyVar(name); ok {
			out = append(out, setKeyIgnored(name, key, field))
			continue
		}
		if v != "" {
			continue
		}
		if i := slices.IndexFunc(scalars, func(s scalar) bool { return s.env == name }); i >= 0 {
			s := scalars[i]
			out = append(out, fmt.Sprintf("%s is set but empty: ignored as if unset; %s comes from --%s, the configuration file or the default (%s)",
				name, strings.ReplaceAll(s.path, delim, "."), s.flag, s.dflt))
			continue
		}
		if key, field, ok := EnvKey(name, keys); ok {
			section, what := "consumer:", "every reference"
			if field == "protocol" {
				section, what = "protocol:", "every export"
			}
			out = append(out, fmt.Sprintf("%s is set but empty: ignored as if unset; URL key %s of %s comes from the configuration file's %s section or the default",
				name, key, what, section))
		}
	}
	slices.Sort(out)
	return out
}

// setKeyVar reports whether name is AIRNODE_PROVIDER_<KEY> for a
// ProviderSetKeys key or AIRNODE_CONSUMER_<KEY> for a ConsumerSetKeys
// one, and returns the key and the field ("protocol", "consumer"):
// EnvWarnings reports it, not UnknownEnv, and Load leaves it out.
func setKeyVar(name string) (key, field string, ok bool) {
	for _, f := range []struct{ prefix, field string }{{EnvProviderPrefix, "protocol"}, {EnvConsumerPrefix, "consumer"}} {
		rest, ok := strings.CutPrefix(name, f.prefix)
		if !ok {
			continue
		}
		keys, _ := setKeys(f.field)
		if i := slices.IndexFunc(keys, func(k string) bool { return envForm(k) == rest }); i >= 0 {
			return keys[i], f.field, true
		}
	}
	return "", "", false
}
