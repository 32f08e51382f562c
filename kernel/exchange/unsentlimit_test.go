package exchange

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/protocol"
)

// serverUnsent returns the bytes the server's channels hold unsent
// together, and how many channels it has.
func serverUnsent(f *fixture) (sum int64, chans int) {
	f.srv.mu.Lock()
	defer f.srv.mu.Unlock()
	for c := range f.srv.chans {
		sum += c.w.unsent.Load()
		chans++
	}
	return sum, chans
}

// channelOf returns the server's channel of b's connection (its remote
// address is b's local one), or nil.
func channelOf(f *fixture, b *badConsumer) *Channel {
	f.srv.mu.Lock()
	defer f.srv.mu.Unlock()
	for c := range f.srv.chans {
		if c.remote == b.conn.LocalAddr().String() {
			return c
		}
	}
	return nil
}

// writeUntilStopped writes b's requests (next(id) returns request id's),
// one at a time, until the provider stops reading them (a write that
// makes no progress for stuck while the provider's channel of the
// connection neither adds to its unsent answers nor takes or answers a
// request) or a write fails. On a loaded machine a provider that still
// reads can leave a write stuck that long, its handlers starved of CPU;
// that is not its stop, and the writer goes on. At most max bytes,
// within d.
func writeUntilStopped(f *fixture, b *badConsumer, next func(uint64) []byte, max int64, stuck, d time.Duration) {
	deadline := time.Now().Add(d)
	var ch *Channel
	for b.bytes.Load() < max && time.Now().Before(deadline) {
		if ch == nil {
			ch = channelOf(f, b)
		}
		wrote := b.bytes.Load()
		var unsent, inflight int64
		if ch != nil {
			unsent, inflight = ch.w.unsent.Load(), ch.inflight.Load()
		}
		stuckNow := b.write(next, wrote+1, stuck) // the rest of one frame
		switch {
		case b.bytes.Load() > wrote:
		case !stuckNow:
			return // the connection failed
		case ch == nil || ch.w.unsent.Load() == unsent && ch.inflight.Load() == inflight:
			return // stopped
		}
	}
}

// Several consumers that read none of their answers: each alone stops its
// connection at highWater (8 MiB), so together they pinned 8 MiB each
// (tester17 N1: 100 of them, 1.6 GB). With the Server-wide bound
// (Options.UnsentLimit) they hold about the limit together: once it is
// reached, a connection with budgetStop unsent stops reading. Calls of a
// consumer that reads go on meanwhile; each stall is counted and logged;
// once the consumers read, every answer arrives; once they leave, nothing
// is left counted in the bound.
func TestUnsentLimit_ManyNonReadingConsumers(t *testing.T) {
	const consumers = 6
	const limit = 8 << 20
	echo := strings.Repeat("x", 32<<10)
	for _, tc := range []struct {
		name  string
		limit int64
	}{{"limit", limit}, {"off", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			// the consumers read again only after they stopped the
			// provider: not closed as slow consumers meanwhile
			f := startServer(t, false, func(o *Options) { o.UnsentLimit, o.SlowConsumerAfter = tc.limit, -1 })
			frame := requestFrame(t, 0, echoInv("Echo", echo))
			stalls := counters.Channels.UnsentLimitStalls.Load()
			bad := make([]*badConsumer, consumers)
			var wg sync.WaitGroup
			for i := range bad {
				bad[i] = dialBadConsumer(t, f)
				own := append([]byte(nil), frame...)
				next := func(id uint64) []byte {
					protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: id, Length: uint32(len(own) - protocol.HeaderLen)}.Put(own)
					return own
				}
				wg.Go(func() { writeUntilStopped(f, bad[i], next, 64<<20, 2*time.Second, time.Minute) })
			}
			wg.Wait()
			time.Sleep(300 * time.Millisecond) // running handlers finish
			sum, chans := serverUnsent(f)
			var sent int64
			for _, b := range bad {
				sent += b.sent.Load()
			}
			t.Logf("%d connections hold %.1f MiB unsent (unsent.limit %d MiB); %d requests sent; stalls under the limit %d",
				chans, float64(sum)/(1<<20), tc.limit>>20, sent, counters.Channels.UnsentLimitStalls.Load()-stalls)
			if tc.limit < 0 {
				// each stops at its own highWater (8 MiB): together about
				// 6 x 8 MiB (42.5 to 48.2 measured), far over what the
				// limit allows; half of that is the floor
				if sum < 3*limit {
					t.Errorf("without the limit the connections hold %.1f MiB, want over %d MiB (each its own highWater, %d MiB)", float64(sum)/(1<<20), 3*limit>>20, highWater>>20)
				}
			} else {
				// the limit, and per connection what it read before its
				// stop took effect: budgetFree, budgetStop and a read
				// batch's answers (8.4 to 16.7 MiB measured, consumers
				// writing for as long as the provider reads); 3 MiB a
				// connection is the margin, and without the limit they
				// hold 41 to 49 MiB
				if bound := int64(limit + consumers*(3<<20)); sum > bound {
					t.Errorf("the connections hold %.1f MiB unsent together, want at most %.1f MiB", float64(sum)/(1<<20), float64(bound)/(1<<20))
				}
				if counters.Channels.UnsentLimitStalls.Load() == stalls {
					t.Error("no stall counted in counters.Channels.UnsentLimitStalls")
				}
				if l := f.logs.find("over unsent.limit"); l == "" {
					t.Error("no stall logged naming unsent.limit")
				}
			}
			canary(t, f, 20)
			for _, b := range bad {
				if got := b.drain(t, b.sent.Load(), 20*time.Second); got != b.sent.Load() {
					t.Fatalf("%d of %d answers read once the consumer reads", got, b.sent.Load())
				}
			}
			for _, b := range bad {
				b.closer()
			}
			if !waitFor(10*time.Second, func() bool { _, n := serverUnsent(f); return n <= 1 }) { // the canary's
				t.Fatal("the bad consumers' channels did not end")
			}
			if b := f.srv.opts.budget; b != nil && !waitFor(5*time.Second, func() bool { return b.held.Load() == 0 }) {
				t.Errorf("%d bytes still counted in the server's bound after the consumers left", b.held.Load())
			}
		})
	}
}

// A channel counts in the Server's bound only what it holds beyond
// budgetFree, and concurrent adds leave the right sum.
func TestUnsentBudgetCountsBeyondFree(t *testing.T) {
	b := newUnsentBudget(0)
	if b.limit != DefaultUnsentLimit {
		t.Fatalf("limit %d, want the default %d", b.limit, DefaultUnsentLimit)
	}
	if newUnsentBudget(-1) != nil {
		t.Fatal("a negative limit is no bound")
	}
	w := newWriterBudget(b)
	w.addUnsent(budgetFree - 1)
	if got := b.held.Load(); got != 0 {
		t.Fatalf("held %d under budgetFree, want 0", got)
	}
	w.addUnsent(10)
	if got := b.held.Load(); got != 9 {
		t.Fatalf("held %d, want 9", got)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 1000 {
				w.addUnsent(int64(1000 + i))
				w.addUnsent(-int64(1000 + i))
			}
		})
	}
	wg.Wait()
	if got := b.held.Load(); got != 9 {
		t.Fatalf("held %d after concurrent adds, want 9", got)
	}
	c := &Channel{w: w}
	c.settleBudget()
	if got := b.held.Load(); got != 0 {
		t.Fatalf("held %d after the channel settled, want 0", got)
	}
}
