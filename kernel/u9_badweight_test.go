package kernel_test

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// TestU9_MalformedWeightIsSaidOnceWithTheWeightUsed (tester74 #9): an
// entry written by hand with weight=abc was dialled and picked with no
// word of the weight it was picked with. The consumer now says once, at
// Warn, that it picks it with the default weight 100, however many calls.
func TestU9_MalformedWeightIsSaidOnceWithTheWeightUsed(t *testing.T) {
	s, err := zktest.StartTick(200 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// a provider registered nowhere, whose entry is written by hand
	p := kernel.NewNode(bundle.Catalogs(), kernel.WithShutdownWait(0), kernel.WithLogger(slog.New(slog.DiscardHandler)))
	defer p.Close()
	exp, err := p.Export(ctx, cfg2Echo{}, spi.MustParse("airnode://127.0.0.1:0/u9.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	hand := exp.URL().With("weight", "abc").With("interface", "u9.Echo").With("category", "providers").With("side", "provider")
	raw, _, err := zk.Connect([]string{s.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, path := range []string{"/airnode", "/airnode/u9.Echo", "/airnode/u9.Echo/providers"} {
		_, _ = raw.Create(path, nil, 0, zk.WorldACL(zk.PermAll))
	}
	if _, err := raw.Create("/airnode/u9.Echo/providers/"+url.QueryEscape(hand.String()), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var log logbuf.Buffer
	c := kernel.NewNode(bundle.Catalogs(), kernel.WithShutdownWait(0),
		kernel.WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	defer c.Close()
	ref, err := c.Refer(ctx, spi.MustParse("airnode:///u9.Echo"), spi.MustParse(s.URL("")))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := ref.Invoke(ctx, "Echo", "x"); err != nil {
			t.Fatal(err)
		}
	}
	var lines []string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "weight") && strings.Contains(l, "abc") && strings.Contains(l, "level=WARN") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "default weight 100") {
		t.Fatalf("%d Warns of weight=abc, want 1 saying it is picked with the default weight 100:\n%s", len(lines), log.String())
	}
}
