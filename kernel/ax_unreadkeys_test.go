package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// tester82 #5: Refer and Export warned only of a key close to a known one
// (did you mean) or on the Dubbo list, while list --explain warned of
// every key read by nothing: shareconnections=2, queues=10 and bogusxyz=1
// passed silently. Both now warn of each in list --explain's words
// (UnreadKeys), the Dubbo keys with what to use instead, and stay quiet
// about the keys airnode or an extension reads and Dubbo's informational
// ones.
func TestAX_ReferAndExportWarnOfEveryUnreadKey(t *testing.T) {
	const unread, dubbo, silent = "unread", "dubbo", "silent"
	table := []struct{ key, value, want string }{
		{"bogusxyz", "1", unread},
		{"timout", "1s", unread}, // with its did-you-mean
		{"shareconnections", "2", dubbo},
		{"queues", "10", dubbo},
		{"provided-by", "x", dubbo},
		{"init", "true", dubbo},
		{"iothreads", "4", dubbo},
		{"reference.filter", "x", dubbo},
		{"service.filter", "x", dubbo},
		{"application.version", "1", dubbo},
		{"lazy", "true", dubbo},
		{"threadpool", "fixed", dubbo},
		{"timeout", "1s", silent},
		{"methods.Who.timeout", "1s", silent},
		{"retries", "1", silent},
		{"connections", "1", silent},
		{"payload", "1MiB", silent},
		{"accepts", "100", silent},
		{"threads", "100", silent}, // the threadlimit filter's
		{"idempotent", "true", silent},
		{"owner", "me", silent},
		{"application", "a", silent},
		{"group", "", silent},
	}
	for _, side := range []string{"refer", "export"} {
		t.Run(side, func(t *testing.T) {
			for _, tc := range table {
				if side == "refer" && (tc.key == "accepts" || tc.key == "threads") {
					continue // a provider's key: Refer says so (TestBF_ReferWarnsOfProviderSideKeys)
				}
				var logs syncBuffer
				n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0))
				addr := "127.0.0.1:0"
				if side == "refer" {
					addr = "127.0.0.1:1"
				}
				u := spi.MustParse("airnode://"+addr+"/t.Who").With(tc.key, tc.value)
				if side == "refer" {
					r, err := n.Refer(ctxT(t), u, spi.URL{})
					if err != nil {
						t.Fatalf("%s=%s: %v", tc.key, tc.value, err)
					}
					_ = r.Close()
				} else if _, err := n.Export(ctxT(t), whoService{}, u); err != nil {
					t.Fatalf("%s=%s: %v", tc.key, tc.value, err)
				}
				n.Close()
				out := logs.String() + "\n"
				hasKey := strings.Contains(out, "key="+tc.key+" ") || strings.Contains(out, "key="+tc.key+"\n")
				warned := strings.Contains(out, "level=WARN") && hasKey
				switch tc.want {
				case unread:
					if !strings.Contains(out, `msg="URL key `+UnreadKeyWords+`; ignored"`) || !hasKey {
						t.Errorf("%s=%s: want the unread-key warning in list --explain's words:\n%s", tc.key, tc.value, out)
					}
				case dubbo:
					if !strings.Contains(out, "URL key is Dubbo's and airnode does not implement it (ignored)") || !warned {
						t.Errorf("%s=%s: want the Dubbo-key warning:\n%s", tc.key, tc.value, out)
					}
				case silent:
					if warned || strings.Contains(out, UnreadKeyWords) {
						t.Errorf("%s=%s: a key airnode reads was warned of:\n%s", tc.key, tc.value, out)
					}
				}
			}
		})
	}
	if got := UnreadKeys(testCatalogs(t), spi.MustParse("airnode://h:1/t.Who?timout=1s&bogusxyz=1")); len(got) != 2 ||
		got[0] != (UnreadKey{Key: "bogusxyz"}) || got[1] != (UnreadKey{Key: "timout", Meant: "timeout"}) {
		t.Errorf("UnreadKeys = %v", got)
	}
}
