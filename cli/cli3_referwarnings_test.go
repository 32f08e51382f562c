package cli

import (
	"strings"
	"testing"
)

// warnRecords returns the WARN records of a --log-format json stderr
// (jsonRecords); none for an empty one.
func warnRecords(t *testing.T, what, stderr string) []map[string]any {
	t.Helper()
	if strings.TrimSpace(stderr) == "" {
		return nil
	}
	var out []map[string]any
	for _, rec := range jsonRecords(t, what, stderr) {
		if rec["level"] == "WARN" {
			out = append(out, rec)
		}
	}
	return out
}

// referSays returns what one of Refer's warning records says that list
// --explain must say too, in one warning: "key=" (or the key named in
// err) with its value when Refer names it, each attribute naming what reads it or what to do
// instead, and the why after "has no effect: " in the message.
func referSays(rec map[string]any) []string {
	var want []string
	for k, v := range rec {
		s, _ := v.(string)
		switch k {
		case "time", "level", "msg", "component", "service", "provider", "value":
		case "key":
			v, _ := rec["value"].(string)
			want = append(want, s+"="+v)
		case "read_by", "registry":
			want = append(want, strings.Split(s, ",")...)
		default: // did_you_mean, instead, cluster, loadbalance, heartbeat, err
			want = append(want, s)
		}
	}
	if _, why, ok := strings.Cut(rec["msg"].(string), "has no effect: "); ok {
		want = append(want, why)
	}
	return want
}

// Refer's warnings and list --explain's cannot drift (cli3): for each
// URL, every WARN a real Refer logs (airnode call --log-format json,
// against a real provider) has one list --explain warning saying the
// same: the key and value, what reads it, what to do instead, and why.
func TestCli3_ExplainWarnsOfAllReferWarns(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	for _, c := range []struct {
		q     string
		warns int // Refer's warnings at least: one per key
	}{
		{"retries=4&cluster=failfast", 1},
		{"hash.nodes=10&loadbalance=random", 1},
		{"Echo.retries=3&cluster=failfast&sleep.timeout=1s", 2},
		{"dispatcher=all&connection.concurrency=5&heartbeat.min.ping.interval=1s", 3},
		{"mock=true&Echo.async=true&timout=300&poll=1s", 4},
		{"weight=50&methods.Echo.warmup=1m&heartbeat=dual&heartbeat.retries=5", 3},
		{"methods.Echo.transport=tcp&Echo.connect.timeout=1s&check=true", 3}, // tester71 #4, #8
	} {
		q := c.q
		url := p.url("demo.Echo") + "?" + q
		r := call(t, nil, "--log-format", "json", url, "Echo", `"x"`)
		var refer []map[string]any // Refer's: the kernel's, not the connection's (component=exchange)
		for _, rec := range warnRecords(t, "call "+q, r.stderr) {
			if rec["component"] == "kernel" {
				refer = append(refer, rec)
			}
		}
		if r.code != 0 || len(refer) < c.warns {
			t.Fatalf("call %s: exit %d, want 0 and %d Refer warnings:\n%s", q, r.code, c.warns, r.stderr)
		}
		code, _, stderr := runBin(t, "", "list", "--log-format", "json", "--explain", url)
		if code != 0 {
			t.Fatalf("list --explain %s: exit %d:\n%s", q, code, stderr)
		}
		var explain []string
		for _, rec := range warnRecords(t, "list --explain "+q, stderr) {
			explain = append(explain, rec["msg"].(string))
		}
		for _, rec := range refer {
			want := referSays(rec)
			found := false
			for _, e := range explain {
				found = found || containsAll(e, want)
			}
			if !found {
				t.Errorf("%s: Refer warns %v; no list --explain warning says all of %q:\n%s", q, rec, want, strings.Join(explain, "\n"))
			}
		}
	}
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// A direct URL's weight=0 has no effect, as Refer and list --explain say
// (cli3): the direct registry used to copy it into each provider's URL,
// so every call failed "SERVICE_NOT_FOUND ... all 1 providers have weight
// 0". The KEYS rows show the provider's weight and mark the URL's, as
// they mark another cluster's or balancer's key.
func TestCli3_DirectWeightZeroHasNoEffect(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	for _, q := range []string{"weight=0", "weight=0&loadbalance=roundrobin", "weight=0&warmup=1h&timestamp=1"} {
		r := call(t, nil, p.url("demo.Echo")+"?"+q, "Echo", `"x"`)
		if r.code != 0 || strings.TrimSpace(r.stdout) != `"x"` || !strings.Contains(r.stderr, "provider key on a reference has no effect") {
			t.Errorf("call ?%s: exit %d, stdout %q, want \"x\" and Refer's warning:\n%s", q, r.code, r.stdout, r.stderr)
		}
	}
	const why = "each provider sets its own and consumers read it from the provider's URL (serve -p weight=...)"
	for _, c := range []struct {
		q, key string
		rows   []string
	}{
		{"weight=0", "weight", []string{"weight service 100 default", "service (weight=0 is not used: " + why + ")"}},
		{"retries=4&cluster=failfast", "retries", []string{"retries service 4 SERVICE_URL query (retries)", "service (retries=4 is not used: cluster failfast does not read it; failover does)"}},
		{"hash.nodes=10", "hash.nodes", []string{"hash.nodes service 10 SERVICE_URL query (hash.nodes)", "service (hash.nodes=10 is not used: loadbalance random does not read it; consistenthash does)"}},
	} {
		code, stdout, stderr := runBin(t, "", "list", "--explain", p.url("demo.Echo")+"?"+c.q)
		if rows := explainRows(t, stdout, c.key); code != 0 || strings.Join(rows, "\n") != strings.Join(c.rows, "\n") {
			t.Errorf("list --explain ?%s: exit %d, %s rows %q, want %q:\n%s%s", c.q, code, c.key, rows, c.rows, stdout, stderr)
		}
		if url := explainRows(t, stdout, "url"); len(url) != 1 || strings.Contains(url[0], "weight") {
			t.Errorf("list --explain ?%s: url row %q, want no weight (the direct registry's provider URL has none)", c.q, url)
		}
	}
}
