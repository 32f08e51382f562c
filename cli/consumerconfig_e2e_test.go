package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// Tester8 #2: plugins.yaml's references[].url names the providers and
// bypasses the registry, as Dubbo's <dubbo:reference url=...>. One
// provider is registered in the configuration's registry, the other is
// only named by the url: calls, bench and a Go consumer reach the second.
func TestReferenceURLBypassesTheRegistry(t *testing.T) {
	registered := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "warmup=0")
	named := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "warmup=0")
	for _, url := range []string{named.url("demo.Echo"), "airnode://" + named.addr} {
		t.Run(url, func(t *testing.T) {
			cfg := writeConfig(t, fmt.Sprintf("registry: %s\nreferences:\n  - interface: demo.Echo\n    url: %s\n", registered.reg, url))
			for range 3 {
				r := call(t, nil, "--config", cfg, "demo.Echo", "Info")
				if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf(`"pid":%d`, named.cmd.Process.Pid)) {
					t.Fatalf("call demo.Echo Info: exit %d, stdout %q, stderr %q; want the url's provider (pid %d), not the registry's (pid %d)",
						r.code, r.stdout, r.stderr, named.cmd.Process.Pid, registered.cmd.Process.Pid)
				}
			}
			b := runCommand(t, 30*time.Second, nil, "bench", "--config", cfg, "demo.Echo", "-n", "200", "--json")
			if b.code != 0 || !strings.Contains(b.stdout, named.addr) || strings.Contains(b.stdout, registered.addr) {
				t.Fatalf("bench demo.Echo: exit %d, stdout %q, stderr %q; want only %s", b.code, b.stdout, b.stderr, named.addr)
			}
		})
	}

	t.Run("SeveralProviders", func(t *testing.T) {
		third := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "warmup=0")
		cfg := writeConfig(t, fmt.Sprintf("registry: %s\nreferences:\n  - interface: demo.Echo\n    url: airnode://%s,%s/demo.Echo\n", registered.reg, named.addr, third.addr))
		b := runCommand(t, 30*time.Second, nil, "bench", "--config", cfg, "demo.Echo", "-n", "400", "--json")
		if b.code != 0 || !strings.Contains(b.stdout, named.addr) || !strings.Contains(b.stdout, third.addr) || strings.Contains(b.stdout, registered.addr) {
			t.Fatalf("bench demo.Echo: exit %d, stdout %q, stderr %q; want calls to %s and %s only", b.code, b.stdout, b.stderr, named.addr, third.addr)
		}
	})

	t.Run("GoApplyReference", func(t *testing.T) {
		c, err := config.Load(config.Source{File: writeConfig(t, fmt.Sprintf("registry: %s\nreferences:\n  - {interface: demo.Echo, url: %q}\n", registered.reg, named.url("demo.Echo")))})
		if err != nil {
			t.Fatal(err)
		}
		u, _ := c.ApplyReference(spi.MustParse("airnode:///demo.Echo"))
		n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
		defer n.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ref, err := n.Refer(ctx, u, spi.MustParse(c.Registry))
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			var info map[string]any
			if err := ref.Call(ctx, "Info", nil, &info); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(info["pid"]) != fmt.Sprint(named.cmd.Process.Pid) {
				t.Fatalf("Info from pid %v, want the url's provider %d", info["pid"], named.cmd.Process.Pid)
			}
		}
	})

	t.Run("RegistryFlagNotUsed", func(t *testing.T) {
		cfg := writeConfig(t, fmt.Sprintf("references:\n  - {interface: demo.Echo, url: %q}\n", named.url("demo.Echo")))
		r := call(t, nil, "--config", cfg, "--registry", registered.reg, "demo.Echo", "Info")
		if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf(`"pid":%d`, named.cmd.Process.Pid)) ||
			!strings.Contains(r.stderr, "not used: the configuration's reference of demo.Echo names its providers (url airnode://"+named.addr) {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("ListExplain", func(t *testing.T) {
		cfg := writeConfig(t, fmt.Sprintf("registry: %s\nreferences:\n  - {interface: demo.Echo, url: %q}\n", registered.reg, named.url("demo.Echo")))
		code, out, errOut := airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo")
		if code != 0 || !strings.Contains(out, "url      airnode://"+named.addr+"/demo.Echo") || !strings.Contains(out, "not used by this URL: it names its providers") {
			t.Fatalf("list --explain: exit %d, stdout:\n%s\nstderr %q", code, out, errOut)
		}
	})

	t.Run("NotAURL", func(t *testing.T) {
		cfg := writeConfig(t, "references:\n  - interface: demo.Echo\n    url: "+named.addr+"\n")
		expectFail(t, call(t, nil, "--config", cfg, "demo.Echo", "Info"), "airnode: call: config:", `key "references[0].url"`, "is not a URL", "airnode://host:port")
	})
}

// Tester8 #3: a consumer's method-level key wins over the provider's
// whichever spelling either side used: the provider's
// methods.Sleep.timeout=200ms loses to the consumer's Dubbo-form
// Sleep.timeout=2s, from -p and from plugins.yaml, and list --explain says
// the consumer's value is the one in effect.
func TestConsumerMethodKeyBeatsProvidersOtherSpelling(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "warmup=0", "-p", "methods.Sleep.timeout=200ms", "-p", "timeout=300ms")
	env := []string{"AIRNODE_REGISTRY=" + p.reg}
	expectFail(t, call(t, env, "demo.Echo", "Sleep", "500"), "SERVER_TIMEOUT")
	for _, key := range []string{"Sleep.timeout=2s", "methods.Sleep.timeout=2s"} {
		expectOK(t, call(t, env, "demo.Echo", "Sleep", "500", "-p", key), "500")
		k, v, _ := strings.Cut(key, "=")
		cfg := writeConfig(t, fmt.Sprintf("references:\n  - interface: demo.Echo\n    params: {%s: %s}\n", k, v))
		expectOK(t, call(t, env, "--config", cfg, "demo.Echo", "Sleep", "500"), "500")
	}
	r := runCommand(t, 20*time.Second, env, "list", "--explain", "demo.Echo?Sleep.timeout=2s")
	if r.code != 0 {
		t.Fatalf("list --explain: exit %d, stderr %q", r.code, r.stderr)
	}
	var row string
	for _, l := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(l); len(f) >= 4 && f[0] == "timeout" && f[1] == "method" && f[2] == "Sleep" {
			row = l
		}
	}
	if !strings.Contains(row, "2s") || !strings.Contains(row, "Sleep.timeout") || strings.Contains(row, "provider") {
		t.Fatalf("list --explain's timeout row for Sleep is %q, want the consumer's 2s from Sleep.timeout\n%s", row, r.stdout)
	}
}

