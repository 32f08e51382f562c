package config_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// tester nu77 #5: a plugin's required key is a bool allowed only on a
// filter plugin; on another point it is refused naming the key and what
// is allowed, and a misspelling of it gets the did-you-mean of the
// other plugin keys.
func TestPluginRequiredOnlyOnFilters(t *testing.T) {
	c, err := config.Load(config.Source{File: writeFile(t, `
plugins:
  - {name: acme.auth, point: filter, command: /bin/auth, required: true}
  - {name: acme.tag, point: filter, command: /bin/tag}
`)})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Plugins[0].Required || c.Plugins[1].Required {
		t.Errorf("required: %v %v, want true false", c.Plugins[0].Required, c.Plugins[1].Required)
	}

	for _, point := range []string{"loadbalance", "registry", "service"} {
		file := writeFile(t, "plugins:\n  - {name: acme.x, point: "+point+", command: /bin/x, required: true}\n")
		_, err := config.Load(config.Source{File: file})
		want := `config: ` + file + `: key "plugins[0].required": true is allowed only with point: filter (a consumer then fails, rather than skips, a filter plugin that cannot start or is down), not with point: ` + point + `; remove the key`
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v\nwant %s", point, err, want)
		}
	}
	// false is the default, allowed anywhere
	if _, err := config.Load(config.Source{File: writeFile(t, "plugins:\n  - {name: acme.x, point: loadbalance, command: /bin/x, required: false}\n")}); err != nil {
		t.Errorf("required: false on a balancer: %v", err)
	}

	file := writeFile(t, "plugins:\n  - {name: acme.x, point: filter, command: /bin/x, requierd: true}\n")
	_, err = config.Load(config.Source{File: file})
	if want := `unknown key "plugins[0].requierd"; did you mean "plugins[0].required"?`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("misspelt required: %v, want %s", err, want)
	}
	_, err = config.Load(config.Source{File: writeFile(t, "plugins:\n  - {name: acme.x, point: filter, command: /bin/x, required: maybe}\n")})
	if err == nil || !strings.Contains(err.Error(), `"plugins[0].required"`) || !strings.Contains(err.Error(), "is not a bool") {
		t.Errorf("required: maybe: %v", err)
	}
}
