package kernel

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// The keys only registries read are those of registry URLs: poll (file),
// root, session.timeout, file.cache (zookeeper); backup, connect.timeout
// and protocol are read by the kernel too and are not among them.
func TestRegistryKeys(t *testing.T) {
	got := RegistryKeys(testCatalogs(t))
	for k, want := range map[string]string{"poll": "[file]", "root": "[zookeeper]", "session.timeout": "[zookeeper]", "file.cache": "[zookeeper]"} {
		if fmt.Sprint(got[k]) != want {
			t.Errorf("RegistryKeys[%s] = %v, want %s", k, got[k], want)
		}
	}
	for _, k := range []string{"backup", "connect.timeout", "protocol", "timeout"} {
		if _, ok := got[k]; ok {
			t.Errorf("RegistryKeys has %s, which the kernel reads", k)
		}
	}
}

// A registry's key on a service URL (-p poll=5) does nothing: Export and
// Refer warn that it is a registry's, naming the registry; it is no typo
// (no did-you-mean), and a misspelling of one (fle.cache) still gets the
// key meant.
func TestRegistryKeyOnAServiceURLWarns(t *testing.T) {
	var logs logbuf.Buffer
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0))
	defer n.Close()
	u := spi.MustParse("airnode://127.0.0.1:0/demo.Echo?poll=5&session.timeout=5s&timeout=1s")
	if got := fmt.Sprint(n.registryKeysOf(u)); got != "[[poll file] [session.timeout zookeeper]]" {
		t.Errorf("registryKeysOf = %s", got)
	}
	if got := fmt.Sprint(n.likelyTypos(u.With("fle.cache", "/tmp/c"))); got != "[[fle.cache file.cache]]" {
		t.Errorf("likelyTypos = %s, want only the misspelling", got)
	}
	e, err := n.Export(ctxT(t), demo.New("p", 1), u)
	if err != nil {
		t.Fatal(err)
	}
	r, err := n.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?root=x"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	for _, want := range []string{"key=poll registry=file", "key=session.timeout registry=zookeeper", "key=root registry=zookeeper"} {
		if !strings.Contains(out, `msg="URL key is a registry's, read from the registry URL only (ignored on a service URL)" component=kernel service=demo.Echo `+want) {
			t.Errorf("no warning with %s; logs:\n%s", want, out)
		}
	}
	if strings.Contains(out, "did_you_mean") {
		t.Errorf("a registry key taken for a typo; logs:\n%s", out)
	}
}
