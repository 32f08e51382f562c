package kernel

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// The advertise key publishes another address than the one listened on:
// a host alone keeps the bound port, :PORT keeps the host, an interface
// name publishes its address; the key itself is not published, and a bad
// value fails Export naming the key, having listened on nothing.
func TestExportAdvertiseAddr(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer n.Close()
	for i, tc := range []struct {
		listen, advertise string
		host              string // "" : the listen host
		port              int    // 0: the bound port
	}{
		{"0.0.0.0:0", "127.0.0.2", "127.0.0.2", 0},
		{"127.0.0.1:0", "127.0.0.2:30880", "127.0.0.2", 30880},
		{"127.0.0.1:0", ":30881", "127.0.0.1", 30881},
		{"127.0.0.1:0", "[::1]:30882", "::1", 30882},
		{"127.0.0.1:0", "node7.example:30883", "node7.example", 30883},
		{"127.0.0.1:0", "lo", "127.0.0.1", 0}, // Linux's loopback interface
		{"localhost:0", "", "127.0.0.1", 0},   // a name publishes the IP bound
	} {
		if tc.advertise == "lo" {
			if _, err := net.InterfaceByName("lo"); err != nil {
				t.Logf("no interface lo: %v", err)
				continue
			}
		}
		u := "airnode://" + tc.listen + "/demo.Echo?group=g" + strconv.Itoa(i)
		if tc.advertise != "" {
			u += "&advertise=" + tc.advertise
		}
		e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse(u))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		pu := e.URL()
		if _, ok := pu.Param(keyAdvertise); ok {
			t.Errorf("%s: published URL %s carries the advertise key", u, pu)
		}
		if pu.Host() != tc.host || tc.port != 0 && pu.Port() != tc.port || tc.port == 0 && pu.Port() != e.srv.port {
			t.Errorf("%s: published %s, want host %s port %d (bound %d)", u, pu.Address(), tc.host, tc.port, e.srv.port)
		}
	}

	servers := len(n.servers)
	for _, bad := range []string{"::1", "0.0.0.0", "127.0.0.1:0", "127.0.0.1:99999", "http://x", "a%20b", "10.0.0.256", "[10.0.0.1]:5"} {
		_, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?group=bad&advertise="+bad))
		if err == nil || !strings.Contains(err.Error(), `URL key "advertise"`) {
			t.Errorf("advertise=%s: %v, want an error naming the key", bad, err)
		}
	}
	if len(n.servers) != servers {
		t.Errorf("the refused exports made servers: %d, before %d", len(n.servers), servers)
	}
}

// A provider listening on 0.0.0.0 and advertising 127.0.0.2 (all of
// 127/8 is loopback on Linux: a second "interface" address) is found by
// a consumer through a file registry at 127.0.0.2 and called there.
func TestExportAdvertiseAddrReachedThroughRegistry(t *testing.T) {
	reg := spi.MustParse("file://" + t.TempDir() + "?poll=50ms")
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0), WithRegistry(reg))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://0.0.0.0:0/demo.Echo?advertise=127.0.0.2"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(testCatalogs(t), WithLogger(quiet), WithRegistry(reg))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?retries=0"), reg)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the provider listed", func() bool { return len(r.Providers()) == 1 })
	if got := r.Providers()[0].URL(); got.Host() != "127.0.0.2" || got.Port() != e.srv.port {
		t.Fatalf("listed %s, want 127.0.0.2:%d", got.Address(), e.srv.port)
	}
	var out string
	if err := r.Call(ctxT(t), "Echo", []any{"via 127.0.0.2"}, &out); err != nil || out != "via 127.0.0.2" {
		t.Fatalf("Echo = %q, %v", out, err)
	}
}

