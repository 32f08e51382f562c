package exchange

import (
	"log/slog"
	"testing"
)

// A stall that starts after the answers drained under highWater, on a
// channel with no Server budget (unsent.limit=0), is the channel's own:
// it resumes under lowWater and is logged as such. It took the budget's
// branch and read the nil budget (a pool worker's nil-pointer panic).
func TestStallWithoutBudgetAfterDrainIsTheChannelsOwn(t *testing.T) {
	for _, unsent := range []int64{budgetFree, highWater - 1} {
		c := &Channel{w: &writer{}}
		c.logp.Store(slog.New(slog.DiscardHandler))
		c.w.unsent.Store(unsent)
		c.stallMu.Lock()
		c.startStallLocked()
		c.stallMu.Unlock()
		if got := c.resumeAt.Load(); got != lowWater {
			t.Errorf("unsent %d, no budget: resumes under %d, want lowWater %d", unsent, got, lowWater)
		}
		if !c.stallNoted {
			t.Errorf("unsent %d (>= budgetFree): episode not counted", unsent)
		}
	}
}
