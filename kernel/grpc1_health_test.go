package kernel

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// drainProbe is a Readiness that records, when Shutdown marks it
// draining, how many providers of demo.Echo the registry still lists,
// then passes the mark on to the real Health.
type drainProbe struct {
	h   *metrics.Health
	reg spi.Registry

	mu     sync.Mutex
	calls  int
	listed int
	reason string
}

func (p *drainProbe) MarkDraining(reason string) {
	urls, _ := p.reg.Lookup(context.Background(), spi.MustParse("airnode:///demo.Echo?side=consumer"))
	p.mu.Lock()
	p.calls++
	p.listed, p.reason = len(urls), reason
	p.mu.Unlock()
	p.h.MarkDraining(reason)
}

// getReady returns /ready's status code and body.
func getReady(t *testing.T, base string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// Shutdown marks the node's health (WithHealth) draining before it
// unregisters anything: /ready answers 503 "draining: shutting down"
// during the wait, while the provider still serves calls; a Health
// already draining keeps its reason (serve's signal).
func TestShutdownMarksHealthDraining(t *testing.T) {
	cat := testCatalogs(t)
	b, err := cat.Filter.Get(metrics.Name)
	if err != nil {
		t.Fatal(err)
	}
	mreg, ok := metrics.RegistryOf(b)
	if !ok {
		t.Fatal("no bundled metrics filter")
	}
	health := metrics.NewHealth()
	srv, err := metrics.Listen("127.0.0.1:0", mreg, metrics.WithHealth(health))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr().String()

	regURL := spi.MustParse("memory://grpc1health")
	rb, err := cat.Registry.Get("memory")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := rb.Build(regURL)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	probe := &drainProbe{h: health, reg: reg}

	const wait = 800 * time.Millisecond
	p := NewNode(cat, WithLogger(quiet), WithRegistry(regURL), WithShutdownWait(wait), WithHealth(probe))
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	health.SetState(metrics.NodeServing, "")
	if code, body := getReady(t, base); code != http.StatusOK || body != "serving" {
		t.Fatalf("/ready before Shutdown: %d %q; want 200 serving", code, body)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- p.Shutdown(context.Background()) }()
	var code int
	var body string
	eventually(t, "/ready answering 503", func() bool {
		code, body = getReady(t, base)
		return code != http.StatusOK
	})
	if code != http.StatusServiceUnavailable || body != "draining: shutting down" {
		t.Errorf("/ready during Shutdown: %d %q; want 503 \"draining: shutting down\"", code, body)
	}
	if d := time.Since(began); d > wait/2 {
		t.Errorf("/ready answered 503 %v after Shutdown began; want at its start", d)
	}
	var out any
	if err := r.Call(ctxT(t), "Echo", []any{"during the wait"}, &out); err != nil {
		t.Errorf("call during the wait, /ready already 503: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) before its wait: the probe saw the end, not the drain", err)
	default:
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	probe.mu.Lock()
	defer probe.mu.Unlock()
	if probe.calls != 1 || probe.listed != 1 || probe.reason != "shutting down" {
		t.Errorf("MarkDraining: %d calls, the registry listing %d providers then, reason %q; want 1 call, before the unregister (1 listed), \"shutting down\"",
			probe.calls, probe.listed, probe.reason)
	}
	if code, body := getReady(t, base); code != http.StatusServiceUnavailable || body != "draining: shutting down" {
		t.Errorf("/ready after Shutdown: %d %q", code, body)
	}
}

// A Health marked draining before Shutdown (serve, with the signal's
// name) keeps its reason.
func TestShutdownKeepsAnEarlierDrainingReason(t *testing.T) {
	health := metrics.NewHealth()
	health.SetState(metrics.NodeServing, "")
	health.SetState(metrics.NodeDraining, "SIGTERM received, shutting down")
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0), WithHealth(health))
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, why := health.Ready(); ok || why != "draining: SIGTERM received, shutting down" {
		t.Errorf("Ready after Close: %v %q; want the signal's reason kept", ok, why)
	}
}
