package kernel_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// t71Echo is the service of the Dubbo-entry test.
type t71Echo struct{}

func (t71Echo) Echo(_ context.Context, s string) (string, error) { return s, nil }

// dubboIntKeys are the keys Dubbo (2.7, 3) and dubbo-go read from a
// provider or consumer URL as a Java int (URL.getParameter(key, int),
// getMethodParameter(method, key, int)), by Dubbo's constant names:
// TIMEOUT_KEY, WARMUP_KEY, WEIGHT_KEY, RETRIES_KEY, CONNECT_TIMEOUT_KEY,
// HEARTBEAT_KEY, HEARTBEAT_TIMEOUT_KEY, PAYLOAD_KEY, EXECUTES_KEY,
// ACTIVES_KEY, ACCEPTS_KEY, DELAY_KEY, IDLE_TIMEOUT_KEY, and
// ConsistentHash's HASH_NODES.
var dubboIntKeys = []string{"timeout", "warmup", "weight", "retries", "connect.timeout", "heartbeat", "heartbeat.timeout",
	"payload", "executes", "actives", "accepts", "delay", "idle.timeout", "hash.nodes"}

// javaInt is Java's Integer.parseInt: an optional sign, then ASCII
// digits only, within int's range.
var javaInt = regexp.MustCompile(`^[+-]?[0-9]+$`)

// dubboReadErrors parses entry as Dubbo reads it: each of dubboIntKeys,
// at service level, as Dubbo 2.7's "<method>.<key>" and Dubbo 3's
// "methods.<method>.<key>" for each method of "methods", with
// Integer.parseInt (a NumberFormatException for "10s"); timestamp as
// Long.parseLong. It returns one message per key Dubbo would fail on.
func dubboReadErrors(entry spi.URL) []string {
	var bad []string
	check := func(k string, bits int) {
		v, ok := entry.Param(k)
		if !ok {
			return
		}
		if _, err := strconv.ParseInt(v, 10, bits); err != nil || !javaInt.MatchString(v) {
			bad = append(bad, k+"="+v)
		}
	}
	for _, k := range dubboIntKeys {
		check(k, 32)
		for _, m := range entry.Methods() {
			check(m+"."+k, 32)
			check("methods."+m+"."+k, 32)
		}
	}
	check("timestamp", 64)
	return bad
}

