package netaccept

import "testing"

// DefaultAccepts keeps max(64, 10 %) of the open-file limit, at most half
// of it, from consumer connections.
func TestDefaultAccepts(t *testing.T) {
	for _, c := range []struct {
		limit uint64
		want  int
	}{
		{0, 1}, {1, 1}, {2, 1}, {100, 50}, {128, 64}, {256, 192}, {640, 576},
		{1024, 922}, {20000, 18000}, {1 << 20, 943719}, {1 << 40, 1<<31 - 1},
	} {
		if got := DefaultAccepts(c.limit); got != c.want {
			t.Errorf("DefaultAccepts(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}
