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

// pendingShards spreads the pending table over independently locked maps so
// concurrent callers rarely contend (ids are sequential, so id%n is even).
const pendingShards = 32

// pendingTable maps request ids to their calls. After closeAll it refuses
// new entries, so no call can be added to a dead channel and wait forever.
type pendingTable struct {
	shards [pendingShards]pendingShard
}

type pendingShard struct {
	mu     sync.Mutex
	m      map[uint64]*call
	closed bool
	_      [32]byte // keep shards on separate cache lines
}

func (t *pendingTable) shard(id uint64) *pendingShard { return &t.shards[id%pendingShards] }

// add registers c; false when the table has been closed.
func (t *pendingTable) add(c *call) bool {
	s := t.shard(c.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.m == nil {
		s.m = make(map[uint64]*call)
	}
	s.m[c.id] = c
	return true
}

// take removes and returns the call with id, or nil when there is none
// (it already completed, timed out, or never existed).
func (t *pendingTable) take(id uint64) *call {
	s := t.shard(id)
	s.mu.Lock()
	c := s.m[id]
	if c != nil {
		delete(s.m, id)
	}
	s.mu.Unlock()
	return c
}

// closeAll closes the table and returns every call still in it.
func (t *pendingTable) closeAll() []*call {
	var out []*call
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		s.closed = true
		for id, c := range s.m {
			out = append(out, c)
			delete(s.m, id)
		}
		s.mu.Unlock()
	}
	return out
}

// takeFrom removes and returns the calls with ids from min on.
func (t *pendingTable) takeFrom(min uint64) []*call {
	var out []*call
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		for id, c := range s.m {
			if id >= min {
				out = append(out, c)
				delete(s.m, id)
			}
		}
		s.mu.Unlock()
	}
	return out
}

// len returns the number of pending calls.
func (t *pendingTable) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}
