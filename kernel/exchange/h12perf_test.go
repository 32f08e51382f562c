package exchange

import (
	"slices"
	"testing"
	"unsafe"
)

// TestH12_PendingShardIsOneCacheLine: neighbouring shards, taken by
// consecutive ids from different processors, do not share a cache line.
func TestH12_PendingShardIsOneCacheLine(t *testing.T) {
	if n := unsafe.Sizeof(pendingShard{}); n != 64 {
		t.Fatalf("pendingShard is %d bytes, want 64", n)
	}
}

// TestH12_PendingTableRingAndOverflow drives the table the way a
// channel does and checks every call comes back exactly once: calls that
// end in order, one that stays while thousands of later ids pass its slot
// (overflow and growth), takes of unknown or finished ids, takeFrom and
// closeAll.
func TestH12_PendingTableRingAndOverflow(t *testing.T) {
	var tab pendingTable
	newCall := func(id uint64) *call { return &call{id: id} }
	add := func(c *call) {
		t.Helper()
		if !tab.add(c) {
			t.Fatalf("add %d refused on an open table", c.id)
		}
	}

	stuck := newCall(1) // waits while 20,000 later calls come and go
	add(stuck)
	live := map[uint64]*call{}
	var next uint64 = 2
	for round := 0; round < 200; round++ {
		for i := 0; i < 100; i++ { // 100 more in flight
			c := newCall(next)
			next++
			add(c)
			live[c.id] = c
		}
		if got, want := tab.len(), len(live)+1; got != want {
			t.Fatalf("round %d: len %d, want %d", round, got, want)
		}
		ids := make([]uint64, 0, len(live))
		for id := range live {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids[:len(ids)-round%7] { // the oldest end, a few stay behind
			if c := tab.take(id); c != live[id] {
				t.Fatalf("take %d = %v, want its call", id, c)
			}
			if tab.take(id) != nil {
				t.Fatalf("take %d twice returned a call", id)
			}
			delete(live, id)
		}
	}
	if tab.take(next+5) != nil || tab.take(0) != nil {
		t.Fatal("take of an id never added returned a call")
	}

	// ten thousand in flight at once, then the newest half taken by takeFrom
	from := next + 5000
	for i := 0; i < 10000; i++ {
		c := newCall(next)
		next++
		add(c)
		live[c.id] = c
	}
	gone := tab.takeFrom(from)
	if len(gone) != 5000 {
		t.Fatalf("takeFrom(%d) returned %d calls, want 5000", from, len(gone))
	}
	for _, c := range gone {
		if c.id < from || live[c.id] != c {
			t.Fatalf("takeFrom returned call %d", c.id)
		}
		delete(live, c.id)
	}
	if c := tab.take(stuck.id); c != stuck {
		t.Fatalf("the old call came back as %v", c)
	}

	all := tab.closeAll()
	if len(all) != len(live) {
		t.Fatalf("closeAll returned %d calls, want %d", len(all), len(live))
	}
	for _, c := range all {
		if live[c.id] != c {
			t.Fatalf("closeAll returned call %d twice or unknown", c.id)
		}
		delete(live, c.id)
	}
	if tab.len() != 0 || tab.add(newCall(next)) {
		t.Fatal("a closed table is not empty or took a new call")
	}
}
