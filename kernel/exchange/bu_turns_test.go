package exchange

import (
	"fmt"
	"testing"
)

// The budget's turns with many connections whose consumers read nothing
// (fix-bu). Such a channel holds budgetStop or more unsent and cannot
// start a handler (mayTakeTurn), yet it waited in the turns ahead of
// every channel that began to wait after it, and each look at the turns
// (myTurn: every wake, every request a worker took) walked past all of
// them under the budget's lock: with 500 of them, 500 channels per look,
// 95 µs. Now a channel joins the turns only when it could take one, and
// a look that passes one that no longer can takes it out.

// turnChannel returns a channel of a Server with budget b whose answers
// are large (1 MiB), holding unsent bytes unsent for its peer.
func turnChannel(b *unsentBudget, unsent int64) *Channel {
	c := &Channel{dying: make(chan struct{}), w: newWriterBudget(b), payload: 8 << 20}
	c.answerSize.Store(1 << 20)
	c.w.unsent.Store(unsent)
	return c
}

// overBudget returns a budget whose channels together hold its limit.
func overBudget() *unsentBudget {
	b := newUnsentBudget(8 << 20)
	b.held.Store(b.limit)
	return b
}

func TestTurns_ChannelsThatCannotStartTakeNoTurn(t *testing.T) {
	b := overBudget()
	for range 500 {
		b.queueTurn(turnChannel(b, 1<<20)) // reads nothing: holds 1 MiB
	}
	if n := b.nTurns.Load(); n != 0 {
		t.Fatalf("%d channels holding 1 MiB unsent (budgetStop %d) are in the turns; want none: they cannot start a handler", n, budgetStop)
	}
	r := turnChannel(b, 0)
	b.queueTurn(r)
	if n := b.nTurns.Load(); n != 1 || !b.myTurn(r) {
		t.Fatalf("a channel that reads its answers: %d in the turns, its turn %v; want 1 and its turn", n, b.myTurn(r))
	}
}

func TestTurns_OrderAndLeavingThoseThatNoLongerCan(t *testing.T) {
	b := overBudget()
	first, second, third := turnChannel(b, 0), turnChannel(b, 0), turnChannel(b, 0)
	for _, c := range []*Channel{first, second, third} {
		b.queueTurn(c)
	}
	if b.myTurn(second) || b.myTurn(third) || !b.myTurn(first) {
		t.Fatalf("turns of three channels that began to wait in order: first %v, second %v, third %v; want only the first's",
			b.myTurn(first), b.myTurn(second), b.myTurn(third))
	}
	// first's answers pile up (its consumer stopped reading) before it
	// started a handler: a look that passes it takes it out of the turns
	first.w.unsent.Store(budgetStop)
	if !b.myTurn(second) || b.myTurn(third) {
		t.Fatalf("after the first channel came to hold budgetStop: second's turn %v, third's %v; want the second's only", b.myTurn(second), b.myTurn(third))
	}
	if n := b.nTurns.Load(); n != 2 {
		t.Fatalf("%d channels in the turns; want 2 (the first left them)", n)
	}
	// it drains: it waits again, behind those that waited meanwhile
	first.w.unsent.Store(0)
	b.queueTurn(first)
	b.leaveTurn(second) // started a handler
	if !b.myTurn(third) || b.myTurn(first) {
		t.Fatalf("after the first drained and waited again: third's turn %v, first's %v; want the third's only", b.myTurn(third), b.myTurn(first))
	}
	close(third.dying)
	if !b.myTurn(first) || b.nTurns.Load() != 1 {
		t.Fatalf("after the third ended: first's turn %v, %d in the turns; want its turn, 1", b.myTurn(first), b.nTurns.Load())
	}
	b.leaveTurn(first)
	if n := b.nTurns.Load(); n != 0 || b.turnFirst != nil || b.turnLast != nil {
		t.Fatalf("all left: %d in the turns (first %p, last %p); want none", n, b.turnFirst, b.turnLast)
	}
}

// BenchmarkTurns measures one look at the turns (myTurn) by a channel
// that may start a handler, with n channels whose consumers read nothing
// (they began to wait before their answers piled up) and another channel
// ahead of it whose turn it is.
//
//	go test -run='^$' -bench='^BenchmarkTurns$' ./kernel/exchange
func BenchmarkTurns(b *testing.B) {
	for _, n := range []int{0, 50, 200, 500} {
		b.Run(fmt.Sprintf("stuck=%d", n), func(b *testing.B) {
			budget := overBudget()
			stuck := make([]*Channel, n)
			for i := range stuck {
				stuck[i] = turnChannel(budget, 0)
				budget.queueTurn(stuck[i]) // began to wait before its answers piled up
				stuck[i].w.unsent.Store(1 << 20)
			}
			head, r := turnChannel(budget, 0), turnChannel(budget, 0)
			budget.queueTurn(head)
			budget.queueTurn(r)
			b.ResetTimer()
			for range b.N {
				if budget.myTurn(r) {
					b.Fatal("not the head's turn")
				}
			}
		})
	}
}
