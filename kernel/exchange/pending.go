package exchange

import (
	"bytes"
	"sync"
	"time"

	"github.com/airnode/airnode/spi"
)

// call is one outstanding request (or ping) on the consumer. It is owned by
// the goroutine that made the call; whoever takes it out of the pending table
// (the reader on a response, die on channel death, the call's timer when its
// deadline passes) fills the result fields and then sends on done exactly
// once, so the caller waits on done alone: a receive, where a select over
// done and a timer channel cost 22 % of the consumer's CPU at c=100. Calls
// are pooled: done is empty again by the time a call goes back to the pool,
// and a call whose timer fired without timing it out is not pooled (the
// timer's callback may still look up its id).
type call struct {
	id   uint64
	done chan struct{} // cap 1

	ch       *Channel
	timer    *time.Timer   // runs expire; made on the call's first arm
	timeout  time.Duration // the remaining deadline; 0: none
	armed    bool          // timer set for this use of the call
	timedOut bool          // set by the timer's callback before it signals done

	watcher   *ctxWatcher // the channel's watcher of the call's ctx, when it waits on done alone (ctxwatch.go)
	cancelled bool        // set by that watcher, its ctx done, before it signals done

	// Result, written by the taker before done is signalled.
	status   spi.Status
	codecID  uint8
	body     []byte
	err      error // set instead of status/body when the channel died
	unread   bool  // with err: the provider's go-away says it never read the request
	answered bool  // with err: the peer's answer (a response over the payload limit), not the channel's death

	rd    bytes.Reader // reads body while the caller decodes it
	value any          // the generic result while it is decoded
}

var callPool = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

func getCall(ch *Channel, id uint64) *call {
	c := callPool.Get().(*call)
	c.ch, c.id = ch, id
	return c
}

func putCall(c *call) {
	putBody(c.body)
	c.status, c.codecID, c.body, c.err, c.unread, c.answered = 0, 0, nil, nil, false, false
	c.ch, c.timeout, c.armed, c.timedOut = nil, 0, false, false
	c.watcher, c.cancelled = nil, false
	c.rd.Reset(nil)
	callPool.Put(c)
}

// arm starts the call's timer for c.timeout (> 0); c must be in the
// pending table.
func (c *call) arm() {
	c.armed = true
	if c.timer == nil {
		c.timer = time.AfterFunc(c.timeout, c.expire)
		return
	}
	c.timer.Reset(c.timeout)
}

// expire is the timer's callback: the call times out if nothing else has
// taken it yet.
func (c *call) expire() {
	if c.ch.pending.take(c.id) == c {
		c.timedOut = true
		c.done <- struct{}{}
	}
}

// pendingShards spreads the pending table over independently locked
// shards so concurrent callers rarely contend (ids are sequential, so
// id%n is even).
const pendingShards = 32

// pendingTable maps request ids to their calls. After closeAll it refuses
// new entries, so no call can be added to a dead channel and wait forever.
//
// Each shard keeps its calls in a ring indexed by id/pendingShards, not in
// a map: ids are sequential and calls end roughly in the order they began,
// so consecutive adds (and takes) fill neighbouring slots, on cache lines
// that are already warm, where a map scatters them over its groups (at
// c=10,000 a map insert was a cache miss: pendingTable.add took 0.17-0.33
// µs of the consumer's CPU per call against 0.03 at c=100; in the ring
// 0.05, bench/README.md's twelfth pass). A call whose slot
// is still held by an older one (a call far behind the others, waiting out
// its timeout) goes to the shard's overflow map, after the ring doubles
// if over half of it is in use.
type pendingTable struct {
	shards [pendingShards]pendingShard
}

type pendingShard struct {
	mu     sync.Mutex
	ring   []*call          // len a power of two, minRing to maxRing; nil until the first add
	n      int              // calls in ring
	over   map[uint64]*call // calls whose ring slot was taken; nil when none ever was
	closed bool
	_      [64 - 8 - 24 - 8 - 8 - 8]byte // one shard per 64-byte cache line (TestH12_PendingShardIsOneCacheLine)
}

