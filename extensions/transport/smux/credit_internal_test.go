package smux

import (
	"testing"
	"time"
)

// TestCreditServesWaitersInOrder: writes waiting for credit get it in the
// order they came, whoever is woken first. Woken together to race for it,
// some lost again and again (tester58: -c 200 with 1 MiB requests, p99
// 3.0 s and calls timing out while written; in order: p99 0.7 s, none).
func TestCreditServesWaitersInOrder(t *testing.T) {
	const window = 100
	var c streamCredit
	never := make(chan struct{})
	first := c.opened(3)
	if k, err := c.take(first, 2*window, window, never, never, never); err != nil || k != window {
		t.Fatalf("first stream took %d, %v; want its window, %d", k, err, window)
	}
	second := c.opened(5)
	if k, _ := c.take(second, window, window, never, never, never); k != window {
		t.Fatalf("second stream took %d, want %d", k, window)
	}
	// the credit (two windows) is spent: three more streams wait, in order
	order := make(chan int, 3)
	for i, sid := range []uint32{7, 9, 11} {
		cs := c.opened(sid)
		go func() {
			if _, err := c.take(cs, window, window, never, never, never); err == nil {
				order <- i
			}
		}()
		deadline := time.Now().Add(5 * time.Second)
		for {
			c.mu.Lock()
			n := len(c.waiters)
			c.mu.Unlock()
			if n == i+1 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	for want := range 3 {
		c.start([]uint32{3, 5, 7}[want]) // one window back each time
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("waiter %d got the credit before waiter %d", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("waiter %d got nothing after a window came back", want)
		}
	}
}
