package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tester89 #1: AIRNODE_PROVIDER_LOADBALANCE=roundrobn with a file that has
// no protocol: section was blamed on the file (`config: plain.yaml: key
// "protocol": unknown loadbalance ...`), and without a file named no
// source at all. An extension name refused on the provider side names
// its source as the consumer side does: the AIRNODE_PROVIDER_<KEY>
// variable, the file's key, or the flag, whichever set the winning value.
func TestBQ_ProviderKeyErrorsNameTheirSource(t *testing.T) {
	t.Parallel()
	plain := writeConfig(t, "services: []\n")
	withProtocol := writeConfig(t, "protocol: {loadbalance: random, cluster: failover}\n")
	withService := writeConfig(t, "services:\n  - {interface: demo.Echo, params: {loadbalance: roundrobn}}\n")
	fromFile := writeConfig(t, "protocol: {cluster: failovr}\n")
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string // the first is stderr's start
		not  string
	}{
		{"loadbalance with a file without protocol:", []string{"AIRNODE_PROVIDER_LOADBALANCE=roundrobn"}, []string{"--config", plain},
			[]string{`airnode: serve: config: environment AIRNODE_PROVIDER_LOADBALANCE: unknown loadbalance "roundrobn" (available: `, `did you mean "roundrobin"?`}, plain},
		{"loadbalance without a file", []string{"AIRNODE_PROVIDER_LOADBALANCE=roundrobn"}, nil,
			[]string{`airnode: serve: config: environment AIRNODE_PROVIDER_LOADBALANCE: unknown loadbalance "roundrobn"`}, ""},
		{"the variable over the file's protocol:", []string{"AIRNODE_PROVIDER_CLUSTER=failovr"}, []string{"--config", withProtocol},
			[]string{`airnode: serve: config: environment AIRNODE_PROVIDER_CLUSTER: unknown cluster "failovr"`, `did you mean "failover"?`}, withProtocol},
		{"codec", []string{"AIRNODE_PROVIDER_CODEC=msgpak"}, nil,
			[]string{`airnode: serve: config: environment AIRNODE_PROVIDER_CODEC: unknown codec "msgpak"`}, ""},
		{"transport", []string{"AIRNODE_PROVIDER_TRANSPORT=smx"}, []string{"--config", plain},
			[]string{`airnode: serve: config: environment AIRNODE_PROVIDER_TRANSPORT: unknown transport "smx"`}, plain},
		{"heartbeat", []string{"AIRNODE_PROVIDER_HEARTBEAT=idel"}, nil,
			[]string{`airnode: serve: config: environment AIRNODE_PROVIDER_HEARTBEAT: unknown heartbeat "idel"`}, ""},
		{"filter", []string{"AIRNODE_PROVIDER_FILTER=tokn"}, nil,
			[]string{`airnode: serve: config: environment AIRNODE_PROVIDER_FILTER: unknown filter "tokn"`}, ""},
		{"dispatcher", []string{"AIRNODE_PROVIDER_DISPATCHER=dirct"}, []string{"--config", plain},
			[]string{`airnode: serve: config: environment AIRNODE_PROVIDER_DISPATCHER: invalid value "dirct" for URL key "dispatcher"`}, plain},
		// the file's protocol: when nothing set the key over it
		{"the file's protocol:", nil, []string{"--config", fromFile},
			[]string{`airnode: serve: config: ` + fromFile + `: key "protocol": unknown cluster "failovr"`}, "environment"},
		// a service's params win over the variable
		{"a service's params", []string{"AIRNODE_PROVIDER_LOADBALANCE=random"}, []string{"--config", withService},
			[]string{`airnode: serve: config: ` + withService + `: key "services[0].params": unknown loadbalance "roundrobn"`}, "environment"},
		// flags win over both, and are named as typed
		{"-p over the variable", []string{"AIRNODE_PROVIDER_LOADBALANCE=random"}, []string{"--config", withProtocol, "-p", "loadbalance=roundrobn"},
			[]string{`airnode: serve: -p loadbalance=roundrobn: service demo.Echo: unknown loadbalance "roundrobn"`}, "environment"},
		{"--transport", []string{"AIRNODE_PROVIDER_TRANSPORT=tcp"}, []string{"--transport", "smx"},
			[]string{`airnode: serve: --transport smx: service demo.Echo: unknown transport "smx"`}, "environment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"--listen", "127.0.0.1:0", "--registry", "file://" + dir}, tc.args...)
			r := runCommand(t, 20*time.Second, append([]string{"XDG_RUNTIME_DIR=" + dir}, tc.env...), "serve", args...)
			if strings.HasPrefix(tc.want[0], "airnode: serve: -") {
				// a key the command line gave: a usage error (fix-bs)
				expectUsage(t, r, tc.want[0], tc.want[1:]...)
			} else {
				expectFail(t, r, tc.want[0], tc.want[1:]...)
			}
			if tc.not != "" && strings.Contains(r.stderr, tc.not) {
				t.Errorf("stderr names %q, which did not set the refused key:\n%s", tc.not, r.stderr)
			}
			if strings.Contains(r.stderr, "serving") {
				t.Errorf("serve served before failing:\n%s", r.stderr)
			}
		})
	}

	// list --explain explains the provider side as serve exports it, and
	// names the variable alike
	r := runCommand(t, 20*time.Second, []string{"AIRNODE_PROVIDER_TRANSPORT=smx"}, "list", "--config", plain, "--explain", "airnode://127.0.0.1:35999/demo.Echo")
	expectFail(t, r, `airnode: list: config: environment AIRNODE_PROVIDER_TRANSPORT: unknown transport "smx"`)
}