// Tester8 #4: one-shot `airnode call` processes with consistenthash send
// the same key to the same provider: each process's first call hashes over
// every registered provider, not over the first one connected.
func TestConsistentHashSameProviderFromEveryProcess(t *testing.T) {
	reg := t.TempDir()
	pids := map[string]bool{}
	for range 3 {
		p := serve(t, "127.0.0.1:0", reg, "-p", "warmup=0")
		pids[fmt.Sprintf(`"pid":%d`, p.cmd.Process.Pid)] = true
	}
	env := []string{"AIRNODE_REGISTRY=file://" + reg}
	first := ""
	for i := range 6 {
		info := call(t, env, "demo.Echo?loadbalance=consistenthash", "Info")
		if info.code != 0 {
			t.Fatalf("call %d: exit %d, stderr %q", i, info.code, info.stderr)
		}
		pid := ""
		for k := range pids {
			if strings.Contains(info.stdout, k) {
				pid = k
			}
		}
		if pid == "" {
			t.Fatalf("call %d: Info %q is from none of the providers %v", i, info.stdout, pids)
		}
		if first == "" {
			first = pid
		}
		if pid != first {
			t.Fatalf("process %d reached %s, process 0 %s: the same key must reach the same provider from every process", i, pid, first)
		}
	}
}
