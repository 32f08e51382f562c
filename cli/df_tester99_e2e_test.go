package cli

import (
	"encoding/json"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// twoProviders starts two demo.Echo providers (serve, warmup=0) with a
// file registry of their own.
func twoProviders(t *testing.T) (a, b *provider) {
	t.Helper()
	dir := t.TempDir()
	return serve(t, "127.0.0.1:0", dir, "-p", "warmup=0"), serve(t, "127.0.0.1:0", dir, "-p", "warmup=0")
}

// tester99 #3: bench --method Info -p loadbalance=consistenthash sent
// every call to one provider and said nothing (Info takes no argument:
// nothing to hash). The consumer now warns once for the method, not per
// call. Real binaries.
func TestDF_ConsistentHashNoArgumentWarnsOnce(t *testing.T) {
	t.Parallel()
	a, b := twoProviders(t)
	u := "airnode://" + a.addr + "," + b.addr + "/demo.Echo"
	r := runCommand(t, 60*time.Second, noAirnodeEnv, "bench", u, "--method", "Info", "-p", "loadbalance=consistenthash", "-n", "2000", "-c", "4", "--json")
	if r.code != 0 {
		t.Fatalf("bench: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var o struct {
		Calls     int            `json:"calls"`
		Providers map[string]int `json:"providers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, r.stdout)
	}
	if o.Calls != 2000 || len(o.Providers) != 1 {
		t.Errorf("calls %d over providers %v; want 2000, all on one provider (nothing to hash)", o.Calls, o.Providers)
	}
	const text = `msg="method Info is called with no argument, so consistenthash has nothing to hash: every call of it goes to one provider (give it another balancer: methods.Info.loadbalance=roundrobin)"`
	if n := strings.Count(r.stderr, text); n != 1 || !strings.Contains(r.stderr, "key=hash.arguments value=0 method=Info arguments=0") {
		t.Errorf("stderr has %d warnings %s; want 1 naming the key and the method:\n%s", n, text, r.stderr)
	}

	// The balancer the warning suggests for the method shares its calls.
	r = runCommand(t, 60*time.Second, noAirnodeEnv, "bench", u, "--method", "Info", "-p", "loadbalance=consistenthash",
		"-p", "methods.Info.loadbalance=roundrobin", "-n", "2000", "-c", "4", "--json")
	o.Providers = nil
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil || r.code != 0 {
		t.Fatalf("bench: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if o.Providers[a.addr] != 1000 || o.Providers[b.addr] != 1000 || strings.Contains(r.stderr, "nothing to hash") {
		t.Errorf("with methods.Info.loadbalance=roundrobin: providers %v, want 1000 each and no warning; stderr:\n%s", o.Providers, r.stderr)
	}
}

// tester99 #5: hash.arguments naming one index twice was accepted
// silently; it is refused as a malformed value (exit 2), naming the key,
// the value and the index.
func TestDF_HashArgumentsGivenTwiceRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir)
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "bench", p.url("demo.Echo"), "-p", "loadbalance=consistenthash", "-p", "hash.arguments=0,0", "-n", "10")
	expectUsage(t, r, `airnode: bench: -p hash.arguments=0,0: service demo.Echo: loadbalance "consistenthash": invalid value "0,0" for URL key "hash.arguments": want comma-separated argument indexes, each given once, such as 0 or 0,1 (0 is given twice)`)
	r = call(t, noAirnodeEnv, p.url("demo.Echo"), "-p", "loadbalance=consistenthash", "-p", "methods.Echo.hash.arguments=1,1", "Echo", `"x"`)
	expectUsage(t, r, `airnode: call: -p methods.Echo.hash.arguments=1,1: `, `invalid value "1,1" for URL key "methods.Echo.hash.arguments"`, "(1 is given twice)")
}

// tester99 #5: a direct URL naming one address twice is one provider
// (connections_asked 2 for 3 listed); Refer warns once naming the
// address.
func TestDF_DirectURLAddressTwiceWarns(t *testing.T) {
	t.Parallel()
	a, b := twoProviders(t)
	u := "airnode://" + a.addr + "," + b.addr + "," + a.addr + "/demo.Echo"
	r := runCommand(t, 60*time.Second, noAirnodeEnv, "bench", u, "-n", "200", "--json")
	var o struct {
		Asked int `json:"connections_asked"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil || r.code != 0 {
		t.Fatalf("bench: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	const text = `msg="provider address listed more than once in the direct URL: it is one provider, called as one"`
	if o.Asked != 2 || strings.Count(r.stderr, text) != 1 || !strings.Contains(r.stderr, "provider="+a.addr+" providers=2") || strings.Contains(r.stderr, "provider="+b.addr) {
		t.Errorf("connections_asked %d (want 2) and stderr (want one warning naming %s):\n%s", o.Asked, a.addr, r.stderr)
	}
}

// tester99 #4: a direct URL listing live providers and many dead
// addresses made one "cannot connect to provider" WARN line per dead
// address (996 for 996). The first 3 providers of the reference are
// logged as before, the others summed up in one line. The dead addresses
// are other loopback addresses at the live provider's port, which refuse
// at once (Linux routes all of 127/8 to the loopback).
func TestDF_ManyDeadProvidersLogFewLines(t *testing.T) {
	t.Parallel()
	a, b := twoProviders(t)
	_, port, _ := net.SplitHostPort(a.addr)
	hosts := []string{a.addr, b.addr}
	const dead = 50
	for i := range dead {
		hosts = append(hosts, "127.0.0."+strconv.Itoa(i+2)+":"+port)
	}
	u := "airnode://" + strings.Join(hosts, ",") + "/demo.Echo"
	r := runCommand(t, 60*time.Second, noAirnodeEnv, "bench", u, "--duration", "3s", "-c", "4", "--json")
	var o struct {
		Errors map[string]int `json:"errors"`
		Up     int            `json:"connections_up"`
		Asked  int            `json:"connections_asked"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil || r.code != 0 {
		t.Fatalf("bench: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(o.Errors) != 0 || o.Up != 2 || o.Asked != 2+dead {
		t.Errorf("errors %v, connections %d of %d; want none, 2 of %d", o.Errors, o.Up, o.Asked, 2+dead)
	}
	named := map[string]bool{}
	more := 0
	lines := 0
	summary := regexp.MustCompile(`msg="\.\.\. and (\d+) more providers could not be connected \(their lines left out\): see airnode stats or the metrics \(airnode_consumer_connect_failures_total\)" component=kernel service=demo.Echo more_providers=(\d+) `)
	provider := regexp.MustCompile(` provider=(\S+) `)
	for _, line := range strings.Split(r.stderr, "\n") {
		switch {
		case strings.Contains(line, `msg="cannot connect to provider"`):
			lines++
			if m := provider.FindStringSubmatch(line); m != nil {
				named[m[1]] = true
			}
		case summary.MatchString(line):
			lines++
			m := summary.FindStringSubmatch(line)
			n, _ := strconv.Atoi(m[1])
			if m[1] != m[2] {
				t.Errorf("summary's text and more_providers differ: %s", line)
			}
			more += n
		}
	}
	// 3 providers named at their 4th attempt (the 8th comes after 12 s of
	// backoff), the others in one summary
	if len(named) != 3 || more != dead-3 || lines > 4 {
		t.Errorf("%d lines of the kind naming %d providers, %d more summed up; want 3 named, %d summed up, at most 4 lines:\n%s",
			lines, len(named), more, dead-3, r.stderr)
	}
	t.Logf("%d dead addresses: %d lines of the kind, naming %v", dead, lines, named)
}
