package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// tester18 N4: after a kill -9 and a quick restart, the registry lists
// the address twice until the old session expires; consumers count it
// once (kernel/directory keeps the newest timestamp). ls shows both and
// marks the older entry, and counts it in the service's line.
func TestRegistryLsMarksStaleEntryOfARestartedProvider(t *testing.T) {
	restarted := strconv.FormatInt(time.Now().Add(-3*time.Second).UnixMilli(), 10)
	killed := strconv.FormatInt(time.Now().Add(-6*time.Second).UnixMilli(), 10)
	dir := registered(t,
		"airnode://127.0.0.1:28080/demo.Echo?side=provider&pid=2&timestamp="+restarted,
		"airnode://127.0.0.1:28080/demo.Echo?side=provider&pid=1&timestamp="+killed,
		"airnode://127.0.0.1:28081/demo.Echo?side=provider&pid=3&timestamp="+killed,
	)
	out := registryLs(t, dir)
	if !row("demo.Echo", "(3 providers, 1 stale)").MatchString(out) {
		t.Errorf("service line does not count the stale entry:\n%s", out)
	}
	var stale, fresh int
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, "127.0.0.1:28080") && strings.Contains(l, staleNote):
			stale++
			if !strings.Contains(l, "6s") {
				t.Errorf("the stale entry is not the older one: %q", l)
			}
		case strings.Contains(l, "127.0.0.1:28080"), strings.Contains(l, "127.0.0.1:28081"):
			if strings.Contains(l, "stale") {
				t.Errorf("a current entry marked stale: %q", l)
			}
			fresh++
		}
	}
	if stale != 1 || fresh != 2 {
		t.Errorf("%d stale and %d current rows, want 1 and 2:\n%s", stale, fresh, out)
	}
}

func TestStaleEntriesKeepsTheNewest(t *testing.T) {
	u := func(addr, ts string) spi.URL {
		return spi.MustParse("airnode://" + addr + "/demo.Echo?side=provider&timestamp=" + ts)
	}
	for _, tc := range []struct {
		in   []spi.URL
		want string
	}{
		{[]spi.URL{u("h:1", "5"), u("h:1", "9"), u("h:2", "1")}, "s--"},
		{[]spi.URL{u("h:1", "9"), u("h:1", "5")}, "-s"},
		{[]spi.URL{u("h:1", "7"), u("h:1", "7")}, "s-"}, // a tie: the one listed last, as the directory keeps the one seen last
		{[]spi.URL{u("h:1", "x"), u("h:1", "1")}, "s-"}, // malformed counts as 0
		{nil, ""},
	} {
		if got := string(staleEntries(tc.in)); got != tc.want {
			t.Errorf("staleEntries(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// registry ls --json gives each entry's stale field.
func TestRegistryLsJSONMarksStaleEntry(t *testing.T) {
	now := time.Now()
	dir := registered(t,
		"airnode://127.0.0.1:28080/demo.Echo?side=provider&pid=1&timestamp="+strconv.FormatInt(now.Add(-6*time.Second).UnixMilli(), 10),
		"airnode://127.0.0.1:28080/demo.Echo?side=provider&pid=2&timestamp="+strconv.FormatInt(now.Add(-3*time.Second).UnixMilli(), 10),
	)
	out := registryLs(t, dir, "--json")
	var got lsJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(got.Services) != 1 || got.Services[0].Service != "demo.Echo" || len(got.Services[0].Providers) != 2 {
		t.Fatalf("listing %+v", got)
	}
	for _, p := range got.Services[0].Providers {
		if old := strings.Contains(p.URL, "pid=1"); p.Stale != old || p.Address != "127.0.0.1:28080" || p.Protocol != "airnode" {
			t.Errorf("entry %+v: stale %v, want %v", p, p.Stale, old)
		}
	}
	if out := registryLs(t, t.TempDir(), "--json"); !strings.Contains(out, `"services": []`) {
		t.Errorf("empty registry:\n%s", out)
	}
}
