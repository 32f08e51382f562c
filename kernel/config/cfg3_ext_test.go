package config_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// An unknown key with no close match lists the keys allowed where it is
// (tester nu54 finding 7); a near one still gets its did-you-mean alone.
func TestUnknownKeyListsTheAllowedKeys(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"metrics: \"127.0.0.1:9090\"\n", `unknown key "metrics" (allowed at the top level: advertise, application, consumer, demo, listen, plugins, protocol, references, registry, services, shutdown)`},
		{"shutdown: {colour: 1}\n", `unknown key "shutdown.colour" (allowed at "shutdown": timeout, wait)`},
		{"plugins: [{name: a, point: filter, command: x, zzzzz: 1}]\n", `unknown key "plugins[0].zzzzz" (allowed at "plugins[0]": args, command, env, name, point, required, restart, sha256, start_timeout)`},
		{"registri: memory://\n", `unknown key "registri"; did you mean "registry"?`},
	} {
		file := writeFile(t, tt.yaml)
		_, err := config.Load(config.Source{File: file})
		if want := "config: " + file + ": " + tt.want; err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", tt.yaml, err, want)
		}
	}
}

// One file giving shutdown.wait or shutdown.timeout both under shutdown:
// and as a URL key (protocol:, a service's params:) with two values is
// refused, naming both keys and saying which would win (tester nu54
// finding 6); the same duration twice is accepted, and so is a URL key a
// flag or variable outranks together with shutdown:.
func TestShutdownGivenTwiceInOneFileIsRefused(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"shutdown: {timeout: 5s, wait: 500ms}\nprotocol: {shutdown.wait: 1s}\n",
			`key "shutdown.wait" is 500ms and key "protocol.shutdown.wait" is 1s: one setting given twice (the URL key would win); give it once, under shutdown:`},
		{"shutdown: {timeout: 5s}\nservices: [{interface: demo.Echo, params: {shutdown.timeout: 8000}}]\n",
			`key "shutdown.timeout" is 5s and key "services[0].params.shutdown.timeout" is 8000: one setting given twice`},
	} {
		file := writeFile(t, tt.yaml)
		_, err := config.Load(config.Source{File: file})
		if err == nil || !strings.HasPrefix(err.Error(), "config: "+file+": "+tt.want) {
			t.Errorf("%q:\n got %v\nwant %s", tt.yaml, err, tt.want)
		}
	}
	same := writeFile(t, "shutdown: {timeout: 5s, wait: 500ms}\nprotocol: {shutdown.wait: 0.5s}\n")
	if _, err := config.Load(config.Source{File: same}); err != nil {
		t.Errorf("the same wait twice: %v, want nil", err)
	}
	env := writeFile(t, "shutdown: {wait: 500ms}\nprotocol: {shutdown.wait: 1s}\n")
	if _, err := config.Load(config.Source{File: env, Environ: []string{"AIRNODE_SHUTDOWN_WAIT=2s"}}); err != nil {
		t.Errorf("shutdown.wait from the environment: %v, want nil (the variable outranks both)", err)
	}
}

// Booleans: the file, the variables and the flags take one set of
// spellings, config.ParseBool's (tester nu54 finding 4).
func TestParseBoolSpellings(t *testing.T) {
	for _, s := range []string{"true", "TRUE", "yes", "Yes", "on", "ON", "1", "t", "T"} {
		if v, ok := config.ParseBool(s); !ok || !v {
			t.Errorf("ParseBool(%q) = %v, %v; want true", s, v, ok)
		}
	}
	for _, s := range []string{"false", "no", "NO", "off", "0", "f", "F"} {
		if v, ok := config.ParseBool(s); !ok || v {
			t.Errorf("ParseBool(%q) = %v, %v; want false", s, v, ok)
		}
	}
	for _, s := range []string{"maybe", "y", "n", "nope", ""} {
		if _, ok := config.ParseBool(s); ok {
			t.Errorf("ParseBool(%q) accepted", s)
		}
	}
}
