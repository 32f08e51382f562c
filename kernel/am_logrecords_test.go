package kernel

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// jsonRecords parses buf's JSON log records.
func jsonRecords(t *testing.T, buf *logbuf.Buffer) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for l := range strings.SplitSeq(buf.String(), "\n") {
		if l == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, l)
		}
		recs = append(recs, r)
	}
	return recs
}

// checkPeerAndComponent fails t for a record without a component, with
// a component prefix left in its msg, or naming the peer as "remote" or
// "addr" rather than "provider" / "consumer".
func checkPeerAndComponent(t *testing.T, recs []map[string]any) {
	t.Helper()
	for _, r := range recs {
		msg, _ := r["msg"].(string)
		if c, _ := r["component"].(string); c == "" {
			t.Errorf("record without component: %v", r)
		} else if strings.HasPrefix(msg, c+": ") || strings.HasPrefix(msg, "kernel: ") {
			t.Errorf("msg still carries the component prefix: %v", r)
		}
		for _, k := range []string{"remote", "addr", "peer_addr"} {
			if _, ok := r[k]; ok {
				t.Errorf("record names the peer %q, want provider: %v", k, r)
			}
		}
	}
}

// closeRecords waits for the consumer's record(s) of a channel close and
// returns every record whose msg mentions it.
func closeRecords(t *testing.T, buf *logbuf.Buffer) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var got []map[string]any
		for _, r := range jsonRecords(t, buf) {
			if msg, _ := r["msg"].(string); strings.Contains(msg, "channel closed") {
				got = append(got, r)
			}
		}
		if len(got) > 0 || time.Now().After(deadline) {
			time.Sleep(200 * time.Millisecond) // a second record would be written by now
			got = got[:0]
			for _, r := range jsonRecords(t, buf) {
				if msg, _ := r["msg"].(string); strings.Contains(msg, "channel closed") {
					got = append(got, r)
				}
			}
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tester80: one consumer-side connection loss is one record, at Warn,
// with the reason and the calls it failed, the provider named
// "provider" and a component; so is a heartbeat's close. (It was an
// exchange Info/Warn "channel closed" with remote= and a kernel Warn
// "kernel: channel closed; reconnecting" with addr=.)
func TestAM_ConsumerConnectionLossIsOneRecord(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		lose        func(px *testproxy.Proxy)
		reason      string
	}{
		{"provider gone", "timeout=10s", func(px *testproxy.Proxy) { px.Down() }, "closed by peer"},
		{"heartbeat verdict", "timeout=10s&heartbeat=idle&heartbeat.interval=100ms&heartbeat.retries=1", func(px *testproxy.Proxy) { px.Pause(true) }, "heartbeat idle: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, e := provider(t)
			px := testproxy.New(t, e.URL().Address())
			var buf logbuf.Buffer
			c := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			t.Cleanup(func() { _ = c.Close() })
			r := refer(t, c, "airnode://"+px.Addr()+"/demo.Echo?retries=0&reconnect.backoff=50ms&"+tc.query)
			if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
				t.Fatal(err)
			}
			failed := make(chan error, 1)
			go func() { _, err := r.Invoke(ctxT(t), "Sleep", 3000); failed <- err }() // pending when the channel dies
			time.Sleep(100 * time.Millisecond)
			tc.lose(px)
			if err := <-failed; spi.StatusOf(err) != spi.StatusChannelInactive {
				t.Fatalf("call pending at the close: %v; want CHANNEL_INACTIVE", err)
			}
			recs := closeRecords(t, &buf)
			if len(recs) != 1 {
				t.Fatalf("%d records for one connection loss, want 1:\n%s", len(recs), buf.String())
			}
			got := recs[0]
			if got["level"] != "WARN" || got["component"] != "kernel" || got["provider"] != px.Addr() ||
				got["failed_calls"] != float64(1) || !strings.HasPrefix(got["reason"].(string), tc.reason) {
				t.Errorf("connection loss record %v; want WARN, component=kernel, provider=%s, failed_calls=1, reason %q...", got, px.Addr(), tc.reason)
			}
			checkPeerAndComponent(t, jsonRecords(t, &buf))
		})
	}
}
