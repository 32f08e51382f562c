package failsafe_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/airnode/airnode/extensions/cluster/failsafe"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestConformance(t *testing.T) { spitest.TestCluster(t, failsafe.Builder{}) }

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestFailureSwallowedAndLogged(t *testing.T) {
	var logs syncBuf
	ref := spi.MustParse("consumer://10.0.0.9/demo.Echo")
	c, _ := failsafe.New(failsafe.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))).Build(ref)
	p := spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.1:20880/demo.Echo"), func(context.Context, *spi.Invocation) spi.Result {
		return spi.Result{Value: "partial", Err: spi.Errorf(spi.StatusServerError, "disk full")}
	})
	r := c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Echo"}, spitest.NewStubDirectory(ref, "memory://", p), pickFirst{})
	if r.Err != nil || r.Value != nil || r.Attachments != nil {
		t.Fatalf("got %+v, want the zero Result", r)
	}
	if spi.StatusOf(r.Swallowed) != spi.StatusServerError {
		t.Fatalf("Swallowed = %v, want the SERVER_ERROR the provider answered", r.Swallowed)
	}
	out := logs.String()
	for _, want := range []string{"disk full", "10.0.0.1:20880", "Echo", "demo.Echo"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log %q does not contain %q", out, want)
		}
	}
}

type pickFirst struct{}

func (pickFirst) Select(l []spi.Invoker, _ *spi.Invocation) spi.Invoker { return l[0] }

// UseLogger (the node's logger) reaches a cluster built without
// WithLogger; a Builder's own logger wins over it.
func TestUseLogger(t *testing.T) {
	ref := spi.MustParse("consumer://10.0.0.9/demo.Echo")
	p := spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.1:20880/demo.Echo"), func(context.Context, *spi.Invocation) spi.Result {
		return spi.Result{Err: spi.Errorf(spi.StatusServerError, "disk full")}
	})
	call := func(c spi.Cluster) {
		c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Echo"}, spitest.NewStubDirectory(ref, "memory://", p), pickFirst{})
	}
	var node, own syncBuf
	c, _ := failsafe.New().Build(ref)
	c.(spi.LoggerUser).UseLogger(slog.New(slog.NewJSONHandler(&node, nil)))
	call(c)
	if !strings.HasPrefix(node.String(), "{") || !strings.Contains(node.String(), "disk full") {
		t.Fatalf("node logger got %q", node.String())
	}
	c, _ = failsafe.New(failsafe.WithLogger(slog.New(slog.NewTextHandler(&own, nil)))).Build(ref)
	var other syncBuf
	c.(spi.LoggerUser).UseLogger(slog.New(slog.NewJSONHandler(&other, nil)))
	call(c)
	if !strings.Contains(own.String(), "disk full") || other.String() != "" {
		t.Fatalf("own logger got %q, node logger %q", own.String(), other.String())
	}
}
