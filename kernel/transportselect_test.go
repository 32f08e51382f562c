package kernel

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// Through a registry, a reference that names a transport calls only the
// providers serving it, as Dubbo's reference protocol does: with an smux
// and a tcp provider, transport=tcp calls the tcp one only, and no call
// fails; with only the smux one, the error says it was left out and why
// (was: every attempt dialled the smux provider over tcp, "transport or
// TLS mismatch?", new-user tester).
func TestReferenceTransportSelectsProvidersThroughARegistry(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("file://" + t.TempDir())
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0), WithRegistry(reg))
	t.Cleanup(func() { _ = p.Close() })
	smuxExp, err := p.Export(ctxT(t), demo.New("s", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet), WithRegistry(reg))
	t.Cleanup(func() { _ = c.Close() })

	only, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?transport=tcp&timeout=2s"), reg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = only.Invoke(ctxT(t), "Echo", 1)
	if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), smuxExp.URL().Address()+" serves transport smux; the reference asks for transport=tcp") {
		t.Fatalf("call with only an smux provider: %v; want SERVICE_NOT_FOUND naming the provider left out and why", err)
	}
	_ = only.Close()

	q := NewNode(cat, WithLogger(quiet), WithShutdownWait(0), WithRegistry(reg))
	t.Cleanup(func() { _ = q.Close() })
	tcpExp, err := q.Export(ctxT(t), demo.New("t", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=tcp"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?transport=tcp&timeout=2s"), reg)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the tcp provider listed", func() bool { return len(r.Providers()) == 1 })
	for i := range 20 {
		if _, err := r.Invoke(ctxT(t), "Echo", i); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if got := r.Providers()[0].URL().Address(); got != tcpExp.URL().Address() {
		t.Fatalf("provider %s, want the tcp one %s", got, tcpExp.URL().Address())
	}
}