// tester89 #2: serve --config c.toml (TOML) said only yaml.v3's
// "cannot unmarshal !!str ...". It says the file is read as YAML, that
// ".toml" is a format it does not read, and keeps the line.
func TestBQ_ServeWithATOMLFileSaysItReadsYAML(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(cfg, []byte("listen = \"127.0.0.1:35902\"\n\n[protocol]\ntransport = \"smux\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCommand(t, 20*time.Second, nil, "serve", "--config", cfg, "--registry", "memory://")
	expectFail(t, r, "airnode: serve: config: "+cfg+`: yaml: line 1: the top level is a string, not a mapping of keys (key: value lines) (line 1 is "listen = \"127.0.0.1:35902\"")`,
		"the configuration file is read as YAML (JSON parses too, as YAML)", `".toml" suggests TOML, which airnode does not read`)
	if strings.Contains(r.stderr, "cannot unmarshal") {
		t.Errorf("yaml.v3's words remain:\n%s", r.stderr)
	}
}

// tester89 #3: with a provider in the registry, list --explain
// 'demo.Echo?timeout=700ms' labelled the URL's value "consumer (timeout)"
// next to "consumer section (retries)" for the file's consumer: value.
// The explained URL's keys are "SERVICE_URL query (K)", with or without
// providers found.
func TestBQ_ExplainLabelsTheServiceURLQuery(t *testing.T) {
	t.Parallel()
	regDir := t.TempDir()
	p := serve(t, "127.0.0.1:0", regDir)
	cfg := writeConfig(t, "registry: file://"+regDir+"\nconsumer: {retries: \"1\"}\n")
	env := []string{"XDG_RUNTIME_DIR=" + regDir}
	for _, target := range []string{"demo.Echo?timeout=700ms", p.url("demo.Echo") + "?timeout=700ms"} {
		r := runCommand(t, 20*time.Second, env, "list", "--config", cfg, "--explain", target)
		if r.code != 0 || !strings.Contains(r.stdout, "providers  1 in ") && !strings.HasPrefix(target, "airnode://") ||
			!row("timeout", "service", "700ms", "SERVICE_URL query (timeout)").MatchString(r.stdout) ||
			!row("retries", "service", "1", "consumer section (retries)").MatchString(r.stdout) ||
			strings.Contains(r.stdout, "consumer (timeout)") {
			t.Errorf("list --explain %s: exit %d, want timeout FROM the SERVICE_URL query and retries FROM the consumer section:\n%s\n%s", target, r.code, r.stdout, r.stderr)
		}
	}
}
