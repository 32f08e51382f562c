package cli

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

// nu39 #11: registry ls tells a provider that never warms up (warmup=0)
// from one that finished warming: WARM-UP "off", not "done", in the table
// and in --json's warmup.
func TestRegistryLsWarmupOff(t *testing.T) {
	old := strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10)
	dir := registered(t,
		"airnode://127.0.0.1:20001/demo.Echo?side=provider&timestamp="+old+"&weight=100&warmup=0",
		"airnode://127.0.0.1:20002/demo.Echo?side=provider&timestamp="+old+"&weight=100&warmup=10m",
		"airnode://127.0.0.1:20003/demo.Echo?side=provider&weight=100&warmup=0s",
	)
	out := registryLs(t, dir)
	for _, r := range [][]string{
		{"127.0.0.1:20001", "100", "off", "1h0m0s", "airnode"},
		{"127.0.0.1:20002", "100", "done", "1h0m0s", "airnode"},
		{"127.0.0.1:20003", "100", "off", "-", "airnode"},
	} {
		if !row(r...).MatchString(out) {
			t.Errorf("output lacks row %q:\n%s", r, out)
		}
	}
	out = registryLs(t, dir, "--json")
	var got struct {
		Services []struct {
			Providers []struct {
				Address string `json:"address"`
				Warmup  string `json:"warmup"`
			} `json:"providers"`
		} `json:"services"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Services) != 1 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	want := map[string]string{"127.0.0.1:20001": "off", "127.0.0.1:20002": "done", "127.0.0.1:20003": "off"}
	for _, p := range got.Services[0].Providers {
		if p.Warmup != want[p.Address] {
			t.Errorf("--json: %s warmup %q, want %q", p.Address, p.Warmup, want[p.Address])
		}
	}
}
