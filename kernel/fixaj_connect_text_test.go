package kernel

import (
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// fix-aj #4: the error of the calls made during one outage of a provider
// is one text per cause, so that errors grouped by text (bench's error
// summary, logs, dashboards) show the outage once: it carried the
// connection's running attempt count ("(5 connection attempts)"), and one
// outage gave as many texts as attempts. The count is the log's
// ("kernel: cannot reconnect to provider", attempt=).
func TestFixAJ_ConnectFailureTextIsStableDuringAnOutage(t *testing.T) {
	cat := testCatalogs(t)
	regURL := spi.MustParse("memory://fixaj-connect-text")
	_, p, entry := listedProvider(t, cat, regURL, "1000")
	addr := entry.Address()
	var log logbuf.Buffer
	c := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))), WithRegistry(regURL))
	defer c.Close()
	ref, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?reconnect.backoff=50ms&retries=0"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Invoke(ctxT(t), "Echo", "hi"); err != nil {
		t.Fatal(err)
	}
	_ = p.Close()
	texts := map[string]int{}
	calls := 0
	for start := time.Now(); time.Since(start) < 3*time.Second; calls++ {
		if _, err := ref.Invoke(ctxT(t), "Echo", "hi"); err == nil {
			t.Fatal("a call of the stopped provider succeeded")
		} else if strings.Contains(err.Error(), "cannot connect to provider") {
			texts[err.Error()]++
		}
		time.Sleep(20 * time.Millisecond)
	}
	attempts := strings.Count(log.String(), `msg="kernel: cannot reconnect to provider"`)
	if attempts < 4 || !strings.Contains(log.String(), "addr="+addr) {
		t.Fatalf("%d failed redials logged in 3s; want 4 or more (reconnect.backoff=50ms):\n%s", attempts, log.String())
	}
	if len(texts) != 1 {
		var all []string
		for s, n := range texts {
			all = append(all, s+" (×"+strconv.Itoa(n)+")")
		}
		sort.Strings(all)
		t.Fatalf("%d calls over %d connection attempts gave %d distinct connect-failure texts, want 1:\n%s", calls, attempts, len(texts), strings.Join(all, "\n"))
	}
}
