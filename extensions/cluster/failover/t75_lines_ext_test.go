package failover_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// tester75 #2: a call that failed after several attempts read as one
// line of some 600 characters, each attempt's cause wrapped in the next
// with the service and method repeated. Its message is now a first line
// with the outcome, then one indented line per attempt (provider, status,
// cause without the service and method), at most ten of them; its status
// and cause (errors.Is) are the last attempt's, as before.
func TestT75_AttemptsReadOneLineEach(t *testing.T) {
	withdrawn := spi.Errorf(spi.StatusClientTimeout, "exchange: call demo.Echo.Echo to 10.0.0.1:20880 timed out after 200ms before the request was written (withdrawn, never sent)")
	c, dir, ps := setup(t, "?retries=14", fails(withdrawn))
	err := c.Invoke(context.Background(), echo(), dir, firstLB{}).Err
	if n := calls(ps)[0]; n != 15 {
		t.Fatalf("%d attempts, want 15", n)
	}
	if spi.StatusOf(err) != spi.StatusClientTimeout || !errors.Is(err, withdrawn) {
		t.Fatalf("got %v; want the last attempt's CLIENT_TIMEOUT, wrapping it", err)
	}
	lines := strings.Split(err.Error(), "\n")
	const first = "CLIENT_TIMEOUT: failover: demo.Echo.Echo failed after 15 attempts on [10.0.0.1:20880 (15 times)]:"
	const attempt = ", 10.0.0.1:20880: CLIENT_TIMEOUT: exchange: timed out after 200ms before the request was written (withdrawn, never sent)"
	want := []string{first}
	for _, i := range []string{"1", "2", "3", "4", "5"} {
		want = append(want, "  attempt "+i+attempt)
	}
	want = append(want, "  ... 5 attempts not shown")
	for _, i := range []string{"11", "12", "13", "14", "15"} {
		want = append(want, "  attempt "+i+attempt)
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("message\n%s\nwant\n%s", err, strings.Join(want, "\n"))
	}
}
