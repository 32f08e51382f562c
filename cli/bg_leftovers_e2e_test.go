package cli

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/config"
)

// fix-bg #1 (fix-bd leftover): the file's protocol: {timestamp: 1} and
// AIRNODE_CONSUMER_PID were dropped without a word, unlike
// AIRNODE_PROVIDER_TIMESTAMP. Every command warns of each, once, naming
// where it was given.
func TestBG_FrameworkSetKeysAreWarned(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "protocol: {timestamp: \"1\", weight: \"3\"}\nconsumer: {side: provider}\n")
	env := []string{"AIRNODE_CONSUMER_PID=3", "XDG_RUNTIME_DIR=" + t.TempDir()}
	r := runCommand(t, 20*time.Second, env, "list", "--config", cfg, "--explain", "demo.Echo")
	for _, want := range []string{
		"airnode: list: warning: " + cfg + ": protocol.timestamp is ignored: timestamp is set by the provider at export and cannot be given (provider-set keys: timestamp, side, methods, pid)\n",
		"airnode: list: warning: " + cfg + ": consumer.side is ignored: side is set by the consumer at refer and cannot be given (consumer-set keys: timestamp, side, pid)\n",
		"airnode: list: warning: AIRNODE_CONSUMER_PID is ignored: pid is set by the consumer at refer and cannot be given (consumer-set keys: timestamp, side, pid)\n",
	} {
		if strings.Count(r.stderr, want) != 1 {
			t.Errorf("stderr lacks (once) %q:\n%s", want, r.stderr)
		}
	}
	if r.code != 0 || !regexp.MustCompile(`(?m)^url +airnode:///demo\.Echo\?weight=3$`).MatchString(r.stdout) {
		t.Errorf("exit %d; want the url row without timestamp, side and pid:\n%s", r.code, r.stdout)
	}
	// serve publishes its own timestamp, and says so
	p := startServe(t, "127.0.0.1:0", "memory://", nil, "", "--config", cfg)
	if log := p.logText(); !strings.Contains(log, "protocol.timestamp is ignored") || strings.Contains(log, "timestamp=1&") {
		t.Errorf("serve's log:\n%s", log)
	}
}

