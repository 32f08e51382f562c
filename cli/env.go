package cli

import (
	"slices"
	"strings"

	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/sdk"
)

// otherEnvNames are the AIRNODE_* variables read by something other than
// config.Load: service plugins' log level (sdk.EnvLogLevel, inherited by
// the plugins serve starts), the handshake cookie of a plugin process
// (go-plugin's magic cookie: set by the host for its plugins), and plugin
// check's child mode.
var otherEnvNames = []string{sdk.EnvLogLevel, "AIRNODE_PLUGIN", envCheckConformance}

// knownEnvNames returns every AIRNODE_* variable airnode or its plugins
// read: config.EnvNames, then otherEnvNames.
func knownEnvNames() []string {
	return append(config.EnvNames(), otherEnvNames...)
}

// warnUnknownEnv writes one warning (warn) for the AIRNODE_* variables
// of environ that nothing reads (AIRNODE_REGISTY: a typo, whose node then joins the
// default registry): it names each, a known one a few edits away ("did
// you mean AIRNODE_REGISTRY?", internal/suggest), and the known ones.
// Silent when there are none.
func warnUnknownEnv(environ []string, warn warnFunc) {
	known := knownEnvNames()
	var unknown, hints []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, config.EnvPrefix) || slices.Contains(known, name) || slices.Contains(unknown, name) {
			continue
		}
		unknown = append(unknown, name)
		if c := suggest.Closest(name, known); c != "" {
			hints = append(hints, name+": did you mean "+c+"?")
		}
	}
	if len(unknown) == 0 {
		return
	}
	args := []any{"unknown", strings.Join(unknown, ", "), "known", strings.Join(config.EnvNames(), ", ")}
	if len(hints) > 0 {
		args = append(args, "hint", strings.Join(hints, "; "))
	}
	warn("environment variables with the AIRNODE_ prefix that airnode does not read; they have no effect", args...)
}
