package integration

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

var (
	buildOnce  sync.Once
	airnodeBin string
	buildErr   error
)

// airnodeBinary builds cmd/airnode once per test run.
func airnodeBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "airnode-hb-")
		if err != nil {
			buildErr = err
			return
		}
		airnodeBin = filepath.Join(dir, "airnode")
		out, err := exec.Command("go", "build", "-o", airnodeBin, "github.com/airnode/airnode/cmd/airnode").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return airnodeBin
}

var servingLine = regexp.MustCompile(`airnode serve: serving" addr=(\S+)`)

// serveProcess starts `airnode serve` on a free loopback port with extra
// arguments and returns the process and its address.
func serveProcess(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(airnodeBinary(t), append([]string{"serve", "--listen", "127.0.0.1:0", "--registry", "file://" + dir}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-exited
	})
	select {
	case a := <-addr:
		return cmd, a
	case <-exited:
		t.Fatal("airnode serve exited before serving")
	case <-time.After(15 * time.Second):
		t.Fatal("airnode serve not serving after 15 s")
	}
	return nil, ""
}

// H2: two `airnode serve` processes, heartbeat idle (interval 1s, retries
// 3). One is stopped with SIGSTOP (its kernel still accepts TCP): the
// consumer drops it from rotation within interval × (retries + 1) + 1 s =
// 5 s, no idempotent call fails (failover), every call afterwards goes to
// the other; after SIGCONT it is picked again once it answers a ping.
func TestH2_HungProviderDroppedThenPickedAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs airnode serve")
	}
	t.Parallel()
	hb := []string{"-p", "heartbeat=idle", "-p", "heartbeat.interval=1s", "-p", "heartbeat.retries=3"}
	a, addrA := serveProcess(t, hb...)
	b, addrB := serveProcess(t, hb...)
	pidA, pidB := a.Process.Pid, b.Process.Pid

	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = n.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := fmt.Sprintf("airnode://%s,%s/demo.Echo?heartbeat=idle&heartbeat.interval=1s&heartbeat.retries=3&reconnect.backoff=100ms&loadbalance=roundrobin&methods.Info.idempotent=true", addrA, addrB)
	ref, err := n.Refer(ctx, spi.MustParse(u), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	info := func() (int, error) {
		var v map[string]any
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ref.Call(ctx, "Info", nil, &v); err != nil {
			return 0, err
		}
		var pid int
		_, err := fmt.Sscan(fmt.Sprint(v["pid"]), &pid)
		return pid, err
	}
	invokerOf := func(addr string) spi.Invoker {
		for _, inv := range ref.Providers() {
			if inv.URL().Address() == addr {
				return inv
			}
		}
		t.Fatalf("no invoker for %s among %d", addr, len(ref.Providers()))
		return nil
	}
	// Refer returns once one provider is ready; the other is picked once
	// its first ping is answered, so call until both have answered.
	seen := map[int]bool{}
	for deadline := time.Now().Add(5 * time.Second); !seen[pidA] || !seen[pidB]; {
		if time.Now().After(deadline) {
			t.Fatalf("calls reached %v within 5s, want both %d and %d", seen, pidA, pidB)
		}
		pid, err := info()
		if err != nil {
			t.Fatal(err)
		}
		seen[pid] = true
	}
	invA := invokerOf(addrA)

	// Calls keep flowing while A hangs.
	var failed, toA, calls int
	var mu sync.Mutex
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(50 * time.Millisecond):
			}
			pid, err := info()
			mu.Lock()
			calls++
			if err != nil {
				failed++
				t.Logf("call failed: %v", err)
			} else if pid == pidA {
				toA++
			}
			mu.Unlock()
		}
	}()
	if err := a.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	for invA.Available() {
		if time.Since(stopped) > 8*time.Second {
			t.Fatal("hung provider still in rotation after 8 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	dropped := time.Since(stopped)
	t.Logf("hung provider dropped after %v", dropped.Round(time.Millisecond))
	if dropped > 5*time.Second {
		t.Errorf("dropped after %v, want ≤ interval × (retries + 1) + 1 s = 5 s", dropped)
	}
	mu.Lock()
	toA = 0
	mu.Unlock()
	time.Sleep(2 * time.Second)
	mu.Lock()
	if toA != 0 {
		t.Errorf("%d calls reached the stopped provider after it was dropped", toA)
	}
	mu.Unlock()

	if err := a.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	for !invA.Available() {
		// The manager's backoff reached at most a few seconds while A
		// hung (each attempt waits connect.timeout 3 s for its ping).
		if time.Since(resumed) > 15*time.Second {
			t.Fatal("resumed provider not back in rotation after 15 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("resumed provider back in rotation after %v", time.Since(resumed).Round(time.Millisecond))
	time.Sleep(500 * time.Millisecond)
	close(quit)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if failed != 0 {
		t.Errorf("%d of %d idempotent calls failed; failover should have hidden the hung provider", failed, calls)
	}
	if toA == 0 {
		t.Errorf("no call reached the resumed provider in 500 ms of round robin")
	}
}
