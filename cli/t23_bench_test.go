package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Two concurrent benches of 8 connections each against a provider at
// accepts=10, the second starting 300 ms after the first (so the first
// ends, and closes its connections, first): the connections they report
// up add to at most 10 (tester23 N5: three benches of 64 against
// accepts=183 each reported 64 of 64). A bench counted, after its run,
// connections that its redials brought up once the other bench had gone
// and freed the provider's slots (it waited up to connect.timeout for
// them); it now counts what its run kept up (connWatch).
func TestT23_N5_ConcurrentBenchesCountTheirConnections(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "accepts=10")
	type outcome struct {
		Up    int `json:"connections_up"`
		Asked int `json:"connections_asked"`
	}
	var (
		wg   sync.WaitGroup
		outs [2]outcome
		errs [2]string
	)
	for i, d := range []string{"5s", "5s"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 1 {
				time.Sleep(300 * time.Millisecond)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, "bench", p.url("demo.Echo"), "--connections", "8", "-c", "4", "--duration", d, "--json")
			cmd.Env = hostEnviron()
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				errs[i] = err.Error() + ": " + out.String() + errb.String()
				return
			}
			if err := json.Unmarshal(out.Bytes(), &outs[i]); err != nil {
				errs[i] = err.Error() + ": " + out.String()
			}
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Fatalf("bench %d: %s", i, e)
		}
	}
	t.Logf("connections up: %d of %d, %d of %d", outs[0].Up, outs[0].Asked, outs[1].Up, outs[1].Asked)
	if outs[0].Asked != 8 || outs[1].Asked != 8 {
		t.Errorf("connections asked %d and %d, want 8 each", outs[0].Asked, outs[1].Asked)
	}
	if sum := outs[0].Up + outs[1].Up; sum > 10 || sum < 1 {
		t.Errorf("the benches report %d + %d = %d connections up against a provider at accepts=10, want 1 to 10", outs[0].Up, outs[1].Up, sum)
	}
}
