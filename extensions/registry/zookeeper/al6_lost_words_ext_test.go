package zookeeper_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

const msgLost = "connection lost"

// TestAL6_ConnectionLostSaysWhatItKeeps (tester80 #6): every
// provider-only process said "connection lost; keeping last provider
// lists", though it keeps no lists. The line says what the registry
// holds: a provider's, that its entries stay until the session expires
// and are re-created; a consumer's (subscriptions, no entry), that it
// keeps the last provider lists. Neither process was paused, so neither
// line says so. Real ZooKeeper, cut off through a proxy.
func TestAL6_ConnectionLostSaysWhatItKeeps(t *testing.T) {
	px := testproxy.New(t, server.Addr())
	var plog, clog lineLog
	u := spi.MustParse("zookeeper://" + px.Addr() + "?root=al6words&session.timeout=10s")
	p, err := zookeeper.Builder{Logger: slog.New(&plog)}.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	c, err := zookeeper.Builder{Logger: slog.New(&clog)}.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	rec := subscribe(t, c, spi.MustParse("airnode:///demo.Echo"))
	rec.wait(t, 10*time.Second, 1)
	unreachable(px)
	pl := plog.waitFor(t, 10*time.Second, msgLost)
	cl := clog.waitFor(t, 10*time.Second, msgLost)
	t.Logf("provider: %s\nconsumer: %s", pl.msg, cl.msg)
	if want := msgLost + "; its entries stay in ZooKeeper until the session expires, and a new session re-creates them"; pl.msg != want {
		t.Errorf("provider-only registry: %q; want %q", pl.msg, want)
	}
	if want := msgLost + "; keeping the last provider lists"; cl.msg != want {
		t.Errorf("subscriptions-only registry: %q; want %q", cl.msg, want)
	}
	px.Refuse(false)
	plog.waitFor(t, 15*time.Second, "connected again")
}

// pausedChildEnv names the ZooKeeper address TestAL6_PausedProcessSaysSo
// hands its child (TestMain runs pausedChild when it is set).
const pausedChildEnv = "AIRNODE_AL6_PAUSED_CHILD_ZK"

// pausedChild is the process TestAL6_PausedProcessSaysSo stops: a
// provider registered in the ZooKeeper at addr with a 4 s session, its
// log lines as JSON on stdout, "READY" once registered; it closes the
// registry and exits when stdin closes.
func pausedChild(addr string) int {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	r, err := zookeeper.Builder{Logger: log}.Build(spi.MustParse("zookeeper://" + addr + "?root=al6paused&session.timeout=4s"))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer r.Close()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Register(c, provider(1, "")); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("READY")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// TestAL6_PausedProcessSaysSo (tester80 #6): a provider process frozen
// for longer than its session's receive timeout (SIGSTOP, then SIGCONT)
// loses its connection, and said only "connection lost ...
// last_heard_ago 27s", as if ZooKeeper had gone silent. Its line now
// says that this process did not run, and for about how long. A real
// child process (this test binary, as pausedChild) stopped for 6 s, on a
// real ZooKeeper.
func TestAL6_PausedProcessSaysSo(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), pausedChildEnv+"="+server.Addr(), testbin.NoExitSleep())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(d time.Duration, want string) string {
		t.Helper()
		deadline := time.After(d)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the child exited before a line with %q", want)
				}
				if strings.Contains(l, want) {
					return l
				}
				t.Logf("child: %s", l)
			case <-deadline:
				t.Fatalf("no child line with %q within %v", want, d)
			}
		}
	}
	next(15*time.Second, "READY")
	time.Sleep(2 * time.Second) // pings answered: ZooKeeper was heard just now
	const pause = 6 * time.Second
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(pause)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	line := next(10*time.Second, msgLost)
	t.Logf("child: %s", line)
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	msg, _ := rec["msg"].(string)
	if !strings.HasPrefix(msg, msgLost+": this process did not run for at least ") || !strings.Contains(msg, "(stopped or starved)") {
		t.Errorf("connection lost line %q does not say the process did not run", msg)
	}
	ns, _ := rec["paused_for"].(float64) // slog's JSON writes a duration in ns
	if paused := time.Duration(ns); paused < pause-1500*time.Millisecond || paused > pause+3*time.Second {
		t.Errorf("paused_for=%v; want about %v (the SIGSTOP)", rec["paused_for"], pause)
	}
}
