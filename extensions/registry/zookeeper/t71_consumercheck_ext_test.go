package zookeeper_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// Tester71 #11: a consumer started before its ZooKeeper failed Subscribe
// after connect.timeout (no session, no file.cache entry), so Refer
// failed and Reference.WaitAvailable could never wait for a provider.
// With the registry URL's check=false (Dubbo's registry check off) the
// first list is empty and the providers come once ZooKeeper answers;
// with the default check=true Subscribe still fails, and says check=false.
func TestT71_ConsumerCheckFalseStartsBeforeZooKeeper(t *testing.T) {
	px := testproxy.New(t, server.Addr())
	unreachable(px)
	build := func(q string, l *lineLog) spi.Registry {
		t.Helper()
		b := zookeeper.Builder{}
		if l != nil {
			b.Logger = slog.New(l)
		}
		reg, err := b.Build(spi.MustParse("zookeeper://" + px.Addr() + "?root=t71check" + q))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = reg.Close() })
		return reg
	}

	_, err := build("&connect.timeout=300ms", nil).Subscribe(ctx(t), consumer, func([]spi.URL) {})
	if err == nil || !strings.Contains(err.Error(), "add check=false to the registry URL") {
		t.Fatalf("Subscribe with ZooKeeper unreachable, check at its default: %v; want an error saying check=false", err)
	}

	var log lineLog
	var mu sync.Mutex
	var lists [][]spi.URL
	got := make(chan struct{}, 16)
	sub, err := build("&connect.timeout=300ms&check=false", &log).Subscribe(ctx(t), consumer, func(l []spi.URL) {
		mu.Lock()
		lists = append(lists, l)
		mu.Unlock()
		got <- struct{}{}
	})
	if err != nil {
		t.Fatalf("Subscribe with check=false: %v; want an empty first list", err)
	}
	defer sub.Stop()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("no first list within 5s")
	}
	mu.Lock()
	if len(lists) != 1 || len(lists[0]) != 0 {
		t.Fatalf("first lists %v; want one empty", lists)
	}
	mu.Unlock()
	log.waitFor(t, time.Second, "no session yet; no provider listed until one is (check=false)")

	px.Refuse(false)    // ZooKeeper answers now
	p := build("", nil) // the default connect.timeout (5s): 300 ms was too short for a session under load (-race, load 15+)
	if err := p.Register(ctx(t), provider(7101, "")); err != nil {
		t.Fatal(err)
	}
	deadline, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		mu.Lock()
		last := lists[len(lists)-1]
		mu.Unlock()
		if len(last) == 1 && last[0].Address() == "127.0.0.1:7101" {
			break
		}
		select {
		case <-got:
		case <-deadline.Done():
			t.Fatalf("lists %v; want the provider registered once ZooKeeper answered", lists)
		}
	}
}
