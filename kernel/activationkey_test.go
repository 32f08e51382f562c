package kernel

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// keyedFilter is a consumer filter switched on by its activation key,
// declaring no keys (no spi.KeyDescriber), as bench's bench.attempts.
type keyedFilter struct{}

func (keyedFilter) Name() string { return "t84.keyed" }
func (keyedFilter) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer}, Key: "t84.keyed"}
}
func (keyedFilter) Build(spi.URL) (spi.Filter, error) { return passFilter{}, nil }

type passFilter struct{}

func (passFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	return next.Invoke(ctx, inv)
}

// tester84 #4: every bench run warned that its own filter's activation
// key bench.attempts "is not read by airnode or any extension of this
// node": a filter activated by a key reads it, declared or not.
func TestActivationKeyIsARead(t *testing.T) {
	cat := testCatalogs(t)
	if err := cat.Filter.Register(keyedFilter{}, extension.Bundled); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	n := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	r, err := n.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/t.Who?t84.keyed=true"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	if strings.Contains(logs.String(), "t84.keyed") {
		t.Errorf("Refer warned of the filter's activation key:\n%s", logs.String())
	}
	if u := UnreadKeys(cat, spi.MustParse("airnode://h:1/t.Who?t84.keyed=true&t84.keyd=1")); len(u) != 1 || u[0].Key != "t84.keyd" || u[0].Meant != "t84.keyed" {
		t.Errorf("UnreadKeys = %+v, want only t84.keyd, meant t84.keyed", u)
	}
}
