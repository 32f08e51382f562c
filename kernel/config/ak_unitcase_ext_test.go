package config_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// tester79 #5: "timeout: 5S" has a unit, in the wrong case: the file's
// error says units are lower case (5s) instead of asking for a unit, in a
// reference's params and in a duration field.
func TestFileDurationUnitCase(t *testing.T) {
	for yaml, want := range map[string]string{
		"references:\n  - {interface: shop.Inventory, params: {timeout: 5S}}\n": `key "references[0].params": invalid value "5S" for URL key "timeout": want a duration with its unit in lower case, such as 5s (units are lower case`,
		"shutdown:\n  wait: 2MS\n": `key "shutdown.wait": "2MS" is not a duration: want a duration with its unit in lower case, such as 2ms`,
	} {
		_, err := config.Load(config.Source{File: writeFile(t, yaml)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q) = %v, want it to contain %s", yaml, err, want)
		}
	}
}