// Tester71: a provider's and a consumer's registry entries carry every
// duration as integer milliseconds and every size as integer bytes, as
// Dubbo writes and reads them (timeout=10s was published as is, which
// Dubbo's Integer.parseInt refuses), in a real ZooKeeper and in the file
// registry; an airnode consumer reading the entry gets the same
// effective timeout, method timeout, warm-up and payload as the
// provider was given.
func TestT71_RegistryEntriesInDubboForm(t *testing.T) {
	zs, err := zktest.StartTick(200 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer zs.Close()
	fileDir := t.TempDir()

	const given = "timeout=10s&warmup=10m&connect.timeout=1500ms&heartbeat=idle&heartbeat.interval=30s&heartbeat.timeout=2m" +
		"&payload=8MiB&methods.Echo.timeout=200ms&heartbeat.ping.on.timeout=1&weight=50"
	want := map[string]string{"timeout": "10000", "warmup": "600000", "connect.timeout": "1500", "heartbeat.interval": "30000",
		"heartbeat.timeout": "120000", "payload": "8388608", "Echo.timeout": "200", "heartbeat.ping.on.timeout": "true", "weight": "50"}

	for _, tc := range []struct {
		name, reg string
		read      func(t *testing.T, category string) []spi.URL // the entries as stored
	}{
		{"zookeeper", zs.URL("root=/dubbo&session.timeout=4s"), func(t *testing.T, category string) []spi.URL {
			return zkEntries(t, zs.Addr(), "t.Dubbo", category)
		}},
		{"file", "file://" + fileDir, func(t *testing.T, category string) []spi.URL {
			ents, err := os.ReadDir(filepath.Join(fileDir, "t.Dubbo", category))
			if err != nil {
				t.Fatal(err)
			}
			var out []spi.URL
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") {
					continue
				}
				b, err := os.ReadFile(filepath.Join(fileDir, "t.Dubbo", category, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, spi.MustParse(strings.TrimSpace(string(b))))
			}
			return out
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log logbuf.Buffer
			logger := slog.New(slog.NewTextHandler(&log, nil))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			p := kernel.NewNode(bundle.Catalogs(), kernel.WithRegistry(spi.MustParse(tc.reg)), kernel.WithShutdownWait(0), kernel.WithLogger(logger))
			defer p.Close()
			e, err := p.Export(ctx, t71Echo{}, spi.MustParse("airnode://127.0.0.1:0/t.Dubbo?"+given))
			if err != nil {
				t.Fatal(err)
			}
			entries := tc.read(t, "providers")
			if len(entries) != 1 {
				t.Fatalf("providers entries: %v, want one", entries)
			}
			entry := entries[0]
			if !entry.Without("interface", "category").Equal(e.URL()) { // ZooKeeper adds Dubbo's interface and category
				t.Errorf("entry %s\nExporter.URL %s\nwant the same (URL is the URL as registered)", entry, e.URL())
			}
			for k, v := range want {
				if got, _ := entry.Param(k); got != v {
					t.Errorf("entry %s=%q, want %q (Dubbo's form)", k, got, v)
				}
			}
			if v, ok := entry.Param("heartbeat"); ok {
				t.Errorf("entry heartbeat=%q, want it absent (the default strategy; Dubbo reads heartbeat as an int of ms)", v)
			}
			if bad := dubboReadErrors(entry); len(bad) > 0 {
				t.Errorf("Dubbo's Integer.parseInt fails on %v of entry %s", bad, entry)
			}

			c := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(logger))
			defer c.Close()
			ref, err := c.Refer(ctx, spi.MustParse("airnode:///t.Dubbo?reconnect.backoff=250ms&heartbeat.interval=20s"), spi.MustParse(tc.reg))
			if err != nil {
				t.Fatal(err)
			}
			if !ref.WaitAvailable(ctx) {
				t.Fatal("no provider available within 30s")
			}
			var got string
			if err := ref.Call(ctx, "Echo", []any{"x"}, &got); err != nil || got != "x" {
				t.Fatalf("Echo = %q, %v", got, err)
			}
			eff := ref.Providers()[0].URL() // merged: what the consumer uses
			durs := map[string]time.Duration{"timeout": 10 * time.Second, "warmup": 10 * time.Minute, "connect.timeout": 1500 * time.Millisecond,
				"heartbeat.timeout": 2 * time.Minute, "heartbeat.interval": 20 * time.Second, "reconnect.backoff": 250 * time.Millisecond}
			for k, d := range durs {
				if v, err := eff.Duration(k, 0); err != nil || v != d {
					t.Errorf("effective %s = %v, %v; want %v", k, v, err, d)
				}
			}
			if v, err := eff.MethodDuration("Echo", "timeout", 0); err != nil || v != 200*time.Millisecond {
				t.Errorf("effective Echo timeout = %v, %v; want 200ms", v, err)
			}
			if v, err := eff.Size("payload", 0); err != nil || v != 8<<20 {
				t.Errorf("effective payload = %v, %v; want 8MiB", v, err)
			}

			cons := tc.read(t, "consumers")
			if len(cons) != 1 {
				t.Fatalf("consumers entries: %v, want one", cons)
			}
			for k, v := range map[string]string{"reconnect.backoff": "250", "heartbeat.interval": "20000"} {
				if got, _ := cons[0].Param(k); got != v {
					t.Errorf("consumer entry %s=%q, want %q", k, got, v)
				}
			}
			if bad := dubboReadErrors(cons[0]); len(bad) > 0 {
				t.Errorf("Dubbo's Integer.parseInt fails on %v of consumer entry %s", bad, cons[0])
			}
			if t.Failed() {
				t.Log(log.String())
			}
		})
	}
}
