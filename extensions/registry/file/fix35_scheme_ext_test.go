package file_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/file/filetest"
	"github.com/airnode/airnode/spi"
)

// TestFix35_OtherSchemeIsInvalid: a hand-written providers entry of a
// scheme no transport serves (http://, dubbo://, HTTPS:// in capitals)
// was listed by Lookup and pushed to subscribers, which dropped it with
// only a Debug line (the directory takes airnode:// alone), and `registry
// ls` showed it as a provider. Now every reader skips it like the other
// invalid entries: one Warn per entry naming the file, the scheme and the
// one allowed, over many polls and lookups; Invalid returns it; Lookup,
// Services and a subscription see only the airnode provider. A consumer
// entry is not a provider URL and keeps its scheme.
func TestFix35_OtherSchemeIsInvalid(t *testing.T) {
	good := spi.MustParse("airnode://127.0.0.1:37001/demo.Echo?side=provider")
	r, regDir, logBuf := loggedRegistry(t, "?poll=20ms", good, spi.MustParse("consumer://127.0.0.1/demo.Echo?side=consumer&pid=1"))
	prov := filepath.Join(regDir, "demo.Echo", "providers")
	schemes := map[string]string{"hand-http": "http", "hand-dubbo": "dubbo", "hand-https": "https"}
	filetest.HandEntry(t, prov, "hand-http", "http://127.0.0.1:37002/demo.Echo?side=provider\n")
	filetest.HandEntry(t, prov, "hand-dubbo", "dubbo://127.0.0.1:37003/demo.Echo?side=provider\n")
	filetest.HandEntry(t, prov, "hand-https", "HTTPS://127.0.0.1:37004/demo.Echo?side=provider\n")

	consumer := spi.MustParse("airnode://127.0.0.1/demo.Echo")
	ch := subscribe(t, r, consumer)
	if list := waitList(t, ch, 1, 5*time.Second, "first list"); list[0].Address() != good.Address() {
		t.Fatalf("subscription pushed %v, want only %s", list, good)
	}
	for range 10 {
		if l, err := r.Lookup(context.Background(), consumer); err != nil || len(l) != 1 || l[0].Address() != good.Address() {
			t.Fatalf("Lookup: %v, %v; want only %s", l, err, good)
		}
		time.Sleep(30 * time.Millisecond)
	}
	if c, err := r.(interface {
		Consumers(context.Context, spi.URL) ([]spi.URL, error)
	}).Consumers(context.Background(), consumer); err != nil || len(c) != 1 {
		t.Errorf("Consumers: %v, %v; want the consumer:// entry", c, err)
	}

	text := logBuf.String()
	for name, scheme := range schemes {
		lines := 0
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, "file="+filepath.Join(prov, name)+" ") {
				lines++
				if !strings.Contains(l, "level=WARN") || !strings.Contains(l, `scheme \"`+scheme+`\", which no transport serves (want airnode://)`) {
					t.Errorf("%s: the line does not say Warn, the scheme %q and the one allowed:\n%s", name, scheme, l)
				}
			}
		}
		if lines != 1 {
			t.Errorf("%s: logged %d times, want once:\n%s", name, lines, text)
		}
	}
	if n := strings.Count(text, "level=WARN"); n != len(schemes) {
		t.Errorf("%d Warn lines, want %d:\n%s", n, len(schemes), text)
	}
	inv := invalidEntries(t, r, consumer)
	if len(inv) != len(schemes) {
		t.Errorf("Invalid: %+v, want the %d entries of another scheme", inv, len(schemes))
	}
	for _, iv := range inv {
		if s, ok := schemes[iv.Name]; !ok || !strings.HasPrefix(iv.Why, `scheme "`+s+`"`) {
			t.Errorf("Invalid %s: why %q, want it to start with scheme %q", iv.Name, iv.Why, s)
		}
	}
}
