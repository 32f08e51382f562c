package exchange

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// startTLSServer is startServer behind TLS (every frame the consumer
// writes is a TLS record of its own, which the provider reads alone),
// with a loopback fault proxy in front; it returns the fixture, the proxy
// and a raw TLS connection to the provider through the proxy.
func startTLSServer(t *testing.T) (*fixture, *testproxy.Proxy, *tls.Conn) {
	t.Helper()
	ca := tlsconftest.NewCA(t, "hb3")
	certFile, keyFile := ca.Issue(t, "provider.test")
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := startServerOn(t, tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}}), false, nil) // guard defaults: 1 s, 2 strikes
	p := testproxy.New(t, f.addr())
	pem, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second}, "tcp", p.Addr(), &tls.Config{RootCAs: roots, ServerName: "provider.test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return f, p, c
}

// pingFrame is a two-way heartbeat request with id.
func pingFrame(id uint64) []byte {
	return protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: id}.Append(nil)
}

// queueAnswers writes calls requests for answers of size bytes on c and
// waits until the provider has at least least bytes of them unsent; it
// returns the provider's channel.
func queueAnswers(t *testing.T, f *fixture, c net.Conn, calls, size int, least int64) *Channel {
	t.Helper()
	for id := 1; id <= calls; id++ {
		if _, err := c.Write(requestFrame(t, uint64(id), echoInv("Payload", size))); err != nil {
			t.Fatal(err)
		}
	}
	prov := providerChannel(t, f)
	if !waitFor(20*time.Second, func() bool { return prov.Stats().Unsent >= least }) {
		t.Fatalf("the provider's unsent answers never reached %d KiB: %+v", least>>10, prov.Stats())
	}
	return prov
}

// readAnswers reads from c until calls answers of size bytes and pongs
// ping answers came, failing at an error (the channel closed: the
// provider's "too many pings" line is shown) or a bad answer, and fails
// when the provider logged "too many pings".
func readAnswers(t *testing.T, f *fixture, c net.Conn, calls, size, pongs int) {
	t.Helper()
	br := bufio.NewReaderSize(c, 64<<10)
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	var answers, pinged int
	for answers < calls || pinged < pongs {
		h, body, err := readFrame(br)
		if err != nil {
			t.Fatalf("after %d answers and %d ping answers: %v (channel closed? %s)", answers, pinged, err, f.logs.find("too many pings"))
		}
		switch {
		case h.IsRequest():
			t.Fatalf("unexpected request from the provider: %+v", h)
		case h.IsEvent():
			pinged++
		case h.Status != spi.StatusOK || len(body) < size:
			t.Fatalf("answer %d: status %d, %d bytes", h.ID, h.Status, len(body))
		default:
			answers++
		}
	}
	if r := f.logs.find("too many pings"); r != "" {
		t.Fatal(r)
	}
}

// The pings a consumer sends while the provider does not read it, because
// the consumer's answers are unsent over highWater, are a backlog the
// provider reads at once when it reads again: they are one read batch for
// the ping-flood guard, and a busy connection is not cut. Tester30 finding
// 7: a dual heartbeat at 1 s over TLS, a 20 % loss 4 Mbit/s link and 8 MiB
// of 4 MiB answers unsent; the provider read the dozen pings queued over
// the stall one TLS record at a time, judged each, and closed the
// connection as "too many pings ... on an idle connection". Here the
// proxy's Pause holds 20 pings written 10 ms apart and its release
// delivers them together while the provider is stopped; every answer and
// every ping's answer arrives and the guard logs nothing.
func TestHB3_PingsQueuedWhileStalledOverTLSAreNotAFlood(t *testing.T) {
	f, p, c := startTLSServer(t)
	p.SetRate(0, 8<<20) // the consumer's download drains at 8 MiB/s: the provider reads again well after the pings arrived
	const calls, answer, pings = 12, 4 << 20, 20
	prov := queueAnswers(t, f, c, calls, answer, highWater)
	// A frame read over highWater stops the reader (its check comes
	// before each frame): the consumer's next heartbeat does that.
	if _, err := c.Write(pingFrame(calls + pings + 1)); err != nil {
		t.Fatal(err)
	}
	if !waitFor(5*time.Second, func() bool { return f.logs.find("stopped reading from") != "" }) {
		t.Fatalf("the provider never stopped reading for its unsent answers: %+v", prov.Stats())
	}
	p.Pause(true)
	for id := uint64(calls + 1); id <= calls+pings; id++ {
		if _, err := c.Write(pingFrame(id)); err != nil { // one TLS record each
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Pause(false) // the pings arrive together, the provider still stopped
	start := time.Now()
	readAnswers(t, f, c, calls, answer, pings+1)
	t.Logf("%d answers of %d MiB and %d ping answers read in %v after the pings' release", calls, answer>>20, pings+1, time.Since(start).Round(time.Millisecond))
}

// The guard still closes a flood over TLS, where each ping is a read of
// its own: back-to-back pings on an idle connection (the stall backlog's
// one-batch rule applies only right after the provider read again).
func TestHB3_PingFloodOverTLSIsClosed(t *testing.T) {
	f, _, c := startTLSServer(t)
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var err error
	n := 0
	for id := uint64(1); id <= 4*pingBurst && err == nil; id++ {
		if _, err = c.Write(pingFrame(id)); err == nil {
			_, _, err = readFrame(br)
			n++
		}
	}
	if err == nil {
		t.Fatalf("%d back-to-back pings over TLS all answered; want the guard to close the connection", n)
	}
	if !waitFor(5*time.Second, func() bool { return f.logs.find("too many pings") != "" }) {
		t.Fatalf("closed after %d pings (%v) without \"too many pings\" in the provider's log", n, err)
	}
	t.Logf("closed after %d pings: %s", n, f.logs.find("too many pings"))
}

// A connection whose answers are still being written (busyUnsent bytes
// queued for a slow consumer) is not idle: the consumer's heartbeats check
// that the provider is alive, as during a call, and pings 20 ms apart are
// answered, where the idle rule (one per ¾ s beyond a burst of 8) closed
// the connection after a dozen. The proxy's rate keeps 6 MiB of answers
// queued while the pings arrive one by one.
func TestHB3_PingsWhileAnswersAreUnsentAreAnswered(t *testing.T) {
	f := startServer(t, false, nil) // guard defaults: 1 s, 2 strikes
	p := testproxy.New(t, f.addr())
	p.SetRate(0, 64<<10)
	c, err := net.DialTimeout("tcp", p.Addr(), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	const calls, answer, pings = 2, 3 << 20, 20
	prov := queueAnswers(t, f, c, calls, answer, busyUnsent)
	for id := uint64(calls + 1); id <= calls+pings; id++ {
		if _, err := c.Write(pingFrame(id)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if u := prov.Stats().Unsent; u < busyUnsent {
		t.Fatalf("only %d bytes left unsent after the pings: the test did not keep the connection busy", u)
	}
	p.SetRate(0, 0)
	readAnswers(t, f, c, calls, answer, pings)
}
