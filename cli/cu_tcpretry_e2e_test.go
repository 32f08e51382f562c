package cli

import (
	"strings"
	"testing"
	"time"
)

// fix-cu #4: a direct call whose provider closed the default smux
// connection at its first ping after most of --timeout (a slow path)
// started the tcp retry with no time left, which failed "context
// deadline exceeded before the call started" (call) or ran over the
// timeout. With less left than the first try took, no retry is started:
// the first try's error says so. With connect.timeout set the retry's
// call gets --timeout from when it is made, as the first's did.
func TestCU_TCPRetryNeedsTimeLeft(t *testing.T) {
	t.Parallel()
	slow := closingListenerAfter(t, false, 1200*time.Millisecond)
	want := "CHANNEL_INACTIVE: " + slow + " closed the connection at its first ping over transport=smux (the default) after "
	noTime := "and no time was left for a retry over transport=tcp ("
	r := call(t, noAirnodeEnv, "--timeout", "1500ms", "airnode://"+slow+"/demo.Echo", "Echo", `"hi"`)
	expectFail(t, r, want, noTime, "of the call's timeout left, less than the first try took): likely a transport mismatch (try -p transport=tcp)")
	if r.elapsed > 5*time.Second || strings.Contains(r.stderr, "both transports") {
		t.Errorf("call: took %v, stderr %q; want no retry", r.elapsed, r.stderr)
	}
	h := health(t, "--timeout", "1500ms", slow)
	expectFail(t, h, want, noTime)

	// time enough: both tries are made, each its own call time
	for _, args := range [][]string{{"--timeout", "4s"}, {"-p", "connect.timeout=4s", "--timeout", "500ms"}} {
		r = call(t, noAirnodeEnv, append(args, "airnode://"+slow+"/demo.Echo", "Echo", `"hi"`)...)
		expectFail(t, r, "CHANNEL_INACTIVE: "+slow+" closed the connection at its first ping over both transports, transport=tcp (the retry) and transport=smux (the default)")
	}
}
