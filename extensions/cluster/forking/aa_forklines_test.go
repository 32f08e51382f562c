package forking_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/clustertest"
	"github.com/airnode/airnode/spi"
)

// aa #4: forking's failure when every fork failed was one line naming the
// last fork's error only; it is failover's form now (clusterkit.FailureLines):
// a first line with the forks, their providers and whose status the error
// has, then one indented line per fork, in the order picked, with its
// provider and its own error. The status is still the last fork's to fail.
func TestAA_ForkingFailureListsEachFork(t *testing.T) {
	failA := spi.Errorf(spi.StatusServerError, "A: this node is unwell")
	failB := spi.Errorf(spi.StatusServiceError, "B: no such order")
	a, b := &clustertest.Svc{Name: "A", Fail: failA}, &clustertest.Svc{Name: "B", Fail: failB}
	ref, addrs := clustertest.Start(t, "cluster=forking&forks=2&timeout=5s&outlier.consecutive=0", a, b)
	fails := map[string]*spi.Error{addrs[0]: failA, addrs[1]: failB}
	_, err := ref.Invoke(context.Background(), "Who")
	var e *spi.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an *spi.Error", err)
	}
	lines := strings.Split(e.Message, "\n")
	head := regexp.MustCompile(`^forking: t\.Svc\.Who: 2 of 2 forks failed on \[([^,]+), ([^\]]+)\]; the status is fork ([12])'s, the last to fail:$`)
	m := head.FindStringSubmatch(lines[0])
	if len(lines) != 3 || m == nil {
		t.Fatalf("message %q: want a first line naming both forks and whose status, then one line per fork", e.Message)
	}
	picked := m[1:3]
	for i, addr := range picked {
		if want := fmt.Sprintf("  fork %d, %s: %v", i+1, addr, fails[addr]); lines[i+1] != want {
			t.Errorf("line %d: %q, want %q", i+2, lines[i+1], want)
		}
	}
	last := fails[picked[m[3][0]-'1']] // the fork whose status the error has
	if e.Status != last.Status || spi.StatusOf(e.Cause) != last.Status || !strings.HasSuffix(e.Cause.Error(), last.Message) {
		t.Errorf("status %v, cause %v; want fork %s's: %v", e.Status, e.Cause, m[3], last)
	}
}
