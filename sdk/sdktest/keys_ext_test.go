package sdktest_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/sdk/sdktest"
	"github.com/airnode/airnode/spi"
)

var acmeKeys = []spi.KeyDoc{
	{Key: "acme.choices", Type: spi.KeyTypeInt, Default: "2", Doc: "providers drawn per call, 2..8"},
	{Key: "acme.mode", Type: spi.KeyTypeEnum, Values: []string{"fast", "fair"}, Default: "fast", Doc: "how ties are broken"},
}

// A balancer, a registry and a filter that declare URL keys.
type (
	acmeLB       struct{ spi.LoadBalanceBuilder }
	acmeRegistry struct{ spi.RegistryBuilder }
	acmeFilter   struct{ tokenFilter }
)

func (acmeLB) Name() string             { return "acme" }
func (acmeLB) Keys() []spi.KeyDoc       { return acmeKeys }
func (acmeRegistry) Name() string       { return "acmereg" }
func (acmeRegistry) Keys() []spi.KeyDoc { return acmeKeys }
func (acmeFilter) Keys() []spi.KeyDoc   { return acmeKeys }

// The builders sdktest returns declare the keys the plugin declares, as
// they crossed the plugin protocol (they declared none before, so a test
// saw no key docs and no typo warnings for them where the host does).
func TestHostSideBuildersDeclareThePluginsKeys(t *testing.T) {
	for name, b := range map[string]any{
		"loadbalance": sdktest.LoadBalance(t, acmeLB{random.New()}),
		"registry":    sdktest.Registry(t, acmeRegistry{memory.NewBuilder()}),
		"filter":      sdktest.Filter(t, acmeFilter{}),
	} {
		d, ok := b.(spi.KeyDescriber)
		if !ok {
			t.Errorf("%s: host-side builder %T declares no keys", name, b)
			continue
		}
		if got := d.Keys(); !slices.EqualFunc(got, acmeKeys, func(a, b spi.KeyDoc) bool {
			return a.Key == b.Key && a.Type == b.Type && a.Default == b.Default && a.Doc == b.Doc && slices.Equal(a.Values, b.Values)
		}) {
			t.Errorf("%s: keys %+v, want %+v", name, got, acmeKeys)
		}
	}
}

// A catalog holding the plugin's balancer, as sdktest builds it, counts
// its keys as the host's does: Export warns of a misspelt one naming the
// declared key, and not of the declared key itself.
func TestTypoWarningsSeeThePluginsKeys(t *testing.T) {
	cat := bundle.Catalogs()
	if err := cat.LoadBalance.Register(sdktest.LoadBalance(t, acmeLB{random.New()}), extension.Origin("plugin acme")); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(kernel.KnownKeys(cat), "acme.choices") {
		t.Fatalf("kernel.KnownKeys lacks the plugin's acme.choices")
	}
	var logs logbuf.Buffer
	n := kernel.NewNode(cat, kernel.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?loadbalance=acme&acme.choises=3&acme.mode=fair")); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if !strings.Contains(out, "key=acme.choises did_you_mean=acme.choices") {
		t.Errorf("no typo warning for acme.choises naming acme.choices:\n%s", out)
	}
	// acme.mode is the plugin's declared key: no typo warning (the
	// provider-side "balancer key has no effect" warning is about where
	// it is set, not whether it exists)
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "key=acme.mode") && strings.Contains(line, kernel.UnreadKeyWords) {
			t.Errorf("the declared key acme.mode was warned of as unknown:\n%s", out)
		}
	}
}
