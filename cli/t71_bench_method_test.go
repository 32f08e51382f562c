package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tester71 #3: bench --method of a method no provider lists was throttled
// to about 20 calls/s, as if no provider were usable, and stopped "no
// provider of demo.Echo usable for 5s". It is refused before the run with
// the kernel's words, at once.
func TestT71_3_BenchUnlistedMethodFailsFast(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir)
	_ = p
	r := runCommand(t, 60*time.Second, nil, "bench", "--registry", "file://"+dir, "-n", "400", "-c", "2", "--method", "Nope", "demo.Echo")
	t.Logf("bench --method Nope: %v: %s", r.elapsed, r.stderr)
	if r.code != 1 || !strings.Contains(r.stderr, `no provider of demo.Echo lists method "Nope" (methods of its 1 provider in`) ||
		strings.Contains(r.stderr, "usable") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming the methods listed, not an unusable provider", r.code, r.stderr)
	}
	if r.elapsed > 3*time.Second {
		t.Errorf("bench took %v; want a refusal before the run", r.elapsed)
	}
}

// tester71 #12: bench --method "" benched demo.Echo's Echo; bench of
// another service without --method failed every call "has no method
// Echo" without saying that --method benches another method.
func TestT71_12_BenchMethodEmptyAndHint(t *testing.T) {
	t.Parallel()
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "bench", "--method", "", "airnode://127.0.0.1:1/demo.Echo")
	expectUsage(t, r, `airnode: bench: --method "": want a method name`)

	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(cfg, []byte("plugins:\n  - {name: greeter, point: service, command: "+greeter+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "127.0.0.1:0", dir, "--config", cfg)
	for _, target := range []string{"greeter.Greeter", p.url("greeter.Greeter")} {
		r = runCommand(t, 60*time.Second, nil, "bench", "--registry", "file://"+dir, "-n", "20", "--warmup", "0", target)
		if r.code != 1 || !strings.Contains(r.stderr, `has no method "Echo"`) || !strings.Contains(r.stderr, "give --method NAME") {
			t.Errorf("bench %s: exit %d, stderr %q; want exit 1 with a --method hint", target, r.code, r.stderr)
		}
	}
}