// A listen host name with several addresses is warned of once, naming
// them; one address, or only loopback ones (localhost), is not.
func TestExportAddrNameWithSeveralAddressesWarns(t *testing.T) {
	lookup := func(ips ...string) func(context.Context, string) ([]net.IPAddr, error) {
		return func(context.Context, string) ([]net.IPAddr, error) {
			var out []net.IPAddr
			for _, s := range ips {
				out = append(out, net.IPAddr{IP: net.ParseIP(s)})
			}
			if len(out) == 0 {
				return nil, errors.New("no such host")
			}
			return out, nil
		}
	}
	bound := &net.TCPAddr{IP: net.ParseIP("10.216.1.1"), Port: 24003}
	for _, tc := range []struct {
		host string
		ips  []string
		warn bool
	}{
		{"svc16", []string{"10.216.1.1", "10.216.2.1"}, true},
		{"svc16", []string{"10.216.1.1", "10.216.1.1"}, false},
		{"localhost", []string{"127.0.0.1", "::1"}, false},
		{"gone", nil, false},
		{"10.216.1.1", []string{"10.216.1.1", "10.216.2.1"}, false}, // an IP: no lookup
	} {
		var logs syncBuffer
		warnNameAddresses(slog.New(slog.NewTextHandler(&logs, nil)), lookup(tc.ips...), tc.host, bound)
		got := logs.String()
		if tc.warn != (got != "") {
			t.Errorf("%s %v: log %q, want a warning: %v", tc.host, tc.ips, got, tc.warn)
		}
		if tc.warn && (strings.Count(got, "\n") != 1 || !strings.Contains(got, "level=WARN") || !strings.Contains(got, "addresses=10.216.1.1,10.216.2.1") ||
			!strings.Contains(got, "listen on 0.0.0.0:24003") || !strings.Contains(got, "advertise")) {
			t.Errorf("%s: warning %q lacks one line at WARN naming the addresses and the fix", tc.host, got)
		}
	}
}

// Dubbo's address keys (anyhost, host, bind.ip, bind.port, register.ip)
// get the warning of Dubbo keys airnode does not implement, pointing to
// advertise; advertise itself is a kernel key, neither a typo nor
// Dubbo's.
func TestTypoDubboAddressKeysPointToAdvertise(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	u := spi.MustParse("airnode://127.0.0.1:1/t.G?anyhost=true&host=10.0.0.1&bind.ip=10.0.0.2&bind.port=1&register.ip=10.0.0.3&advertise=10.0.0.4")
	var keys []string
	for _, k := range n.unsupportedKeys(u) {
		keys = append(keys, k[0])
		if !strings.Contains(k[1], "--advertise HOST[:PORT]") {
			t.Errorf("%s: advice %q does not name --advertise", k[0], k[1])
		}
	}
	if got, want := strings.Join(keys, " "), "anyhost bind.ip bind.port host register.ip"; got != want {
		t.Errorf("unsupportedKeys = %s, want %s", got, want)
	}
	if typos := n.likelyTypos(u); len(typos) != 0 {
		t.Errorf("likelyTypos = %v", typos)
	}
}

// PlannedAddress says, before listening, what Export will publish.
func TestPlannedAddr(t *testing.T) {
	for u, want := range map[string]string{
		"airnode://127.0.0.1:0/x":                                    "127.0.0.1:0",
		"airnode://localhost:7/x":                                    "127.0.0.1:7",
		"airnode://0.0.0.0:7/x":                                      net.JoinHostPort(localIP(), "7"),
		"airnode://:7/x?advertise=127.0.0.2":                         "127.0.0.2:7",
		"airnode://127.0.0.1:7/x?advertise=:9":                       "127.0.0.1:9",
		"airnode://127.0.0.1:0/x?advertise=[::1]:9":                  "[::1]:9",
		"airnode://no-such-host-16.invalid:7/x?advertise=10.0.0.1:9": "10.0.0.1:9",
	} {
		got, err := PlannedAddress(spi.MustParse(u))
		if err != nil || got != want {
			t.Errorf("PlannedAddress(%s) = %q, %v; want %q", u, got, err, want)
		}
	}
	for _, u := range []string{"airnode://127.0.0.1:7/x?advertise=0.0.0.0", "airnode://127.0.0.1:7/x?advertise=lo:0"} { // no DNS look-up in tests
		if got, err := PlannedAddress(spi.MustParse(u)); err == nil {
			t.Errorf("PlannedAddress(%s) = %q, want an error", u, got)
		}
	}
}
