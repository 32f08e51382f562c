package zktest_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/airnode/airnode/internal/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStartStopRestart(t *testing.T) {
	s, err := zktest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, events, err := zk.Connect([]string{s.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.Close()
		for range events { // closed once zk's goroutines are done
		}
	}()
	if _, err := c.Create("/x", []byte("1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if s.Running() {
		t.Fatal("running after Stop")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	// A minute: the client's session (10 s) expired while the server was
	// down, and a just-restarted JVM on a loaded machine can miss the
	// client's 1 s handshake more than once (no data after 20 s in the
	// first CI run on a fresh machine, load 6).
	deadline := time.Now().Add(time.Minute)
	for {
		data, _, err := c.Get("/x")
		if err == nil {
			if string(data) != "1" {
				t.Fatalf("data after restart = %q", data)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no data after restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
