package kernel

import (
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testaddr"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// checkFilter is a provider filter activated by "check.n", which must be
// an integer; it remembers the URLs it was built with.
type checkFilter struct {
	mu    sync.Mutex
	built []spi.URL
}

func (*checkFilter) Name() string { return "acme.check" }
func (*checkFilter) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Provider}, Key: "check.n"}
}
func (f *checkFilter) Build(u spi.URL) (spi.Filter, error) {
	if _, err := u.Int("check.n", 0); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.built = append(f.built, u)
	f.mu.Unlock()
	return tagInvoke{name: "check", side: string(spi.Provider)}, nil
}

func (f *checkFilter) last() spi.URL {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.built[len(f.built)-1]
}

// Tester9 #2: a provider filter that cannot be built (a bad value of its
// key) fails Export before the provider listens or registers, naming the
// service, the filter and the key, instead of a registered provider that
// answers every call with the filter's error.
func TestExportBuildsTheFilterChainBeforeListening(t *testing.T) {
	cat := testCatalogs(t)
	if err := cat.Filter.Register(&checkFilter{}, extension.Bundled); err != nil {
		t.Fatal(err)
	}
	var log logbuf.Buffer
	reg := spi.MustParse("memory://")
	p := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&log, nil))), WithShutdownWait(0), WithRegistry(reg))
	defer p.Close()
	addr := testaddr.Reserved(t)
	u := spi.MustParse("airnode://" + addr + "/demo.Echo?check.n=abc")
	_, err := p.Export(ctxT(t), demo.New("p", 100), u)
	want := `kernel: export demo.Echo: filter "acme.check": invalid value "abc" for URL key "check.n"`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Export: %v; want %q...", err, want)
	}
	if strings.Contains(log.String(), "kernel: listening") {
		t.Errorf("the provider listened before failing:\n%s", log.String())
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = c.Close()
		t.Errorf("something listens on %s after the failed export", addr)
	}
	r, err := p.registry(ctxT(t), "test", reg)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := r.Lookup(ctxT(t), spi.MustParse("airnode:///demo.Echo?side=consumer")); err != nil || len(l) != 0 {
		t.Errorf("registry lists %v (%v) after the failed export; want nothing", l, err)
	}
}

// The filters of an export see the URL it publishes: its bound port when
// it asked for port 0, a fixed port's address as given.
func TestProviderFiltersSeeThePublishedURL(t *testing.T) {
	cat := testCatalogs(t)
	cf := &checkFilter{}
	if err := cat.Filter.Register(cf, extension.Bundled); err != nil {
		t.Fatal(err)
	}
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	for _, addr := range []string{"127.0.0.1:0", testaddr.Reserved(t)} {
		e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://"+addr+"/demo.Echo?group=g"+strconv.Itoa(len(addr))+"&check.n=1"))
		if err != nil {
			t.Fatal(err)
		}
		if got := cf.last(); got.Address() != e.URL().Address() || got.String() != e.URL().String() {
			t.Errorf("%s: filter built with %s, export published %s", addr, got, e.URL())
		}
	}
}

// A consumer filter that cannot be built fails Refer, naming the
// service, the filter and the key, not every call.
func TestReferBuildsTheFilterChain(t *testing.T) {
	cat := testCatalogs(t)
	if err := cat.Filter.Register(&checkFilter{}, extension.Bundled); err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	_, err := c.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/demo.Echo?filter=acme.check&check.n=abc"), spi.URL{})
	want := `kernel: refer demo.Echo: filter "acme.check": invalid value "abc" for URL key "check.n"`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Refer: %v; want %q...", err, want)
	}
}
