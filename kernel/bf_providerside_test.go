package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// tester85 #6, #7: a key only providers read (executes, threads,
// accepts), given to a reference, did nothing and said nothing, even
// with a malformed value (executes=abc). Refer now warns of each, in
// list --explain's words (ReferWarnings kind "providerside"), naming a
// malformed value; consumer keys stay silent, and the reference works.
func TestBF_ReferWarnsOfProviderSideKeys(t *testing.T) {
	table := []struct {
		key, value string
		warned     bool
		invalid    string
	}{
		{"executes", "abc", true, "want an integer from 0 (no limit) to 1048576"},
		{"executes", "5", true, ""},
		{"methods.Who.executes", "2", true, ""},
		{"threads", "512", true, ""},
		{"Who.threads", "x", true, "want an integer"},
		{"accepts", "10", true, ""},
		{"health.service", "false", true, ""},
		{"actives", "3", false, ""},
		{"timeout", "2s", false, ""},
		{"connections", "2", false, ""},
	}
	for _, tc := range table {
		var logs syncBuffer
		n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0))
		u := spi.MustParse("airnode://127.0.0.1:1/t.Who").With(tc.key, tc.value)
		warns, err := n.ReferWarnings(u)
		if err != nil {
			t.Fatalf("%s=%s: ReferWarnings: %v", tc.key, tc.value, err)
		}
		var got *URLWarning
		for i := range warns {
			if warns[i].Kind == "providerside" {
				got = &warns[i]
			}
		}
		r, err := n.Refer(ctxT(t), u, spi.URL{})
		if err != nil {
			t.Fatalf("%s=%s: Refer: %v", tc.key, tc.value, err)
		}
		_ = r.Close()
		n.Close()
		out := logs.String()
		const msg = `msg="URL key is a provider key: it has no effect on a call; set it on the provider (serve URL)"`
		if !tc.warned {
			if got != nil || strings.Contains(out, msg) {
				t.Errorf("%s=%s: a consumer key was warned of as a provider's: %v\n%s", tc.key, tc.value, got, out)
			}
			continue
		}
		if got == nil || got.Key != tc.key || got.Value != tc.value {
			t.Errorf("%s=%s: ReferWarnings = %+v; want a providerside warning", tc.key, tc.value, warns)
			continue
		}
		base := baseKey(tc.key, nil)
		if want := "a provider key: it has no effect on a call; set it on the provider (serve URL: serve -p " + base + "=..."; !strings.HasPrefix(got.Why, want) {
			t.Errorf("%s=%s: Why %q; want it to open with %q", tc.key, tc.value, got.Why, want)
		}
		if !strings.Contains(out, msg) || !strings.Contains(out, "key="+tc.key+" value="+tc.value) {
			t.Errorf("%s=%s: Refer's log lacks the warning:\n%s", tc.key, tc.value, out)
		}
		switch {
		case tc.invalid == "" && strings.Contains(got.Why+out, "malformed"), tc.invalid == "" && strings.Contains(out, "invalid="):
			t.Errorf("%s=%s: a well-formed value named malformed: %q\n%s", tc.key, tc.value, got.Why, out)
		case tc.invalid != "" && (!strings.Contains(got.Why, "its value "+tc.value+" is malformed too: "+tc.invalid) || !strings.Contains(out, `invalid="`+tc.invalid+`"`)):
			t.Errorf("%s=%s: Why %q, log:\n%s\nwant the malformed value named: %s", tc.key, tc.value, got.Why, out, tc.invalid)
		}
	}
}
