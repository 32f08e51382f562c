package config_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
)

// The consumer: section's extension names (the defaults of every
// reference) are checked as a reference's params are, with the
// catalog's did-you-mean, and the error names the section, or the
// AIRNODE_CONSUMER_<KEY> variable that set the name.
func TestCheckReferencesChecksConsumer(t *testing.T) {
	cat := extensiontest.Catalogs()
	c, err := config.Load(config.Source{File: writeFile(t, "consumer: {loadbalance: roundrobn}\n")})
	if err != nil {
		t.Fatal(err)
	}
	err = c.CheckReferences(cat)
	if err == nil || !strings.Contains(err.Error(), `config: consumer: unknown loadbalance "roundrobn"`) ||
		!strings.Contains(err.Error(), `did you mean "roundrobin"?`) {
		t.Errorf("CheckReferences with consumer.loadbalance=roundrobn: %v", err)
	}
	c, err = config.Load(config.Source{File: writeFile(t, "consumer: {loadbalance: roundrobin}\n"),
		Environ: []string{"AIRNODE_CONSUMER_CLUSTER=failovr"}})
	if err != nil {
		t.Fatal(err)
	}
	err = c.CheckReferences(cat)
	if err == nil || !strings.Contains(err.Error(), `config: environment AIRNODE_CONSUMER_CLUSTER: unknown cluster "failovr"`) ||
		!strings.Contains(err.Error(), `did you mean "failover"?`) {
		t.Errorf("CheckReferences with AIRNODE_CONSUMER_CLUSTER=failovr: %v", err)
	}
	if name, env := c.ConsumerSource("loadbalance"); name != "consumer.loadbalance" || env {
		t.Errorf("ConsumerSource(loadbalance) = %q, %v; want the file's consumer.loadbalance", name, env)
	}
	c.Consumer["cluster"] = "failover"
	if err := c.CheckReferences(cat); err != nil {
		t.Errorf("CheckReferences with known names: %v", err)
	}
}
