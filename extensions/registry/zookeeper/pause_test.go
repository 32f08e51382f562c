package zookeeper

import (
	"testing"
	"time"
)

// A resumed process reads what ZooKeeper sent while it was stopped
// before the connection drops, so ZooKeeper reads as heard just after the
// pause's late tick (CI: last_heard_ago 1ms after a 6 s SIGSTOP): the
// pause still counts for the loss; one that ended well before the last
// contact does not.
func TestPausedSinceCountsAPauseEndingJustBeforeZooKeeperWasHeard(t *testing.T) {
	t0 := time.Now()
	c := &pauseClock{last: t0}
	resumed := t0.Add(pauseTick + 6*time.Second)
	c.tick(resumed) // the late tick: a 6 s pause
	heard := resumed.Add(3 * time.Millisecond)
	if p := c.pausedSince(heard, heard.Add(time.Millisecond)); p != 6*time.Second {
		t.Errorf("pause ending 3ms before ZooKeeper was heard: pausedSince = %v, want 6s", p)
	}
	c.tick(resumed.Add(pauseTick)) // running again
	heard = resumed.Add(resumeReadWindow + 2*pauseTick)
	if p := c.pausedSince(heard, heard.Add(time.Millisecond)); p != 0 {
		t.Errorf("pause ending %v before ZooKeeper was heard: pausedSince = %v, want 0", heard.Sub(resumed), p)
	}
}
