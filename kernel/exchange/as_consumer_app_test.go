package exchange

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
)

// tester80 #8: a provider's records of a connection name the consumer's
// application, which the consumer sends once per connection in its
// first ping's hello; a consumer that sends none (older than it) still
// works, and the records have no consumer_application.
func TestAS_ProviderRecordsNameConsumerApplication(t *testing.T) {
	for _, tc := range []struct {
		name, app, hello string
	}{
		{"application and heartbeat keys", "billing", "heartbeat=idle&heartbeat.interval=60s"},
		{"application only", "billing", ""},
		{"older consumer with a hello", "", "heartbeat=idle&heartbeat.interval=60s"},
		{"older consumer without a hello", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf logbuf.Buffer
			f := startServer(t, true, func(o *Options) {
				o.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			})
			ch := f.dial(func(o *Options) { o.Application, o.Hello = tc.app, tc.hello })
			if err := ch.Ping(pingCtx(t)); err != nil {
				t.Fatal(err)
			}
			if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "x"), 3*time.Second); res.Err != nil {
				t.Fatal(res.Err)
			}
			if got := f.svc.lastApplication(); got != tc.app {
				t.Errorf("Request.Application %q, want %q", got, tc.app)
			}
			ch.Close("consumer done")
			var rec map[string]any
			if !waitFor(3*time.Second, func() bool {
				for l := range strings.SplitSeq(buf.String(), "\n") {
					var r map[string]any
					if json.Unmarshal([]byte(l), &r) == nil && r["msg"] == "channel closed" && r["side"] == "provider" {
						rec = r
						return true
					}
				}
				return false
			}) {
				t.Fatalf("no provider record of the close:\n%s", buf.String())
			}
			got, ok := rec["consumer_application"]
			if tc.app == "" && ok {
				t.Errorf("close record %v has consumer_application for a consumer that sent none", rec)
			}
			if tc.app != "" && got != tc.app {
				t.Errorf("close record %v: consumer_application %v, want %q", rec, got, tc.app)
			}
			if rec["consumer"] == nil || rec["component"] != "exchange" {
				t.Errorf("close record %v: want consumer and component=exchange", rec)
			}
		})
	}
}
