package kernel

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// The provider URL key dispatcher: "adaptive" (default) serves calls on
// the connection's reader until one is slow, "direct" always there, "all"
// on the worker pool; anything else is an export error naming the key and
// the allowed values.
func TestDispatcherKey(t *testing.T) {
	for _, d := range []string{"adaptive", "all", "direct"} {
		n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
		t.Cleanup(func() { _ = n.Close() })
		e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?dispatcher="+d))
		if err != nil {
			t.Fatalf("dispatcher=%s: %v", d, err)
		}
		r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo")
		if v, err := r.Invoke(ctxT(t), "Echo", "hi"); err != nil || v != "hi" {
			t.Fatalf("dispatcher=%s: Echo = %v, %v", d, v, err)
		}
	}
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	_, err := n.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?dispatcher=message"))
	if err == nil || !strings.Contains(err.Error(), `"dispatcher"`) || !strings.Contains(err.Error(), "adaptive, all, direct") {
		t.Fatalf("dispatcher=message: %v, want an error naming the key and adaptive, all, direct", err)
	}
	_, err = n.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?dispatcher=dirct"))
	if err == nil || !strings.Contains(err.Error(), `did you mean "direct"?`) {
		t.Fatalf("dispatcher=dirct: %v, want a did-you-mean", err)
	}
}

// TestU3_DubboMethodTimeoutOnDirectURL: "Sleep.timeout=200&timeout=1000" on
// a consumer's direct URL (no methods=) gives Sleep 200 ms and Echo 1 s.
func TestU3_DubboMethodTimeoutOnDirectURL(t *testing.T) {
	_, e := provider(t)
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?Sleep.timeout=200&timeout=1000")
	start := time.Now()
	var ms int
	err := r.Call(ctxT(t), "Sleep", []any{600}, &ms)
	if st := spi.StatusOf(err); st != spi.StatusServerTimeout || time.Since(start) > 550*time.Millisecond {
		t.Fatalf("Sleep(600) with Sleep.timeout=200: %v after %v, want SERVER_TIMEOUT at about 200ms", err, time.Since(start))
	}
	if v, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || v != "x" {
		t.Fatalf("Echo: %v, %v", v, err)
	}
}

// timeout=0 is refused at Refer, naming the key, instead of
// calls failing with a connection error.
func TestTimeoutMustBePositive(t *testing.T) {
	_, e := provider(t)
	c := consumer(t)
	for _, q := range []string{"timeout=0", "methods.Sleep.timeout=0"} {
		_, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?methods=Sleep&"+q), spi.URL{})
		if err == nil || !strings.Contains(err.Error(), "timeout") || !strings.Contains(err.Error(), "positive") {
			t.Errorf("%s: %v, want an error naming timeout and asking for a positive duration", q, err)
		}
	}
}

// Server keys (dispatcher, payload, ...) belong to the listening address:
// a second service on the address that sets one to another value is
// refused naming the key, a bad value is refused even there, and the same
// value or none is accepted.
func TestServerKeysPerAddress(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	addr := e.URL().Address()
	for _, tc := range []struct {
		query, want string // want: "" to accept, else a substring of the error
	}{
		{"group=a&dispatcher=direct", `"dispatcher" is "direct"`},
		{"group=b&dispatcher=drect", `did you mean "direct"?`},
		{"group=c&payload=1MiB", `"payload" is "1MiB"`},
		// tester8: the server's heartbeat is per connection, so its
		// interval and timeout belong to the address too.
		{"group=f&heartbeat.interval=5s", `"heartbeat.interval" is "5s"`},
		{"group=g&heartbeat.timeout=300s", `"heartbeat.timeout" is "300s"`},
		{"group=d&dispatcher=adaptive", ""},
		{"group=e", ""},
	} {
		_, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://"+addr+"/demo.Echo?"+tc.query))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want it exported", tc.query, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error with %s", tc.query, err, tc.want)
		}
	}
}

// A reference whose URL names its providers talks to them directly even
// when a registry URL is given too, as Dubbo's direct url does: the
// registry here has no provider and would fail the call.
func TestReferDirectURLBeatsRegistry(t *testing.T) {
	_, e := provider(t)
	c := consumer(t)
	empty := spi.MustParse("file://" + t.TempDir())
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo"), empty)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if v, err := r.Invoke(ctxT(t), "Echo", "direct"); err != nil || v != "direct" {
		t.Fatalf("Echo through a direct URL with a registry given: %v, %v", v, err)
	}
}

