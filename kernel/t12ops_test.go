package kernel

import (
	"io"
	"net"
	"testing"
)

// TestT12Ops3_ConnectionsCountsAnsweredOnes (tester12 finding 3):
// Reference.Connections, which bench reports, counts as up only the
// connections that answered their first ping: with connections=3 to a
// provider and to a peer that accepts TCP but never answers (what a
// provider out of file descriptors looks like: its kernel queues the
// connection), 3 of 6 are up. The per-provider filter chain (actives)
// is looked through.
func TestT12Ops3_ConnectionsCountsAnsweredOnes(t *testing.T) {
	_, e := provider(t)
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
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+","+l.Addr().String()+
		"/demo.Echo?connections=3&connect.timeout=300ms&actives=100")
	if _, ok := r.dir.All()[0].(*filterInvoker); !ok {
		t.Fatalf("provider invoker %T, want the per-provider filter chain (actives=100)", r.dir.All()[0])
	}
	eventually(t, "3 of 6 connections up", func() bool {
		up, asked := r.Connections()
		return up == 3 && asked == 6
	})
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	if up, asked := r.Connections(); up != 3 || asked != 6 {
		t.Fatalf("Connections() = %d up of %d, want 3 of 6", up, asked)
	}
}
