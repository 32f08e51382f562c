package cli

import (
	"strings"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// otherEnvNames are the AIRNODE_* variables read by something other than
// config.Load or the plugins (config.PluginEnvNames): plugin check's
// child mode.
var otherEnvNames = []string{envCheckConformance}

// warnUnknownEnv writes one warning (warn) for the AIRNODE_* variables
// of environ that nothing reads (config.UnknownEnv with keys, the key
// catalog: AIRNODE_REGISTY, a typo, whose node then joins the default
// registry): it names each, a known one a few edits away ("did you mean
// AIRNODE_REGISTRY?", internal/suggest), and the known ones. Silent when
// there are none.
func warnUnknownEnv(environ, keys []string, warn warnFunc) {
	unknown, hints := config.UnknownEnv(environ, keys, otherEnvNames)
	if len(unknown) == 0 {
		return
	}
	known := strings.Join(config.EnvNames(), ", ") + ", " + config.EnvConsumerPrefix + "<KEY>, " + config.EnvProviderPrefix + "<KEY>"
	args := []any{"unknown", strings.Join(unknown, ", "), "known", known}
	if len(hints) > 0 {
		args = append(args, "hint", strings.Join(hints, "; "))
	}
	warn("environment variables with the AIRNODE_ prefix that airnode does not read; they have no effect", args...)
}

// warnIgnoredEnv writes one warning (warn) for each AIRNODE_* variable of
// environ that config.Load reads but ignores (config.EnvWarnings, keys
// the key catalog): set but empty (AIRNODE_REGISTRY= took the default
// registry silently, tester84 #3), or AIRNODE_PROVIDER_<KEY> for a key
// the provider sets at export (AIRNODE_PROVIDER_TIMESTAMP, tester84 #6).
func warnIgnoredEnv(environ, keys []string, warn warnFunc) {
	for _, w := range config.EnvWarnings(environ, keys) {
		warn(w)
	}
}

// warnBareMillisEnv writes one warning (warn) for each durationEnv
// variable of environ set to a bare number likely meant as seconds
// (spi.BareMillisWarning of its setting's default: under 500 for
// AIRNODE_SHUTDOWN_TIMEOUT, 100 for AIRNODE_SHUTDOWN_WAIT): serve reads
// it as milliseconds, as --shutdown-timeout 30 and the URL key
// shutdown.timeout=30 are, while a container's AIRNODE_SHUTDOWN_TIMEOUT=30
// most likely means seconds (its grace period), and the drain budget of
// 30 ms abandoned every call in flight at the next rolling restart
// (tester84 #1): "AIRNODE_SHUTDOWN_TIMEOUT=30 is 30ms (a bare number is
// milliseconds, as in Dubbo); write 30s for seconds". A URL key's
// variable (AIRNODE_PROVIDER_TIMEOUT=5) is not warned of here: config.Load
// keeps its value as written, and Export and Refer warn of it as of the
// URL's own key ("timeout=5 is 5ms ..."), once.
func warnBareMillisEnv(environ []string, warn warnFunc) {
	for _, kv := range environ {
		name, v, _ := strings.Cut(kv, "=")
		def, ok := durationEnv[name]
		if !ok {
			continue
		}
		if note := spi.BareMillisWarning(v, def); note != "" {
			warn(name + "=" + note)
		}
	}
}
