package zookeeper_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// fanout records, for each of n subscriptions, the ports of the last
// list it was told and when it was first told of each port.
type fanout struct {
	mu      sync.Mutex
	ports   [][]int
	told    []map[int]time.Time // subscription -> port -> first told
	changed chan struct{}
}

func newFanout(n int) *fanout {
	f := &fanout{ports: make([][]int, n), told: make([]map[int]time.Time, n), changed: make(chan struct{}, 1)}
	for i := range f.told {
		f.told[i] = map[int]time.Time{}
	}
	return f
}

func (f *fanout) notify(i int) spi.NotifyFunc {
	return func(l []spi.URL) {
		now := time.Now()
		ports := []int{}
		f.mu.Lock()
		for _, u := range l {
			ports = append(ports, u.Port())
			if _, ok := f.told[i][u.Port()]; !ok {
				f.told[i][u.Port()] = now
			}
		}
		f.ports[i] = ports
		f.mu.Unlock()
		select {
		case f.changed <- struct{}{}:
		default:
		}
	}
}

// waitPort waits until the last list of each subscription in subs holds
// port and returns when the last of them was first told of it.
func (f *fanout) waitPort(t *testing.T, subs []int, port int, bound time.Duration) time.Time {
	t.Helper()
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	for {
		var last time.Time
		all := true
		f.mu.Lock()
		for _, i := range subs {
			if !slices.Contains(f.ports[i], port) {
				all = false
				break
			}
			if at := f.told[i][port]; at.After(last) {
				last = at
			}
		}
		ports := slices.Clone(f.ports)
		f.mu.Unlock()
		if all {
			return last
		}
		select {
		case <-f.changed:
		case <-deadline.C:
			t.Fatalf("after %v the subscriptions list the ports %v; want %d in those of %v", bound, ports, port, subs)
		}
	}
}

// 50 subscriptions to one interface, each of its own group list (as 50
// references of one process to their own service keys), read the
// interface's providers node once per change between them, and each is
// told of the providers its group and version accept.
func TestSubscriptionsOfOneInterfaceShareOneWatch(t *testing.T) {
	const n, rounds = 50, 10
	reg := build(t, server.URL("root=sharedwatch&session.timeout=5s"))
	preg := build(t, server.URL("root=sharedwatch&session.timeout=5s"))
	const iface = "shared.Watch"
	f := newFanout(n)
	everyone := make([]int, n)
	for i := range n {
		everyone[i] = i
		c := spi.MustParse(fmt.Sprintf("airnode:///%s?side=consumer&group=g%d,all&version=1.0", iface, i))
		sub, err := reg.Subscribe(ctx(t), c, f.notify(i))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sub.Stop)
	}
	// A provider of group g7: the 7th subscription lists it, the others
	// do not.
	own := spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:29999/%s?side=provider&group=g7&version=1.0", iface))
	if err := preg.Register(ctx(t), own); err != nil {
		t.Fatal(err)
	}
	f.waitPort(t, []int{7}, 29999, 10*time.Second)
	// A provider of version 2.0 is no one's.
	if err := preg.Register(ctx(t), spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:29998/%s?side=provider&group=all&version=2.0", iface))); err != nil {
		t.Fatal(err)
	}

	before := zookeeper.WatchReads(reg)
	var lat, after []time.Duration // from Register's call, from its return
	for k := range rounds {
		port := 29000 + k
		u := spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:%d/%s?side=provider&group=all&version=1.0", port, iface))
		start := time.Now()
		if err := preg.Register(ctx(t), u); err != nil {
			t.Fatal(err)
		}
		registered := time.Now()
		told := f.waitPort(t, everyone, port, 10*time.Second)
		lat, after = append(lat, told.Sub(start)), append(after, told.Sub(registered))
		time.Sleep(50 * time.Millisecond) // every read of this change done
	}
	reads := zookeeper.WatchReads(reg) - before
	f.mu.Lock()
	for i, ports := range f.ports {
		want := []int{29000, 29001, 29002, 29003, 29004, 29005, 29006, 29007, 29008, 29009}
		if i == 7 {
			want = append(want, 29999)
		}
		if !slices.Equal(ports, want) {
			t.Errorf("subscription %d (group g%d,all, version 1.0) lists ports %v; want %v", i, i, ports, want)
		}
	}
	f.mu.Unlock()
	slices.Sort(lat)
	slices.Sort(after)
	t.Logf("%d subscriptions, %d registrations: %d watch reads (%.1f a change); Register's call to all %d told: median %v, max %v; Register's return to all told: median %v, max %v",
		n, rounds, reads, float64(reads)/rounds, n, lat[rounds/2].Round(10*time.Microsecond), lat[rounds-1].Round(10*time.Microsecond),
		after[rounds/2].Round(10*time.Microsecond), after[rounds-1].Round(10*time.Microsecond))
	if reads > 2*rounds {
		t.Errorf("%d watch reads for %d changes; want one a change (at most %d)", reads, rounds, 2*rounds)
	}
}

