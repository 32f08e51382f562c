package zookeeper_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/internal/testproxy"
)

// The CI of 1dc9a01 failed on a data race inside go-zookeeper v1.0.4 (its
// newest release): after every reconnection, Conn.loop's sendSetWatches
// reads Conn.lastZxid while the new connection's recvLoop writes it
// (upstream go-zookeeper/zk PR #35, samuel/go-zookeeper #178, #260; never
// merged). Every registry that watches (each subscription, each
// config-center watch) reconnects with watches, so any test that cuts
// ZooKeeper's connection could trip it under -race. go.mod now replaces
// the module with third_party/go-zookeeper/zk, v1.0.4 with lastZxid read
// and written atomically. This test reconnects a zk.Conn with watches
// set while requests flow, and holds each SetWatches packet back for
// 50 ms so that answers to earlier requests reach recvLoop before it:
// under -race it failed at the first reconnection before the patch.
func TestZkLibraryReconnectsWithWatchesRaceFree(t *testing.T) {
	p := testproxy.New(t, server.Addr())
	conn, events, err := zk.Connect([]string{p.Addr()}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(discard{}),
		zk.WithDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
			c, err := net.DialTimeout(network, addr, timeout)
			if err != nil {
				return nil, err
			}
			return setWatchesLate{c}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitSession := func() {
		deadline := time.After(10 * time.Second)
		for conn.State() != zk.StateHasSession {
			select {
			case <-events:
			case <-deadline:
				t.Fatalf("no session within 10s (state %v)", conn.State())
			}
		}
	}
	waitSession()
	root := fmt.Sprintf("/zklibrace%d", time.Now().UnixNano())
	if _, err := conn.Create(root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Delete(root, -1) }()
	for i := 0; i < 8; i++ {
		if _, _, _, err := conn.ChildrenW(root); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := conn.ExistsW(fmt.Sprintf("%s/w%d", root, i)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, _, _ = conn.Exists(root) // each answer carries a zxid
			}
		}()
	}
	for i := 0; i < 5; i++ {
		p.Cut()
		time.Sleep(20 * time.Millisecond)
		waitSession()
		time.Sleep(30 * time.Millisecond)
	}
	cancel()
	wg.Wait()
}

// setWatchesLate holds back each SetWatches packet (opcode 101) by 50 ms.
// It shares nothing between its Write and Read, so it adds no
// synchronisation the race detector would see.
type setWatchesLate struct{ net.Conn }

func (c setWatchesLate) Write(b []byte) (int, error) {
	if len(b) >= 12 && binary.BigEndian.Uint32(b[8:12]) == 101 {
		time.Sleep(50 * time.Millisecond)
	}
	return c.Conn.Write(b)
}

type discard struct{}

func (discard) Printf(string, ...any) {}
