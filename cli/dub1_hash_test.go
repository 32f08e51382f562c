package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// hashSvc is one provider of the consistenthash test: Key answers with
// the provider's name.
type hashSvc struct{ name string }

func (s hashSvc) Key(_ context.Context, a, b string) (string, error) { return s.name, nil }

// tester35 finding 1: consistenthash reads Dubbo's method-level spelling
// "<m>.hash.arguments" / "<m>.hash.nodes" as it reads
// "methods.<m>.hash.*" (and as the kernel reads "<m>.timeout"), through a
// registry and on a direct reference, and list --explain says what
// happens. Three providers on loopback TCP; 300 calls Key("k<i>", "z").
func TestDub1_ConsistentHashReadsDubbosMethodSpelling(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat := bundle.Catalogs()
	reg := spi.MustParse("memory://" + t.Name())
	var hosts []string
	for i := range 3 {
		node := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithRegistry(reg), kernel.WithShutdownWait(0))
		defer node.Close()
		exp, err := node.Export(ctx, hashSvc{name: fmt.Sprintf("P%d", i+1)}, spi.MustParse("airnode://127.0.0.1:0/t.Svc?warmup=0"))
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, exp.URL().Address())
	}
	consumer := kernel.NewNode(cat, kernel.WithLogger(quiet))
	defer consumer.Close()

	// spread refers with query, by registry or directly, makes the 300
	// calls and returns how many each provider got, "P1=n1 P2=n2 P3=n3".
	spread := func(direct bool, query string) string {
		t.Helper()
		u, r := "airnode:///t.Svc?"+query, reg
		if direct {
			u, r = "airnode://"+strings.Join(hosts, ",")+"/t.Svc?"+query, spi.URL{}
		}
		ref, err := consumer.Refer(ctx, spi.MustParse(u), r)
		if err != nil {
			t.Fatal(err)
		}
		defer ref.Close()
		for len(ref.Providers()) < 3 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		ref.WaitSettled(ctx)
		got := map[string]int{}
		for i := range 300 {
			v, err := ref.Invoke(ctx, "Key", fmt.Sprintf("k%d", i), "z")
			if err != nil {
				t.Fatalf("%s: %v", u, err)
			}
			got[fmt.Sprint(v)]++
		}
		return fmt.Sprintf("P1=%d P2=%d P3=%d", got["P1"], got["P2"], got["P3"])
	}
	lone := regexp.MustCompile(`^(P.=0 )*P.=300( P.=0)*$`)
	for _, direct := range []bool{false, true} {
		none := spread(direct, "loadbalance=consistenthash")
		for _, spelling := range []string{"methods.Key.", "Key."} {
			// Argument 1 is always "z": every call goes to one provider.
			if got := spread(direct, "loadbalance=consistenthash&"+spelling+"hash.arguments=1"); !lone.MatchString(got) {
				t.Errorf("direct=%v %shash.arguments=1: %s, want all 300 on one provider", direct, spelling, got)
			}
		}
		// One ring point per provider moves most keys: both spellings
		// give the same spread, which is not the default's.
		long := spread(direct, "loadbalance=consistenthash&methods.Key.hash.nodes=1")
		if got := spread(direct, "loadbalance=consistenthash&Key.hash.nodes=1"); got != long || got == none {
			t.Errorf("direct=%v Key.hash.nodes=1: %s, want %s as methods.Key.hash.nodes=1 gives (the default gives %s)", direct, got, long, none)
		}
		t.Logf("direct=%v: no key %s; hash.nodes=1 %s", direct, none, long)
	}

	var out, errw bytes.Buffer
	raw := "airnode://" + hosts[0] + "/t.Svc?loadbalance=consistenthash&Key.hash.arguments=1&Key.hash.nodes=7"
	if err := runExplain(ctx, &out, &errw, "text", cat, config.DefaultConfig(), false, "", raw, ""); err != nil {
		t.Fatalf("%v\n%s", err, errw.String())
	}
	for _, re := range []string{
		`(?m)^hash\.arguments\s+method Key\s+1\s+SERVICE_URL query \(Key\.hash\.arguments\)$`,
		`(?m)^hash\.nodes\s+method Key\s+7\s+SERVICE_URL query \(Key\.hash\.nodes\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("list --explain %s: no line %s in:\n%s", raw, re, out.String())
		}
	}
}
