package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// yamlNote is what Load adds to the error of every file that does not
// parse as YAML or whose top level is not a mapping.
const yamlNote = "; the configuration file is read as YAML (JSON parses too, as YAML)"

// tester89 #2: a TOML file given to --config said only `yaml: unmarshal
// errors: line 1: cannot unmarshal !!str ...`. A file that does not parse
// as YAML, or whose top level is not a mapping, says the configuration
// is YAML (JSON parsing too), names the format its extension suggests
// when that is another one, and keeps the parser's line.
func TestBQ_NotYAMLSaysTheFormat(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"c.toml", "listen = \":20880\"\n[protocol]\ntransport = \"smux\"\n",
			`yaml: line 1: the top level is a string, not a mapping of keys (key: value lines) (line 1 is "listen = \":20880\"")` + yamlNote +
				`: ".toml" suggests TOML, which airnode does not read; write the settings as YAML key: value lines (listen: ":20880")`},
		{"c.ini", "[node]\nlisten = :20880\n",
			`yaml: line 1: the top level is a list, not a mapping of keys (key: value lines) (line 1 is "[node]")` + yamlNote + `: ".ini" suggests INI, which airnode does not read`},
		{"airnode.properties", "listen=:20880\nregistry=memory://\n",
			`yaml: line 1: the top level is a string, not a mapping of keys (key: value lines) (line 1 is "listen=:20880")` + yamlNote + `: ".properties" suggests a Java properties file, which airnode does not read`},
		{"prod.env", "AIRNODE_LISTEN=:20880\n",
			`the top level is a string, not a mapping of keys (key: value lines) (line 1 is "AIRNODE_LISTEN=:20880")` + yamlNote + `: ".env" suggests a dotenv file (KEY=value lines), which airnode does not read`},
		// YAML's own mistakes: the note without a format
		{"list.yaml", "- listen: \":1\"\n", `yaml: line 1: the top level is a list, not a mapping of keys (key: value lines) (line 1 is "- listen: \":1\"")` + yamlNote},
		{"n.yaml", "42\n", `yaml: line 1: the top level is a number, not a mapping of keys (key: value lines) (line 1 is "42")` + yamlNote},
		{"bad.json", "{\"listen\": \":1\",\n", `yaml: line 1: did not find expected node content (line 1 is "{\"listen\": \":1\",")` + yamlNote},
	} {
		file := filepath.Join(dir, tc.name)
		if err := os.WriteFile(file, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := config.Load(config.Source{File: file})
		if err == nil || !strings.HasPrefix(err.Error(), "config: "+file+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant %q in it", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "cannot unmarshal") {
			t.Errorf("%s: yaml.v3's words remain: %v", tc.name, err)
		}
	}

	// JSON is read (it parses as YAML), whatever the extension; an empty
	// file, or a null one, is an empty configuration
	for name, body := range map[string]string{
		"c.json":     `{"listen": "127.0.0.1:35901", "protocol": {"weight": "7"}}`,
		"empty.yaml": "",
		"null.yaml":  "~\n",
	} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(config.Source{File: file})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if name == "c.json" && (c.Listen != "127.0.0.1:35901" || c.Protocol["weight"] != "7") {
			t.Errorf("c.json: listen %q, protocol %v", c.Listen, c.Protocol)
		}
	}
}
