package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testaddr"
)

// Tester27 finding 8: after a clean SIGTERM restart of one of 3 providers
// during `airnode bench --duration`, the summary read "only 2 of 3
// connection(s) up (... is the provider out of file descriptors ...)"
// next to "errors none". Two benches (summary and --json) run 6 s while
// one provider is SIGTERMed 1.5 s in and restarted on its port: both
// count it as restarted, all 3 connections up, none lost, and the
// summary does not suspect file descriptors.
func TestT27Ops_BenchCountsARestartedProvider(t *testing.T) {
	dir := t.TempDir()
	opts := []string{"-p", "warmup=0", "--shutdown-wait", "300ms"}
	p1 := serve(t, testaddr.Reserved(t), dir, opts...) // held to the end: restarted on it
	serve(t, "127.0.0.1:0", dir, opts...)
	serve(t, "127.0.0.1:0", dir, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{"bench", "--registry", "file://" + dir, "--duration", "6s", "-c", "2", "demo.Echo"}
	var text, js, errText, errJS bytes.Buffer
	human := exec.CommandContext(ctx, binary, args...)
	human.Stdout, human.Stderr = &text, &errText
	asJSON := exec.CommandContext(ctx, binary, append(args, "--json")...)
	asJSON.Stdout, asJSON.Stderr = &js, &errJS
	for _, c := range []*exec.Cmd{human, asJSON} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	if err := p1.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p1.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM", code)
	}
	serve(t, p1.addr, dir, opts...) // the restart, on the same port
	if err := human.Wait(); err != nil {
		t.Fatalf("bench: %v\n%s%s", err, text.String(), errText.String())
	}
	if err := asJSON.Wait(); err != nil {
		t.Fatalf("bench --json: %v\n%s%s", err, js.String(), errJS.String())
	}
	first := strings.SplitN(text.String(), "\n", 2)[0]
	t.Logf("%s", first)
	if strings.Contains(first, "file descriptors") || strings.Contains(first, "only ") {
		t.Errorf("the summary blames the provider for a restart:\n%s", text.String())
	}
	if !strings.Contains(first, "1 provider(s) restarted during the run") {
		t.Errorf("the summary does not name the restart:\n%s", text.String())
	}
	var o struct {
		Calls     int64          `json:"calls"`
		Errors    map[string]int `json:"errors"`
		Up        int            `json:"connections_up"`
		Asked     int            `json:"connections_asked"`
		Lost      *int           `json:"connections_lost"`
		DownAtEnd *int           `json:"connections_down_at_end"`
		Restarted *int           `json:"providers_restarted"`
		Left      *int           `json:"providers_left"`
	}
	if err := json.Unmarshal(js.Bytes(), &o); err != nil {
		t.Fatalf("%v: %s", err, js.String())
	}
	if o.Lost == nil || o.DownAtEnd == nil || o.Restarted == nil || o.Left == nil {
		t.Fatalf("--json lacks connections_lost, connections_down_at_end, providers_restarted or providers_left:\n%s", js.String())
	}
	t.Logf("--json: %d calls, errors %v, connections %d of %d, lost %d, down at end %d, restarted %d, left %d", o.Calls, o.Errors, o.Up, o.Asked, *o.Lost, *o.DownAtEnd, *o.Restarted, *o.Left)
	// the restarted provider unregistered before closing its listener:
	// the consumer released its connection (not lost: tester76 #2 counts
	// connections that died under it) and connected to the new one
	if o.Up != 3 || o.Asked != 3 || *o.Lost != 0 || *o.DownAtEnd != 0 || *o.Restarted != 1 || *o.Left != 0 {
		t.Errorf("--json: connections %d of %d, lost %d, down at end %d, restarted %d, left %d; want 3 of 3, 0, 0, 1, 0", o.Up, o.Asked, *o.Lost, *o.DownAtEnd, *o.Restarted, *o.Left)
	}
}

// The summary's texts for connections lost and providers that restarted
// or left: only connections never up suspect the provider's descriptors.
func TestT27Ops_ConnectionsTextSaysWhatWentAway(t *testing.T) {
	for _, tc := range []struct {
		o    benchOutcome
		want string
	}{
		{benchOutcome{ConnectionsUp: 3, ConnectionsAsked: 3, ProvidersRestarted: 1},
			"1 connection(s) per provider; 1 provider(s) restarted during the run (a new process on the address: its start timestamp changed)"},
		{benchOutcome{ConnectionsUp: 2, ConnectionsAsked: 2, ProvidersLeft: 1},
			"1 connection(s) per provider; 1 provider(s) left during the run and did not come back"},
		{benchOutcome{ConnectionsUp: 2, ConnectionsAsked: 3, ConnectionsDownAtEnd: 1},
			"only 2 of 3 connection(s) up (1 was up and went down during the run, its provider still listed: killed, stalled or cut off?)"},
		{benchOutcome{ConnectionsUp: 1, ConnectionsAsked: 3, ConnectionsDownAtEnd: 2},
			"only 1 of 3 connection(s) up (2 were up and went down during the run, their provider still listed: killed, stalled or cut off?)"},
		{benchOutcome{ConnectionsUp: 1, ConnectionsAsked: 3, ConnectionsDownAtEnd: 1},
			"only 1 of 3 connection(s) up (1 was up and went down during the run, its provider still listed: killed, stalled or cut off?; 1 other(s) got no answer to their first ping, or were closed at once: is the provider out of file descriptors, or at its connection limit, URL key accepts? see its log)"},
	} {
		if got := connectionsText(tc.o, 1); got != tc.want {
			t.Errorf("connectionsText(%+v) =\n%q, want\n%q", tc.o, got, tc.want)
		}
	}
}

// Tester27 finding 10: `airnode call` failed SERVICE_NOT_FOUND in about
// 30 ms when it started before the provider registered, where bench gives
// an empty registry list 2 s. call now waits the same 2 s: a provider
// serving 700 ms after the call started is called; with none, the call
// fails SERVICE_NOT_FOUND after about 2 s.
func TestT27Ops_CallWaitsForAFirstProvider(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	c := exec.CommandContext(ctx, binary, "call", "--registry", "file://"+dir, "demo.Echo", "Echo", `"early"`)
	c.Env = append(c.Environ(), "XDG_RUNTIME_DIR="+dir)
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	serve(t, "127.0.0.1:0", dir)
	if err := c.Wait(); err != nil || strings.TrimSpace(out.String()) != `"early"` {
		t.Fatalf("call started 700 ms before serve: %v after %v, stdout %q, stderr %q", err, time.Since(start), out.String(), errb.String())
	}
	t.Logf("call started 700 ms before serve: answered after %v", time.Since(start).Round(time.Millisecond))

	r := call(t, nil, "--registry", "file://"+t.TempDir(), "demo.Echo", "Echo", `"none"`)
	t.Logf("call with no provider: exit %d after %v: %s", r.code, r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stderr))
	expectFail(t, r, "SERVICE_NOT_FOUND")
	if r.elapsed < 1900*time.Millisecond || r.elapsed > 8*time.Second {
		t.Errorf("call with no provider failed after %v, want about 2 s (registryGrace)", r.elapsed)
	}
}
