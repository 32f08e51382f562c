package config

import (
	"fmt"
	"log/slog"
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
