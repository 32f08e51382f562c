package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tester66 F4: bench could call only demo.Echo's Echo, so a service
// plugin could not be benchmarked. --method NAME with --args JSON (call's
// argument syntax, once per argument) calls any method; the reply is not
// checked, failures count by status; --req and --resp, demo.Echo's, are
// refused with it.
func TestT66_F4_BenchMethodOfAServicePlugin(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(cfg, []byte("plugins:\n  - {name: greeter, point: service, command: "+greeter+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "127.0.0.1:0", dir, "--config", cfg)
	target := p.url("greeter.Greeter")

	out := benchRun(t, nil, target, "--method", "Hello", "--args", `"Ann"`, "-n", "200", "-c", "4", "--warmup", "0", "--json")
	var r struct {
		Calls    int64            `json:"calls"`
		OK       int64            `json:"ok"`
		Errors   map[string]int64 `json:"errors"`
		Workload struct {
			Method string   `json:"method"`
			Args   []string `json:"args"`
		} `json:"workload"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Calls != 200 || r.OK != 200 || r.Workload.Method != "Hello" || len(r.Workload.Args) != 1 || r.Workload.Args[0] != `"Ann"` {
		t.Errorf("bench --method Hello: %+v; want 200 calls, all ok, workload Hello(\"Ann\")\n%s", r, out)
	}
	text := benchRun(t, nil, target, "--method", "Hello", "--args", `"Ann"`, "-n", "50", "--warmup", "0")
	if !strings.Contains(text, `Hello("Ann")`) || !strings.Contains(text, "errors      none") {
		t.Errorf("summary lacks Hello(\"Ann\") and no errors:\n%s", text)
	}

	// a provider's refusal counts by status: Hello("") is BAD_REQUEST
	res := runCommand(t, 60*time.Second, nil, "bench", target, "--method", "Hello", "--args", `""`, "-n", "20", "--warmup", "0", "--json")
	var bad struct {
		Errors map[string]int64 `json:"errors"`
	}
	_ = json.Unmarshal([]byte(res.stdout), &bad)
	if res.code != 1 || bad.Errors["BAD_REQUEST"] != 20 {
		t.Errorf("bench Hello(\"\"): exit %d, stdout %s; want exit 1 and 20 BAD_REQUEST", res.code, res.stdout)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--method", "Hello", "--req", "64"}, "--method Hello and --req both given: --req is about demo.Echo's Echo and Payload; with --method give the call's arguments with --args JSON"},
		{[]string{"--method", "Hello", "--resp", "64"}, "--method Hello and --resp both given"},
		{[]string{"--args", `"Ann"`}, `--args "Ann" without --method`},
		{[]string{"--method", "Hello", "--args", `{"bad"`}, "bench: --args"},
	} {
		res := runCommand(t, 30*time.Second, nil, "bench", append([]string{target, "-n", "5"}, tc.args...)...)
		if res.code != 2 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("bench %v: exit %d, stderr %q; want exit 2 and %q", tc.args, res.code, res.stderr, tc.want)
		}
	}
}