// Ring sizes per shard: minRing slots at first (a connection with few
// calls keeps 32 x 64 B of them), doubling up to maxRing (32 x 4096 slots:
// about 131,000 calls in flight on one channel before most go to the
// overflow maps).
const (
	minRing = 8
	maxRing = 4096
)

func (t *pendingTable) shard(id uint64) *pendingShard { return &t.shards[id%pendingShards] }

// slotOf returns the index of id in a ring of n slots.
func slotOf(id uint64, n int) int { return int(id/pendingShards) & (n - 1) }

// add registers c; false when the table has been closed.
func (t *pendingTable) add(c *call) bool {
	s := t.shard(c.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.ring == nil {
		s.ring = make([]*call, minRing)
	}
	i := slotOf(c.id, len(s.ring))
	if s.ring[i] != nil && 2*s.n > len(s.ring) && len(s.ring) < maxRing {
		s.grow() // before the overflow map: the slot may be free in a ring twice the size
		i = slotOf(c.id, len(s.ring))
	}
	s.place(c, i)
	return true
}

// place puts c in slot i of the ring, or in the overflow map when an
// older call holds that slot. On mu.
func (s *pendingShard) place(c *call, i int) {
	if s.ring[i] == nil {
		s.ring[i] = c
		s.n++
		return
	}
	if s.over == nil {
		s.over = make(map[uint64]*call)
	}
	s.over[c.id] = c
}

// grow doubles the ring, moving every call to its slot in the new one
// (two calls in different slots of a ring are in different slots of the
// ring twice its size, so none goes to the overflow map). On mu.
func (s *pendingShard) grow() {
	old := s.ring
	s.ring, s.n = make([]*call, 2*len(old)), 0
	for _, c := range old {
		if c != nil {
			s.place(c, slotOf(c.id, len(s.ring)))
		}
	}
}

// take removes and returns the call with id, or nil when there is none
// (it already completed, timed out, or never existed).
func (t *pendingTable) take(id uint64) *call {
	s := t.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ring != nil {
		i := slotOf(id, len(s.ring))
		if c := s.ring[i]; c != nil && c.id == id {
			s.ring[i] = nil
			s.n--
			return c
		}
	}
	c := s.over[id]
	if c != nil {
		delete(s.over, id)
	}
	return c
}

// takeWhere removes and returns the shard's calls with ids from min on.
func (s *pendingShard) takeWhere(min uint64, out []*call) []*call {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range s.ring {
		if c != nil && c.id >= min {
			out = append(out, c)
			s.ring[i] = nil
			s.n--
		}
	}
	for id, c := range s.over {
		if id >= min {
			out = append(out, c)
			delete(s.over, id)
		}
	}
	return out
}

// closeAll closes the table and returns every call still in it.
func (t *pendingTable) closeAll() []*call {
	var out []*call
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		out = s.takeWhere(0, out)
	}
	return out
}

// takeFrom removes and returns the calls with ids from min on.
func (t *pendingTable) takeFrom(min uint64) []*call {
	var out []*call
	for i := range t.shards {
		out = t.shards[i].takeWhere(min, out)
	}
	return out
}

// longestTimeout returns the longest timeout (call.timeout, set before
// add) of the calls in the table; 0 when none has one. It looks at every
// call under its shard's lock: the quiet watch calls it only once a
// channel has been silent for QuietFloor (checkQuiet), never per call.
func (t *pendingTable) longestTimeout() time.Duration {
	var longest time.Duration
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		for _, c := range s.ring {
			if c != nil {
				longest = max(longest, c.timeout)
			}
		}
		for _, c := range s.over {
			longest = max(longest, c.timeout)
		}
		s.mu.Unlock()
	}
	return longest
}

// len returns the number of pending calls.
func (t *pendingTable) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += s.n + len(s.over)
		s.mu.Unlock()
	}
	return n
}
