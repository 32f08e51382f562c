package cli

import (
	"strings"

	"github.com/airnode/airnode/kernel/config"
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