// fix-bg #2 (fix-bd leftover): a listen address or registry given by two
// sources with different values said nothing of which won; serve says
// it in one line, as for AIRNODE_SHUTDOWN_*.
func TestBG_ListenAndRegistrySayWhichWins(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "listen: 127.0.0.1:36820\nregistry: zookeeper://u:secret@127.0.0.1:36821\n")
	p := startServe(t, "127.0.0.1:0", "memory://", []string{"AIRNODE_LISTEN=127.0.0.1:36822"}, "", "--config", cfg)
	log := p.logText()
	for _, want := range []string{
		`msg="airnode serve: --listen outranks AIRNODE_LISTEN" key=listen env_value=127.0.0.1:36822 value=127.0.0.1:0`,
		`msg="airnode serve: --registry outranks the configuration file's registry" key=registry file_value=zookeeper://u:***@127.0.0.1:36821 value=memory://`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("serve's log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "u:secret@") {
		t.Errorf("the registry's password was logged:\n%s", log)
	}

	// the variables against the file (no flag), through the same code
	// path serve runs, on what config.Load makes of them
	env := []string{"AIRNODE_LISTEN=127.0.0.1:36823", "AIRNODE_REGISTRY=memory://", "AIRNODE_SHUTDOWN_WAIT=1s"}
	c, err := config.Load(config.Source{File: cfg, Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	logSettingRank(env, cfg, addressRanked(c), slog.New(slog.NewTextHandler(&buf, nil)))
	for _, want := range []string{
		`msg="airnode serve: AIRNODE_LISTEN outranks the configuration file's listen" key=listen file_value=127.0.0.1:36820 value=127.0.0.1:36823`,
		`msg="airnode serve: AIRNODE_REGISTRY outranks the configuration file's registry" key=registry file_value=zookeeper://u:***@127.0.0.1:36821 value=memory://`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("logSettingRank lacks %q:\n%s", want, buf.String())
		}
	}
	// one value from two sources: nothing to say
	buf.Reset()
	same := []string{"AIRNODE_LISTEN=127.0.0.1:36820"}
	if c, err = config.Load(config.Source{File: cfg, Environ: same}); err != nil {
		t.Fatal(err)
	}
	if logSettingRank(same, cfg, addressRanked(c)[:1], slog.New(slog.NewTextHandler(&buf, nil))); buf.Len() != 0 {
		t.Errorf("the same listen address twice: %s", buf.String())
	}
}

// fix-bg #3 (fix-bd leftover): airnode --help listed the variables on
// one line of some 200 columns; it lists them one a line now, with the
// flag and file key of each, and its text stays within 80 columns.
func TestBG_HelpListsTheVariablesOneALine(t *testing.T) {
	t.Parallel()
	r := runCommand(t, 20*time.Second, nil, "--help")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, re := range []string{
		`(?m)^  AIRNODE_LISTEN +--listen, file key listen$`,
		`(?m)^  AIRNODE_SHUTDOWN_TIMEOUT +--shutdown-timeout, file key shutdown.timeout$`,
		`(?m)^  AIRNODE_DEMO +--demo, file key demo$`,
		`(?m)^  AIRNODE_CONSUMER_<KEY> +URL key KEY of every reference \(file: consumer:\)$`,
		`(?m)^  AIRNODE_PROVIDER_<KEY> +URL key KEY of every export \(file: protocol:\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("airnode --help lacks a line %s:\n%s", re, r.stdout)
		}
	}
	head, _, _ := strings.Cut(r.stdout, "Usage:") // the Long text; cobra's flag lines are its own
	for _, line := range strings.Split(head, "\n") {
		if len(line) > 80 {
			t.Errorf("airnode --help: a line of %d columns: %q", len(line), line)
		}
	}
}

// fix-bg #4 (fix-bf leftover): bench took demo.Echo/Echo as group
// "demo.Echo" of an interface "Echo" and waited for providers; it
// refuses the method-holding forms at once, with call's check.
func TestBG_BenchRefusesAMethodInServiceURL(t *testing.T) {
	t.Parallel()
	env := []string{"XDG_RUNTIME_DIR=" + t.TempDir()}
	for _, svc := range []string{"demo.Echo/Echo", "demo.Echo#Echo", "airnode://127.0.0.1:36824/demo.Echo/Echo"} {
		r := runCommand(t, 20*time.Second, env, "bench", "-n", "5", svc)
		if r.code != 2 || r.elapsed > 1500*time.Millisecond || !strings.Contains(r.stderr, `airnode: bench: SERVICE_URL "`+svc+`": "Echo" after`) ||
			!strings.Contains(r.stderr, "(bench --method Echo demo.Echo)") ||
			!strings.Contains(r.stderr, "for a direct call; the method is given by --method: airnode bench --method Echo demo.Echo") {
			t.Errorf("bench %s: exit %d after %v, stderr %q; want a usage error at once naming the method and listing the forms", svc, r.code, r.elapsed, r.stderr)
		}
	}
}

// fix-bg #5 (fix-bf leftover): list --explain warned that executes=abc
// on a consumer URL is a provider key with a malformed value, then
// failed with serve's provider-side error for it; the reference ignores
// it with that warning, and so does the explanation, at method level
// too.
func TestBG_ExplainIgnoresAMalformedProviderKey(t *testing.T) {
	t.Parallel()
	env := []string{"XDG_RUNTIME_DIR=" + t.TempDir()}
	for _, tc := range []struct{ url, key, value string }{
		{"demo.Echo?executes=abc", "executes", "abc"},
		{"demo.Echo?methods.Echo.executes=-1", "methods.Echo.executes", "-1"},
		{"airnode://127.0.0.1:36825/demo.Echo?Echo.executes=abc", "Echo.executes", "abc"},
	} {
		r := runCommand(t, 20*time.Second, env, "list", "--explain", tc.url)
		want := "warning: " + tc.key + "=" + tc.value + " is a provider key: it has no effect on a call; set it on the provider (serve URL: serve -p executes=..., or the export's params); its value " + tc.value + " is malformed too: want an integer from 0 (no limit) to 1048576\n"
		if r.code != 0 || !strings.Contains(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("list --explain %s: exit %d, stderr:\n%s\nwant exit 0 and only %q", tc.url, r.code, r.stderr, want)
		}
	}
	// a malformed consumer key still fails
	if r := runCommand(t, 20*time.Second, env, "list", "--explain", "demo.Echo?executes=abc&actives=-1"); r.code == 0 || !strings.Contains(r.stderr, `"actives"`) {
		t.Errorf("list --explain actives=-1: exit %d, stderr %s", r.code, r.stderr)
	}
}
