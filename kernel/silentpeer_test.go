package kernel

import (
	"io"
	"net"
	"strings"
	"testing"
)

// A listener that accepts and reads but never answers (an HTTP port, a
// hung process): the first call says nothing answered the first ping
// within connect.timeout and asks whether an airnode provider listens
// there, instead of "not connected yet (first connection attempt in
// progress)" (new-user tester: `airnode call` at serve's metrics port).
func TestFirstCallToASilentPeerSaysNothingAnswered(t *testing.T) {
	addr := silentPeer(t)
	r := refer(t, consumer(t), "airnode://"+addr+"/demo.Echo?connect.timeout=300ms&timeout=3s")
	_, err := r.Invoke(ctxT(t), "Echo", 1)
	if err == nil {
		t.Fatal("a call to a peer that never answers succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "attempt in progress") || !strings.Contains(msg, "nothing answered the first ping within 300ms") || !strings.Contains(msg, "airnode provider") {
		t.Fatalf("error %q; want it to say nothing answered the first ping within 300ms and ask for an airnode provider", msg)
	}
	if !strings.Contains(msg, "lossy or slow path: raise connect.timeout") { // tester26 finding 4
		t.Errorf("error %q; want it to name a lossy or slow path (raise connect.timeout) among the causes", msg)
	}
}

// silentPeer listens on loopback, accepts and reads every connection and
// never answers (an HTTP port, a hung process, a provider out of file
// descriptors whose kernel queues connections); it returns the address.
// Closed at the end of the test.
func silentPeer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	return l.Addr().String()
}
