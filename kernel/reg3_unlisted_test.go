package kernel

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// H-reg3 item 2 (tester29 6b): a call of a method that no provider's
// "methods" lists goes to one provider, once, and fails SERVICE_NOT_FOUND
// naming the method, the methods listed and the provider's own answer;
// failover used to ask every provider ("failed after 2 attempts"). The
// two real providers' access logs count the requests that reached them.
// A provider entry without "methods" makes the methods unknown: the
// cluster runs the call again, with its retries.
func TestReg3_UnlistedMethodNotRetried(t *testing.T) {
	cat := testCatalogs(t)
	regURL := spi.MustParse("memory://reg3-unlisted")
	b, err := cat.Registry.Get("memory")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := b.Build(regURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	logs := make([]*logbuf.Buffer, 2)
	var entries []spi.URL
	for i := range logs {
		logs[i] = &logbuf.Buffer{}
		p := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(logs[i], nil))), WithShutdownWait(0))
		t.Cleanup(func() { _ = p.Close() })
		e, err := p.Export(ctxT(t), demo.New("p"+strconv.Itoa(i), 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?accesslog=true"))
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.Register(ctxT(t), e.URL()); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e.URL())
	}
	asked := func(method string) int {
		n := 0
		for _, l := range logs {
			n += strings.Count(l.String(), "method="+method+" ")
		}
		return n
	}
	c := NewNode(cat, WithLogger(quiet))
	t.Cleanup(func() { _ = c.Close() })
	ref, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), regURL)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := ref.Invoke(ctxT(t), "Echo", "x"); err != nil {
			t.Fatal(err)
		}
	}
	const listed = `(methods of its 2 providers in memory://reg3-unlisted: Echo, Fail, Info, Payload, Sleep)`
	for i, tc := range []struct{ method, want string }{
		{"Nope", `no provider of demo.Echo lists method "Nope" ` + listed + `; asked 127.0.0.1:`},
		{"Ech", listed + `; did you mean "Echo"?; asked 127.0.0.1:`},
		{"Nope", `once, not retried: SERVICE_NOT_FOUND: service "demo.Echo" has no method "Nope" (methods: Echo, Fail, Info, Payload, Sleep)`},
	} {
		_, err := ref.Invoke(ctxT(t), tc.method, "x")
		if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "failover") {
			t.Fatalf("%s: err = %v; want SERVICE_NOT_FOUND %q, not retried", tc.method, err, tc.want)
		}
		time.Sleep(50 * time.Millisecond) // the access log line
		if n := asked("Nope") + asked("Ech"); n != i+1 {
			t.Fatalf("after %d calls of unlisted methods the providers were asked %d times, want %d:\n%s\n%s", i+1, n, i+1, logs[0], logs[1])
		}
	}
	// A newer entry of one provider without "methods" (one that does not
	// publish them): nothing is known, and failover asks both.
	newer := strconv.FormatInt(time.Now().UnixMilli()+1000, 10)
	if err := reg.Register(ctxT(t), entries[0].Without(spi.KeyMethods).With("timestamp", newer)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := ref.Invoke(ctxT(t), "Nope", "x")
		if spi.StatusOf(err) != spi.StatusServiceNotFound {
			t.Fatalf("err = %v; want SERVICE_NOT_FOUND", err)
		}
		if strings.Contains(err.Error(), "failover: demo.Echo.Nope failed after 2 attempts") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with an entry without methods, the call is still not retried: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
