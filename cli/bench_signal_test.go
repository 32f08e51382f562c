package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// slowEcho is a demo.Echo whose Echo takes 300 ms (or until its call is
// cancelled), so that every bench caller has a call in flight when the
// test interrupts bench.
type slowEcho struct{ served, held atomic.Int64 }

func (s *slowEcho) Echo(ctx context.Context, b []byte) ([]byte, error) {
	s.served.Add(1)
	select {
	case <-time.After(300 * time.Millisecond):
	case <-ctx.Done():
	}
	return b, nil
}

// Hold is a call that lasts 2 s (or until cancelled): a call in flight for
// the test to interrupt.
func (s *slowEcho) Hold(ctx context.Context) error {
	s.held.Add(1)
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
	}
	return nil
}

// interruptBench runs `airnode bench args...` against a slowEcho, sends it
// SIGINT once the provider has served 16 measured calls, and returns its
// outputs and exit code.
func interruptBench(t *testing.T, addr string, svc *slowEcho, args ...string) result {
	t.Helper()
	base := svc.served.Load()
	return interruptBenchWhen(t, addr, "16 calls served", func() bool { return svc.served.Load()-base >= 16 }, args...)
}

// interruptBenchWhen runs `airnode bench args...` against addr's
// demo.Echo, sends it SIGINT once ready (what) is true, and returns its
// outputs and exit code.
func interruptBenchWhen(t *testing.T, addr, what string, ready func() bool, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"bench", "airnode://" + addr + "/demo.Echo", "-c", "8", "--warmup", "0"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, what, ready)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("bench %v after SIGINT: %v\nstdout %s\nstderr %s", args, err, r.stdout, r.stderr)
	}
	r.code = ee.ExitCode()
	return r
}

// Ctrl-C during bench: the 8 calls in flight that SIGINT cuts short are
// counted neither as calls nor as errors (they were CLIENT_ERROR "context
// canceled"), the report says it was interrupted and after how much of the
// planned run, and bench exits 130 as a shell reports SIGINT.
func TestBench_SIGINTReportsWhatFinishedAndExits130(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, addr := exportSlowEcho(t, ctx)

	t.Run("json duration run", func(t *testing.T) {
		r := interruptBench(t, addr, svc, "--duration", "30s", "--json")
		var o struct {
			Calls       int64            `json:"calls"`
			OK          int64            `json:"ok"`
			Errors      map[string]int64 `json:"errors"`
			ElapsedSec  float64          `json:"elapsed_sec"`
			Interrupted bool             `json:"interrupted"`
			Signal      string           `json:"signal"`
			PlannedSec  float64          `json:"planned_sec"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
			t.Fatalf("stdout %q: %v", r.stdout, err)
		}
		if r.code != 130 || !o.Interrupted || o.Signal != "SIGINT" || o.PlannedSec != 30 || o.Calls == 0 || o.Calls != o.OK || len(o.Errors) != 0 {
			t.Fatalf("exit %d, report %+v; want exit 130, interrupted by SIGINT of 30 s planned, every counted call ok\n%s", r.code, o, r.stdout)
		}
		if want := "airnode: bench: interrupted by SIGINT after "; !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "of the planned 30s") {
			t.Fatalf("stderr %q; want %q ... of the planned 30s", r.stderr, want)
		}
	})
	t.Run("text counted run", func(t *testing.T) {
		r := interruptBench(t, addr, svc, "-n", "1000000")
		for _, want := range []string{"  stopped     interrupted by SIGINT after ", " of the planned 1000000 calls; calls it cut short are not counted\n", "  errors      none\n"} {
			if !strings.Contains(r.stdout, want) {
				t.Fatalf("stdout lacks %q:\n%s", want, r.stdout)
			}
		}
		if r.code != 130 || strings.Contains(r.stdout, "FAILED") {
			t.Fatalf("exit %d, stdout:\n%s", r.code, r.stdout)
		}
	})
}

// An interrupted call exits 130 too, saying so (it was exit 1 with
// "CLIENT_ERROR: ... context canceled").
func TestCall_SIGINTExits130(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, addr := exportSlowEcho(t, ctx)
	cmd := exec.CommandContext(ctx, binary, "call", "--timeout", "20s", "airnode://"+addr+"/demo.Echo", "Hold")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the call in flight", func() bool { return svc.held.Load() == 1 })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || errb.String() != "airnode: call: interrupted by SIGINT; the request had been sent to "+addr+" and may have run\n" || out.Len() != 0 {
		t.Fatalf("call after SIGINT: %v, stdout %q, stderr %q; want exit 130 and 'interrupted by SIGINT'", err, out.String(), errb.String())
	}
}

// SIGINT while bench still waits for a provider to register: exit 130,
// and --json prints its one object with the error.
func TestBench_SIGINTBeforeTheRunExits130(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, binary, "bench", "demo.Nothing", "--registry", "file://"+dir, "--json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// its consumer entry: bench watches the signals and waits for a provider
	waitFor(t, "bench's consumer entry", func() bool {
		entries, _ := os.ReadDir(filepath.Join(dir, "demo.Nothing", "consumers"))
		return len(entries) > 0
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	var o struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(out.Bytes(), &o)
	const msg = "bench: interrupted by SIGINT before the run started"
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || o.Error != msg || errb.String() != "airnode: "+msg+"\n" {
		t.Fatalf("bench after SIGINT: %v, stdout %q, stderr %q; want exit 130 and %q", err, out.String(), errb.String(), msg)
	}
}

// exportSlowEcho exports a slowEcho as demo.Echo on a provider node of its
// own, closed at the end of the test, and returns it and its address.
func exportSlowEcho(t *testing.T, ctx context.Context) (*slowEcho, string) {
	t.Helper()
	svc := &slowEcho{}
	return svc, exportAsEcho(t, ctx, svc)
}

// exportAsEcho exports svc as demo.Echo on a provider node of its own,
// closed at the end of the test, and returns its address.
func exportAsEcho(t *testing.T, ctx context.Context, svc any) string {
	t.Helper()
	prov := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = prov.Close() })
	exp, err := prov.Export(ctx, svc, spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	return exp.URL().Address()
}