// A subscription that joins an interface already watched gets the
// interface's last read, without reading it again; the others keep
// theirs when one stops; the last Stop of an interface ends its watch,
// and a later Subscribe watches it again.
func TestSharedWatchJoinAndLastStop(t *testing.T) {
	reg := build(t, server.URL("root=sharedwatch2&session.timeout=5s"))
	preg := build(t, server.URL("root=sharedwatch2&session.timeout=5s"))
	for _, p := range []string{
		"airnode://127.0.0.1:1/j.A?side=provider&version=1",
		"airnode://127.0.0.1:2/j.A?side=provider&version=2",
		"airnode://127.0.0.1:3/j.B?side=provider",
	} {
		if err := preg.Register(ctx(t), spi.MustParse(p)); err != nil {
			t.Fatal(err)
		}
	}
	f := newFanout(4)
	stops := make([]func(), 4)
	sub := func(i int, c string) {
		t.Helper()
		s, err := reg.Subscribe(ctx(t), spi.MustParse(c), f.notify(i))
		if err != nil {
			t.Fatal(err)
		}
		stops[i] = s.Stop
		t.Cleanup(s.Stop)
	}
	sub(0, "airnode:///j.A?side=consumer&version=1")
	f.waitPort(t, []int{0}, 1, 10*time.Second)
	reads := zookeeper.WatchReads(reg)
	sub(1, "airnode:///j.A?side=consumer&version=2")
	sub(2, "airnode:///j.A?side=consumer&version=*")
	f.waitPort(t, []int{1, 2}, 2, 10*time.Second)
	f.waitPort(t, []int{2}, 1, 10*time.Second)
	if got := zookeeper.WatchReads(reg); got != reads {
		t.Errorf("2 subscriptions joining a watched interface read it %d times; want 0 (the last read)", got-reads)
	}
	sub(3, "airnode:///j.B?side=consumer")
	f.waitPort(t, []int{3}, 3, 10*time.Second)
	if n := zookeeper.Watches(reg); n != 2 {
		t.Errorf("Watches = %d with subscriptions to j.A and j.B; want 2", n)
	}
	f.mu.Lock()
	if !slices.Equal(f.ports[0], []int{1}) || !slices.Equal(f.ports[1], []int{2}) || !slices.Equal(f.ports[2], []int{1, 2}) {
		t.Errorf("version=1, 2, *: %v; want [1] [2] [1 2]", f.ports[:3])
	}
	f.mu.Unlock()

	stops[0]()
	stops[2]()
	if n := zookeeper.Watches(reg); n != 2 {
		t.Errorf("Watches = %d with one subscription left on j.A; want 2", n)
	}
	if err := preg.Register(ctx(t), spi.MustParse("airnode://127.0.0.1:4/j.A?side=provider&version=2")); err != nil {
		t.Fatal(err)
	}
	f.waitPort(t, []int{1}, 4, 10*time.Second)
	stops[1]()
	if n := zookeeper.Watches(reg); n != 1 {
		t.Errorf("Watches = %d after the last Stop on j.A; want 1 (j.B)", n)
	}
	reads = zookeeper.WatchReads(reg)
	if err := preg.Register(ctx(t), spi.MustParse("airnode://127.0.0.1:5/j.A?side=provider&version=2")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if got := zookeeper.WatchReads(reg); got != reads {
		t.Errorf("a change of j.A, no longer subscribed, was read %d times; want 0", got-reads)
	}
	g := newFanout(1)
	s, err := reg.Subscribe(ctx(t), spi.MustParse("airnode:///j.A?side=consumer&version=2"), g.notify(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	g.waitPort(t, []int{0}, 5, 10*time.Second)
	g.mu.Lock()
	if !slices.Equal(g.ports[0], []int{2, 4, 5}) {
		t.Errorf("a new subscription to j.A lists %v; want [2 4 5]", g.ports[0])
	}
	g.mu.Unlock()
	stops[3]()
	s.Stop()
	if n := zookeeper.Watches(reg); n != 0 {
		t.Errorf("Watches = %d after every Stop; want 0", n)
	}
}
