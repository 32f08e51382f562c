package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// tester84 #3: AIRNODE_REGISTRY= (set but empty) was taken as unset
// without a word, so the node joined the default registry. Every
// command now warns of each empty variable config.Load reads, naming it
// and what applies instead; the behaviour (ignored as if unset) stays.
func TestBD_EmptyVariablesAreWarned(t *testing.T) {
	t.Parallel()
	env := []string{"AIRNODE_REGISTRY=", "AIRNODE_CONSUMER_TIMEOUT=", "AIRNODE_PROVIDER_WEIGHT=", "XDG_RUNTIME_DIR=" + t.TempDir()}
	r := runCommand(t, 20*time.Second, env, "list", "--explain", "demo.Echo")
	for _, want := range []string{
		"airnode: list: warning: AIRNODE_REGISTRY is set but empty: ignored as if unset; registry comes from --registry, the configuration file or the default (the file registry)\n",
		"airnode: list: warning: AIRNODE_CONSUMER_TIMEOUT is set but empty: ignored as if unset; URL key timeout of every reference comes from the configuration file's consumer: section or the default\n",
		"airnode: list: warning: AIRNODE_PROVIDER_WEIGHT is set but empty: ignored as if unset; URL key weight of every export comes from the configuration file's protocol: section or the default\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// still ignored: the default registry and keys
	if r.code != 0 || !regexp.MustCompile(`(?m)^registry +node +file +bundled +default \(no registry configured\)`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^timeout +service +1s +default`).MatchString(r.stdout) {
		t.Errorf("exit %d, stdout:\n%s", r.code, r.stdout)
	}
	// a JSON record under --log-format json; a variable with a value is
	// not warned of
	r = runCommand(t, 20*time.Second, []string{"AIRNODE_APPLICATION=", "AIRNODE_REGISTRY=memory://"}, "--log-format", "json", "version")
	if r.code != 0 || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, `"level":"WARN","msg":"version: AIRNODE_APPLICATION is set but empty: ignored as if unset; application comes from --application, the configuration file or the default (the executable's base name)"`) {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// tester84 #5: list --explain said "reference (timeout)" for a value of
// AIRNODE_CONSUMER_TIMEOUT, and "protocol", "node" or "the configured
// registry" for the other variables': it names the variable now.
func TestBD_ExplainNamesTheVariable(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "consumer: {retries: \"1\"}\nreferences: [{interface: demo.Echo, params: {loadbalance: roundrobin}}]\n")
	env := []string{"AIRNODE_REGISTRY=memory://", "AIRNODE_SHUTDOWN_TIMEOUT=20s", "AIRNODE_CONSUMER_TIMEOUT=2s",
		"AIRNODE_CONSUMER_CONNECTIONS=2", "AIRNODE_PROVIDER_WEIGHT=7", "AIRNODE_PROVIDER_TRANSPORT=tcp"}
	r := runCommand(t, 20*time.Second, env, "list", "--config", cfg, "--explain", "demo.Echo")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, row := range []string{
		`timeout +service +2s +env AIRNODE_CONSUMER_TIMEOUT`,
		`connections +service +2 +env AIRNODE_CONSUMER_CONNECTIONS`,
		`weight +service +7 +env AIRNODE_PROVIDER_WEIGHT`,
		`shutdown.timeout +service +20s +env AIRNODE_SHUTDOWN_TIMEOUT`,
		`shutdown.wait +service +2s +node \(shutdown.wait\)`,
		`retries +service +1 +consumer section \(retries\)`,
		`loadbalance +service +roundrobin +bundled +service-level key loadbalance=roundrobin, from the config's reference`,
		`transport +service +tcp +bundled +service-level key transport=tcp, from env AIRNODE_PROVIDER_TRANSPORT`,
		`registry +node +memory +bundled +scheme of the configured registry memory:// \(env AIRNODE_REGISTRY\)`,
	} {
		if !regexp.MustCompile(`(?m)^` + row + `$`).MatchString(r.stdout) {
			t.Errorf("list --explain: no row %q in:\n%s", row, r.stdout)
		}
	}
	// list's own --registry outranks the variable, and says so
	r = runCommand(t, 20*time.Second, env, "list", "--explain", "demo.Echo", "--registry", "memory://")
	if !regexp.MustCompile(`(?m)^registry +node +memory +bundled +scheme of the configured registry memory:// \(--registry\)$`).MatchString(r.stdout) {
		t.Errorf("list --explain --registry: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}

// tester84 #6: AIRNODE_PROVIDER_TIMESTAMP (a key the provider sets at
// export, which serve's -p refuses) was dropped without a word; an
// AIRNODE_SHUTDOWN_* variable a flag or the file contradicted lost or
// won unseen. The first is warned of and left out; the second is one
// line saying which wins.
func TestBD_IgnoredProviderKeysAndShutdownRank(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "shutdown: {wait: 4s}\n")
	env := []string{"AIRNODE_PROVIDER_TIMESTAMP=1", "AIRNODE_SHUTDOWN_TIMEOUT=5s", "AIRNODE_SHUTDOWN_WAIT=1s"}
	p := startServe(t, "127.0.0.1:0", "memory://", env, "", "--config", cfg, "--shutdown-timeout", "20s")
	log := p.logText()
	for _, want := range []string{
		"airnode: serve: warning: AIRNODE_PROVIDER_TIMESTAMP is ignored: timestamp is set by the provider at export and cannot be given (provider-set keys: timestamp, side, methods, pid)\n",
		`msg="airnode serve: --shutdown-timeout outranks AIRNODE_SHUTDOWN_TIMEOUT" key=shutdown.timeout env_value=5s value=20s`,
		`msg="airnode serve: AIRNODE_SHUTDOWN_WAIT outranks the configuration file's shutdown.wait" key=shutdown.wait file_value=4s value=1s`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("serve's log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "timestamp=1&") || strings.Contains(log, "timestamp=1\"") {
		t.Errorf("AIRNODE_PROVIDER_TIMESTAMP=1 reached the export:\n%s", log)
	}
	// the same value from both sources: nothing to say
	p = startServe(t, "127.0.0.1:0", "memory://", []string{"AIRNODE_SHUTDOWN_TIMEOUT=20000"}, "", "--shutdown-timeout", "20s")
	if log := p.logText(); strings.Contains(log, "outranks") {
		t.Errorf("AIRNODE_SHUTDOWN_TIMEOUT=20000 with --shutdown-timeout 20s:\n%s", log)
	}
}

// tester84 #10: no variable sets the log format or level or serve's
// metrics address. Only the configuration's settings have AIRNODE_
// variables (the project maps config keys, not flags): --help says which
// flags have no environment form.
func TestBD_HelpSaysWhichFlagsHaveNoEnvironmentForm(t *testing.T) {
	t.Parallel()
	r := runCommand(t, 20*time.Second, nil, "--help")
	flat := strings.Join(strings.Fields(r.stdout), " ")
	for _, want := range []string{
		"Only the configuration's settings have variables (an empty one is ignored as if unset, with a warning;", // one a line: TestBG_HelpListsTheVariablesOneALine
		"The other flags have no environment form: --config, --log-level, --log-format, serve's --metrics,",
	} {
		if r.code != 0 || !strings.Contains(flat, want) {
			t.Errorf("airnode --help: exit %d, lacks %q:\n%s", r.code, want, r.stdout)
		}
	}
	r = runCommand(t, 20*time.Second, nil, "serve", "--help")
	for _, flag := range []string{"--metrics", "--log-level", "--log-format"} {
		line := regexp.MustCompile(`(?m)^\s+` + flag + ` string\s.*$`).FindString(r.stdout)
		if !strings.Contains(line, "no environment variable") {
			t.Errorf("serve --help: %s line %q does not say it has no environment variable", flag, line)
		}
	}
}