// A method-level form of a server key has no effect and is refused at
// export, naming the key.
func TestServerKeysHaveNoMethodLevel(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	for _, q := range []string{"methods.Sleep.dispatcher=direct", "Sleep.dispatcher=bogus", "methods.Echo.payload=1MiB"} {
		_, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+q))
		k, _, _ := strings.Cut(q, "=")
		if err == nil || !strings.Contains(err.Error(), `"`+k+`"`) || !strings.Contains(err.Error(), "per listening address") {
			t.Errorf("%s: %v, want an error naming %q as per listening address", q, err, k)
		}
	}
}

// A provider bound to every interface publishes the machine's first
// non-loopback address (Dubbo's NetUtils.getLocalHost), so consumers on
// other machines can dial it; one bound to an address publishes that.
func TestAdvertisedAddress(t *testing.T) {
	want := localIP()
	if ip := net.ParseIP(want); ip == nil || ip.IsUnspecified() || (ip.IsLoopback() && want != "127.0.0.1") {
		t.Fatalf("localIP() = %q, want a non-loopback address or 127.0.0.1", want)
	}
	for _, tc := range []struct {
		addr      net.Addr
		requested string
		host      string
	}{
		{&net.TCPAddr{IP: net.IPv4zero, Port: 20880}, "", want},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 20880}, "", want},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 20880}, "0.0.0.0", want},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 20880}, "", "127.0.0.1"},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 20880}, "localhost", "127.0.0.1"}, // a name: the IP bound
	} {
		if host, port := advertised(tc.addr, tc.requested); host != tc.host || port != 20880 {
			t.Errorf("advertised(%v, %q) = %s:%d, want %s:20880", tc.addr, tc.requested, host, port, tc.host)
		}
	}
	t.Logf("this machine publishes %s for a wildcard listen", want)
}

// A key one or two edits from one airnode reads is reported as a likely
// typo with the key meant; keys airnode or its bundled extensions read, and
// keys far from any, are not.
func TestLikelyTypos(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	u := spi.MustParse("airnode://h:1/demo.Echo?timout=2s&methods.Echo.retires=1&loadbalanse=random" +
		"&timeout=1s&Echo.timeout=5&accesslog=true&forks=2&tls.cert=x&hash.nodes=10&smux.buffer=1&weight=5&my.app.flag=1&color=red")
	got := fmt.Sprint(n.likelyTypos(u))
	want := "[[loadbalanse loadbalance] [methods.Echo.retires methods.Echo.retries] [timout timeout]]"
	if got != want {
		t.Fatalf("likelyTypos = %s, want %s", got, want)
	}
}

// One method key written both ways (methods.Sleep.timeout and Dubbo's
// Sleep.timeout) with different values is refused at Refer, naming both;
// the same value both ways is accepted.
func TestMethodKeyBothFormsMustAgree(t *testing.T) {
	_, e := provider(t)
	c := consumer(t)
	base := "airnode://" + e.URL().Address() + "/demo.Echo?"
	_, err := c.Refer(ctxT(t), spi.MustParse(base+"methods.Sleep.timeout=200ms&Sleep.timeout=300ms"), spi.URL{})
	if err == nil || !strings.Contains(err.Error(), `"methods.Sleep.timeout"`) || !strings.Contains(err.Error(), `"Sleep.timeout"`) {
		t.Fatalf("different values: %v, want an error naming both keys", err)
	}
	r, err := c.Refer(ctxT(t), spi.MustParse(base+"methods.Sleep.timeout=200ms&Sleep.timeout=200ms"), spi.URL{})
	if err != nil {
		t.Fatalf("same value both ways: %v", err)
	}
	_ = r.Close()
}

// A provider is in one group and one version: "*" and lists are a
// reference's patterns (helper's leftover of tester10 #6).
func TestExportRefusesGroupAndVersionPatterns(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	for _, q := range []string{"group=*", "group=a,b", "version=*", "version=1.0,2.0"} {
		_, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+q))
		if err == nil || !strings.Contains(err.Error(), "a provider is in one") {
			t.Errorf("%s: %v, want it refused", q, err)
		}
	}
}
