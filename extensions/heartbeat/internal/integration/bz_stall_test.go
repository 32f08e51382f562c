package integration

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel/exchange"
)

// The child consumer process: the test binary re-run with
// AIRNODE_HB_CONSUMER_CHILD set to a heartbeat URL query and
// AIRNODE_HB_CONSUMER_ADDR to the provider's address. It dials, prints
// "READY", then for each "call" line on stdin makes one call and prints
// "OK" or "ERR <error>"; it prints "CLOSED <reason>" when its channel
// closes. It exits when stdin closes.
const (
	consumerChildEnv     = "AIRNODE_HB_CONSUMER_CHILD"
	consumerChildAddrEnv = "AIRNODE_HB_CONSUMER_ADDR"
)

func runConsumerChild(query string) {
	t := &childTB{}
	var mu sync.Mutex
	say := func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(f+"\n", a...)
	}
	c := dial(t, os.Getenv(consumerChildAddrEnv), heartbeat(t, query), func(o *exchange.Options) {
		o.OnClose = func(_ *exchange.Channel, reason string) { say("CLOSED %s", reason) }
	})
	say("READY")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() != "call" {
			continue
		}
		if err := call(c.ch); err != nil {
			say("ERR %v", err)
		} else {
			say("OK")
		}
	}
	t.cleanup()
}

// consumerChild is a consumer process the test started.
type consumerChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // its stdout, line by line; closed when it ends
}

func startConsumerChild(t *testing.T, addr, query string) *consumerChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), consumerChildEnv+"="+query, consumerChildAddrEnv+"="+addr, testbin.NoExitSleep())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &consumerChild{cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	if l := c.next(t, 5*time.Second); l != "READY" {
		t.Fatalf("consumer child: %q, want READY", l)
	}
	return c
}

// next returns the child's next output line, failing t after max.
func (c *consumerChild) next(t *testing.T, max time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatal("consumer child ended")
		}
		return l
	case <-time.After(max):
		t.Fatalf("consumer child said nothing in %v", max)
		return ""
	}
}

// call makes the child call once and returns its answer line.
func (c *consumerChild) call(t *testing.T) string {
	t.Helper()
	if _, err := io.WriteString(c.stdin, "call\n"); err != nil {
		t.Fatal(err)
	}
	return c.next(t, 5*time.Second)
}

func (c *consumerChild) signal(t *testing.T, s syscall.Signal) {
	t.Helper()
	if err := c.cmd.Process.Signal(s); err != nil {
		t.Fatal(err)
	}
}

// fix-bz: a consumer process that did not run (SIGSTOP) for longer than
// its heartbeat allows the provider's silence keeps its healthy channel
// when it resumes: the check that runs late defers its verdict until the
// reader has read what the provider sent meanwhile (its pings for dual,
// the answer to the consumer's own ping for idle), and the consumer's
// calls after the resume succeed on the same channel. Before, the dual
// consumer's reconnect check, running first on resume, saw 1.5 s of
// silence against a 900 ms heartbeat.timeout and reconnected; the idle
// consumer, stopped while its ping's answer was on the way, counted the
// ping failed (its wait's deadline passed while it was stopped) and with
// heartbeat.retries 1 reconnected. The provider's own bound (10 s, no
// hello) keeps it from closing its end meanwhile.
func TestBZ_StalledConsumerKeepsHealthyChannel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, provider, consumer string
		atAnswer                 bool // stop the consumer right before the provider answers its ping
	}{
		{"dual", "heartbeat=dual&heartbeat.interval=200ms&heartbeat.timeout=10s",
			"heartbeat=dual&heartbeat.interval=300ms&heartbeat.timeout=900ms", false},
		{"idle", "heartbeat=idle&heartbeat.interval=1s&heartbeat.timeout=10s",
			"heartbeat=idle&heartbeat.interval=300ms&heartbeat.retries=1&heartbeat.ping.timeout=300ms", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startProvider(t, heartbeat(t, tc.provider))
			c := startConsumerChild(t, p.addr, tc.consumer)
			if l := c.call(t); l != "OK" {
				t.Fatalf("call before the stop: %q", l)
			}
			stopped := make(chan time.Time, 1)
			stop := func() {
				c.signal(t, syscall.SIGSTOP)
				stopped <- time.Now()
			}
			if tc.atAnswer {
				p.wrote.beforeAnswer.Store(&stop)
			} else {
				stop()
			}
			var at time.Time
			select {
			case at = <-stopped:
			case <-time.After(3 * time.Second):
				t.Fatal("the consumer sent no ping in 3 s")
			}
			time.Sleep(1500*time.Millisecond - time.Since(at))
			c.signal(t, syscall.SIGCONT)
			time.Sleep(400 * time.Millisecond) // its checks run, late, then after the reader caught up
			if l := c.call(t); l != "OK" {
				t.Fatalf("call after the resume: %q, want OK on the same channel", l)
			}
			select {
			case l := <-c.lines:
				t.Fatalf("consumer after the resume: %q", l)
			default:
			}
			select {
			case r := <-p.closed:
				t.Fatalf("provider closed its end: %s", r)
			default:
			}
		})
	}
}
