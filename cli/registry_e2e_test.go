package cli

// End-to-end tests of issue 5's acceptance list: real `airnode serve`,
// `airnode call` and `airnode registry` processes, a real ZooKeeper
// (internal/zktest), and in-process consumers where a tight call loop is
// needed. Every test has its own file-registry directory or ZooKeeper
// server, so tests do not see each other or the developer's registry.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testaddr"
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// noAirnodeEnv is the extra environment of a test that wants none of a
// developer's AIRNODE_* settings: none, since the processes the tests
// start never get the test's own AIRNODE_* variables (hostEnviron). It
// was AIRNODE_REGISTRY= and AIRNODE_LISTEN=, which the binary now warns
// of as set but empty (config.EnvWarnings).
var noAirnodeEnv []string

// hostEnviron is the environment the processes the tests start inherit:
// the test's own (os.Environ()) without its AIRNODE_* variables, so that
// a developer's settings never reach them and each test gives those it
// means.
func hostEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AIRNODE_") {
			out = append(out, kv)
		}
	}
	return out
}

// serveWith starts `airnode serve --listen listen --registry reg args...`
// (any registry URL, unlike serve's file registry) and waits for its
// "serving" line. The process is killed at cleanup.
func serveWith(t *testing.T, listen, reg string, args ...string) *provider {
	t.Helper()
	return startServe(t, listen, reg, noAirnodeEnv, t.TempDir(), args...)
}

// pid returns the process id as Info prints it.
func (p *provider) pid() string { return fmt.Sprint(p.cmd.Process.Pid) }

// kill9 sends SIGKILL and waits for the process to be gone; it returns the
// time the signal was sent.
func (p *provider) kill9(t *testing.T) time.Time {
	t.Helper()
	at := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 5*time.Second)
	return at
}

// stampedLine is one output line and when the test read it.
type stampedLine struct {
	at   time.Time
	text string
}

// watchProc is a running `airnode registry watch SERVICE`.
type watchProc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  []stampedLine
	errb logbuf.Buffer
	done chan struct{}
}

// startWatch starts `airnode registry watch --registry reg service
// [flags]` and records its stdout lines; the process is killed at cleanup.
func startWatch(t *testing.T, reg, service string, flags ...string) *watchProc {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"registry", "watch", "--registry", reg, service}, flags...)...)
	cmd.Env = append(hostEnviron(), noAirnodeEnv...)
	cmd.Dir = t.TempDir()
	w := &watchProc{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &w.errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			w.mu.Lock()
			w.out = append(w.out, stampedLine{time.Now(), sc.Text()})
			w.mu.Unlock()
		}
		_ = cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-w.done
		if t.Failed() {
			t.Logf("registry watch output:\n%s\nstderr:\n%s", w.text(), w.errb.String())
		}
	})
	return w
}

func (w *watchProc) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, l := range w.out {
		fmt.Fprintf(&b, "[%s] %s\n", l.at.Format("15:04:05.000"), l.text)
	}
	return b.String()
}

// has reports whether a line read so far matches re.
func (w *watchProc) has(re *regexp.Regexp) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.out {
		if re.MatchString(l.text) {
			return true
		}
	}
	return false
}

// waitLine waits up to within for a line read after since that matches re
// and returns when it was read.
func (w *watchProc) waitLine(t *testing.T, re *regexp.Regexp, since time.Time, within time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		w.mu.Lock()
		for _, l := range w.out {
			if !l.at.Before(since) && re.MatchString(l.text) {
				w.mu.Unlock()
				return l.at
			}
		}
		w.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("registry watch: no line matching %q within %v", re, within)
		}
		select {
		case <-w.done:
			t.Fatalf("registry watch exited; stderr:\n%s", w.errb.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// plus and minus match the watch lines for a provider at addr.
func plus(addr string) *regexp.Regexp {
	return regexp.MustCompile(`^\S+ \+ airnode://` + regexp.QuoteMeta(addr) + `/demo\.Echo\?`)
}

func minus(addr string) *regexp.Regexp {
	return regexp.MustCompile(`^\S+ - airnode://` + regexp.QuoteMeta(addr) + `/demo\.Echo\?`)
}

// infoCall is one call of a consumer loop.
type infoCall struct {
	at  time.Time // when it returned
	pid string    // Info's pid; "" on failure
	err error
}

// consumerLoop is an in-process consumer of demo.Echo through a registry
// whose consumerWorkers goroutines call Info back to back (with a short
// pause) and record every result. With idempotent, Info is declared idempotent, so that failover
// also retries a call that timed out on a hung provider (SERVER_TIMEOUT).
type consumerLoop struct {
	ref   *kernel.Reference
	mu    sync.Mutex
	calls []infoCall
	stop  chan struct{}
	done  chan struct{}
}

// consumerWorkers is how many goroutines of a consumer loop call at once,
// so that some calls are in flight when a provider dies.
const consumerWorkers = 4

// startConsumer refers to demo.Echo through the registry reg in a node of
// its own and starts the loop; both stop at cleanup.
func startConsumer(t *testing.T, reg string, idempotent bool) *consumerLoop {
	t.Helper()
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = n.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	u := spi.MustParse("airnode:///demo.Echo")
	if idempotent {
		u = u.With("idempotent", "true")
	}
	ref, err := n.Refer(ctx, u, spi.MustParse(reg))
	if err != nil {
		t.Fatal(err)
	}
	c := &consumerLoop{ref: ref, stop: make(chan struct{}), done: make(chan struct{})}
	var wg sync.WaitGroup
	for range consumerWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-c.stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				var info map[string]any
				err := ref.Call(context.Background(), "Info", nil, &info)
				r := infoCall{at: time.Now(), err: err}
				if err == nil {
					r.pid = fmt.Sprint(info["pid"])
				}
				c.mu.Lock()
				c.calls = append(c.calls, r)
				c.mu.Unlock()
			}
		}()
	}
	go func() { wg.Wait(); close(c.done) }()
	t.Cleanup(c.halt) // before the node closes
	return c
}

// halt stops the loop; idempotent.
func (c *consumerLoop) halt() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.done
}

// between returns the calls that returned in [from, to).
func (c *consumerLoop) between(from, to time.Time) []infoCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []infoCall
	for _, r := range c.calls {
		if !r.at.Before(from) && r.at.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// waitPid waits up to within for a call after since answered by pid and
// returns when it returned.
func (c *consumerLoop) waitPid(t *testing.T, pid string, since time.Time, within time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		for _, r := range c.between(since, time.Now().Add(time.Hour)) {
			if r.pid == pid {
				return r.at
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer: no call answered by pid %s within %v; picks since then: %v",
				pid, within, pidCounts(c.between(since, time.Now().Add(time.Hour))))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkNoFailures fails the test for every failed call in [from, to).
func (c *consumerLoop) checkNoFailures(t *testing.T, from, to time.Time) {
	t.Helper()
	calls := c.between(from, to)
	var failed []string
	for _, r := range calls {
		if r.err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", r.at.Format("15:04:05.000"), r.err))
		}
	}
	if len(failed) > 0 {
		t.Errorf("%d of %d consumer calls failed:\n%s", len(failed), len(calls), strings.Join(failed, "\n"))
	}
}

// pidCounts counts the successful calls per answering pid.
func pidCounts(calls []infoCall) map[string]int {
	m := map[string]int{}
	for _, r := range calls {
		if r.err == nil {
			m[r.pid]++
		}
	}
	return m
}

// startZooKeeper starts a real ZooKeeper for one test; a missing package is
// a failure with the install hint.
func startZooKeeper(t *testing.T) *zktest.Server {
	t.Helper()
	s, err := zktest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// zkProviders lists the decoded names under /airnode/demo.Echo/providers
// with a raw ZooKeeper client (nil when the node does not exist). A
// connection error (the client reconnecting after a restart) is returned.
func zkProviders(t *testing.T, c *zk.Conn) ([]string, error) {
	t.Helper()
	children, _, err := c.Children("/airnode/demo.Echo/providers")
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(children))
	for _, ch := range children {
		s, err := url.QueryUnescape(ch)
		if err != nil {
			t.Fatalf("node name %q does not decode: %v", ch, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// zkClient opens a raw ZooKeeper session to s, closed at cleanup.
func zkClient(t *testing.T, s *zktest.Server) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect([]string{s.Addr()}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(discardZK{}))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range events { // closed by Close
		}
	}()
	t.Cleanup(c.Close)
	return c
}

// discardZK silences the raw client's log.
type discardZK struct{}

func (discardZK) Printf(string, ...any) {}

// hasAddr reports whether one of the provider URLs is at addr.
func hasAddr(urls []string, addr string) bool {
	for _, u := range urls {
		if strings.HasPrefix(u, "airnode://"+addr+"/demo.Echo?") {
			return true
		}
	}
	return false
}

// waitZK polls the provider nodes until cond holds and returns when it did.
func waitZK(t *testing.T, c *zk.Conn, what string, within time.Duration, cond func([]string) bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		l, err := zkProviders(t, c)
		if err == nil && cond(l) {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("zookeeper: %s: not within %v; providers now (%v):\n%s", what, within, err, strings.Join(l, "\n"))
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// rounded rounds d to milliseconds for the logs.
func rounded(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// Issue 5: three providers found through the file registry; `airnode call
// demo.Echo Info` with no address reaches all three, both with --registry
// and with no registry flag (the default location under XDG_RUNTIME_DIR).
func TestRegistryE2E_CallReachesAllProviders(t *testing.T) {
	t.Parallel()
	runtime := t.TempDir()
	dir := filepath.Join(runtime, "airnode", "registry") // the file registry's default there
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for range 3 {
		want[serve(t, "127.0.0.1:0", dir).pid()] = true
	}
	env := append([]string{"XDG_RUNTIME_DIR=" + runtime}, noAirnodeEnv...)
	seen := map[string]int{}
	start := time.Now()
	for i := range 30 {
		args := []string{"demo.Echo", "Info"}
		if i%2 == 0 {
			args = append([]string{"--registry", "file://" + dir}, args...)
		}
		r := call(t, env, args...)
		var info struct {
			Pid    int `json:"pid"`
			Weight int `json:"weight"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &info) != nil {
			t.Fatalf("call %v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
		pid := fmt.Sprint(info.Pid)
		if !want[pid] {
			t.Fatalf("call %v answered by pid %s, not one of the providers %v", args, pid, want)
		}
		seen[pid]++
	}
	t.Logf("30 calls in %v: picks per provider pid %v", rounded(time.Since(start)), seen)
	if len(seen) != 3 {
		t.Fatalf("calls reached %d of 3 providers: %v", len(seen), seen)
	}
	// A service key with parameters, the default registry again. Bench
	// starts once one provider is connected and the others join after
	// their first connection: a run of 1 s (not a few hundred calls, over
	// in milliseconds) leaves a loaded machine time for that.
	r := benchJSON(t, env, "demo.Echo?loadbalance=roundrobin", "--duration", "1s", "-c", "3")
	t.Logf("bench 'demo.Echo?loadbalance=roundrobin': calls per provider %v", r.Providers)
	if len(r.Providers) != 3 || len(r.Errors) != 0 {
		t.Fatalf("bench: providers %v, errors %v; want 3 providers, no errors", r.Providers, r.Errors)
	}
	for addr, n := range r.Providers {
		if n < r.Calls/20 {
			t.Errorf("roundrobin gave %s %d of %d calls", addr, n, r.Calls)
		}
	}
}

// Issue 5: kill -9 one of three providers: within 2 s the file registry
// drops it (`airnode registry watch` prints "-") and a consumer of an
// idempotent method goes on without a failed call (a call in flight at the
// kill is retried elsewhere; a non-idempotent one would fail
// CHANNEL_INACTIVE with spi.ErrRequestSent rather than risk running twice);
// restarted on the same address it is listed and picked again within 2 s.
func TestRegistryE2E_FileKillAndRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := "file://" + dir
	// ps[1] is restarted on its address: held from start to end, so that no
	// connection of a test beside this one takes its port while it is down
	ps := []*provider{serve(t, "127.0.0.1:0", dir), serve(t, testaddr.Reserved(t), dir), serve(t, "127.0.0.1:0", dir)}
	w := startWatch(t, reg, "demo.Echo")
	w.waitLine(t, regexp.MustCompile(`demo\.Echo: 3 providers$`), time.Time{}, 10*time.Second)
	c := startConsumer(t, reg, true) // Info is read-only
	begin := time.Now()
	for _, p := range ps {
		c.waitPid(t, p.pid(), begin, 10*time.Second)
	}

	victim := ps[1]
	killed := victim.kill9(t)
	gone := w.waitLine(t, minus(victim.addr), killed, 5*time.Second)
	t.Logf("kill -9: registry watch shows it gone after %v", rounded(gone.Sub(killed)))
	if d := gone.Sub(killed); d > 2*time.Second {
		t.Errorf("killed provider left the registry after %v, want within 2s", d)
	}
	time.Sleep(2*time.Second - time.Since(killed)) // until killed + 2 s
	settled := time.Now()
	time.Sleep(500 * time.Millisecond)
	if picks := pidCounts(c.between(settled, time.Now())); picks[victim.pid()] > 0 || len(picks) != 2 {
		t.Errorf("picks 2 s after the kill: %v, want only the two live providers", picks)
	}
	// The dead provider's entry is still on disk, but its lock is free.
	if code, out, _ := airnode(t, nil, "registry", "ls", "--registry", reg); code != 0 ||
		!strings.Contains(out, "(2 providers)") || strings.Contains(out, victim.addr) {
		t.Errorf("registry ls after the kill: exit %d\n%s", code, out)
	}

	restarted := time.Now()
	back := serve(t, victim.addr, dir)
	ready := time.Now()
	listed := w.waitLine(t, plus(victim.addr), restarted, 5*time.Second)
	picked := c.waitPid(t, back.pid(), restarted, 5*time.Second)
	t.Logf("restart: serving %v after exec; listed %v and picked %v after its serving line",
		rounded(ready.Sub(restarted)), rounded(listed.Sub(ready)), rounded(picked.Sub(ready)))
	if d := picked.Sub(ready); d > 2*time.Second {
		t.Errorf("restarted provider picked %v after it was serving, want within 2s", d)
	}

	// Graceful shutdown: SIGTERM unregisters first and waits
	// --shutdown-wait, so that even a consumer whose calls are not
	// idempotent (no retry after a request was written) sees no failure.
	strict := startConsumer(t, reg, false)
	strictBegin := time.Now()
	leaving := ps[2]
	strict.waitPid(t, leaving.pid(), strictBegin, 10*time.Second)
	termed := time.Now() // before the signal: its effects cannot come earlier, however late this goroutine runs
	if err := leaving.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	unlisted := w.waitLine(t, minus(leaving.addr), termed, 5*time.Second)
	if code := leaving.wait(t, 15*time.Second); code != 0 {
		t.Errorf("serve exited %d after SIGTERM", code)
	}
	exited := time.Now()
	lastPick := "never"
	for _, r := range strict.between(termed, exited) {
		if r.pid == leaving.pid() {
			lastPick = rounded(r.at.Sub(termed)).String()
		}
	}
	t.Logf("SIGTERM: unlisted after %v, picked after SIGTERM: %s, exited after %v (shutdown.wait 2s)",
		rounded(unlisted.Sub(termed)), lastPick, rounded(exited.Sub(termed)))
	time.Sleep(200 * time.Millisecond)
	c.checkNoFailures(t, begin, time.Now())
	strict.checkNoFailures(t, strictBegin, time.Now())
}

// Issue 5: `airnode registry ls` shows each provider's weight, warm-up
// progress and uptime, read from real providers' registry entries.
func TestRegistryE2E_LsShowsWeightWarmupUptime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	warming := serve(t, "127.0.0.1:0", dir, "-p", "weight=50", "-p", "warmup=1m")
	plain := serve(t, "127.0.0.1:0", dir)
	warm := serve(t, "127.0.0.1:0", dir, "-p", "weight=200", "-p", "warmup=1s")
	time.Sleep(1100 * time.Millisecond) // warm's warm-up is over
	code, out, errOut := airnode(t, nil, "registry", "ls", "--registry", "file://"+dir)
	if code != 0 {
		t.Fatalf("registry ls: exit %d: %s", code, errOut)
	}
	t.Logf("airnode registry ls:\n%s", out)
	uptime := `(\d+s)`
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^demo\.Echo\s+\(3 providers\)$`),
		row("ADDRESS", "WEIGHT", "WARM-UP", "UPTIME", "PROTOCOL"),
		regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(warming.addr) + `\s+50\s+weight \d+ of 50 \(\d+%\), \d+s left\s+` + uptime + `\s+airnode$`),
		regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(plain.addr) + `\s+100\s+weight 1 of 100 \(1%\), 9m\d+s left\s+` + uptime + `\s+airnode$`),
		regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(warm.addr) + `\s+200\s+done\s+` + uptime + `\s+airnode$`),
	} {
		m := re.FindStringSubmatch(out)
		if m == nil {
			t.Errorf("registry ls lacks a line matching %q", re)
			continue
		}
		if len(m) == 2 {
			if up, err := time.ParseDuration(m[1]); err != nil || up > 30*time.Second {
				t.Errorf("uptime %q of a provider started seconds ago", m[1])
			}
		}
	}
}

// Issue 5 with ZooKeeper: providers' ephemeral nodes appear under
// /airnode/demo.Echo/providers/; `airnode registry watch` and an in-process
// consumer see each change; a kill -9'd provider's node is gone after the
// session timeout (not before: nobody unregistered it); a provider paused
// for longer than its session timeout loses its node and re-creates it by
// itself when it resumes, and a consumer paused with it re-lists in its new
// session and sees the provider that started meanwhile (scenario R2).
func TestRegistryE2E_ZooKeeperKillAndR2Expiry(t *testing.T) {
	t.Parallel()
	const session = 4 * time.Second
	zks := startZooKeeper(t)
	reg := zks.URL("session.timeout=4s")
	raw := zkClient(t, zks)
	w := startWatch(t, reg, "demo.Echo")
	w.waitLine(t, regexp.MustCompile(`demo\.Echo: 0 providers$`), time.Time{}, 10*time.Second)
	pausedWatch := startWatch(t, reg, "demo.Echo") // a consumer whose session will expire
	pausedWatch.waitLine(t, regexp.MustCompile(`demo\.Echo: 0 providers$`), time.Time{}, 10*time.Second)

	var ps []*provider
	for range 3 {
		p := serveWith(t, "127.0.0.1:0", reg)
		ps = append(ps, p)
		w.waitLine(t, plus(p.addr), time.Time{}, 5*time.Second)
	}
	nodes, err := zkProviders(t, raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 {
		t.Fatalf("%d provider nodes, want 3:\n%s", len(nodes), strings.Join(nodes, "\n"))
	}
	for _, p := range ps {
		if !hasAddr(nodes, p.addr) {
			t.Fatalf("no node for %s under /airnode/demo.Echo/providers:\n%s", p.addr, strings.Join(nodes, "\n"))
		}
	}
	code, out, errOut := airnode(t, nil, "registry", "ls", "--registry", reg)
	if code != 0 || !regexp.MustCompile(`(?m)^demo\.Echo\s+\(3 providers\)$`).MatchString(out) {
		t.Fatalf("registry ls: exit %d\n%s%s", code, out, errOut)
	}
	for _, p := range ps {
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(p.addr) + `\s+100\s+weight 1 of 100 \(1%\), (9m\d+s|10m0s) left\s+\d+s\s+airnode$`).MatchString(out) {
			t.Errorf("registry ls lacks a row for %s:\n%s", p.addr, out)
		}
	}
	c := startConsumer(t, reg, true)
	begin := time.Now()
	for _, p := range ps {
		c.waitPid(t, p.pid(), begin, 10*time.Second)
	}

	// kill -9: the node stays until the session expires.
	victim := ps[0]
	killed := victim.kill9(t)
	gone := waitZK(t, raw, "killed provider's node deleted", session+5*time.Second,
		func(l []string) bool { return !hasAddr(l, victim.addr) })
	seen := w.waitLine(t, minus(victim.addr), killed, 5*time.Second)
	t.Logf("kill -9: node deleted %v after the kill (session timeout %v); watch saw it %v after the kill",
		rounded(gone.Sub(killed)), session, rounded(seen.Sub(killed)))
	// The server expires a session timeout after the last packet it got,
	// and the client pings every third of the timeout (go-zookeeper): the
	// node goes between 2/3 of the timeout and the timeout after the kill.
	if d := gone.Sub(killed); d < session/2 {
		t.Errorf("node deleted %v after kill -9, long before the %v session timeout", d, session)
	}

	// A pause longer than the session timeout: the server expires the
	// session and deletes the node; after SIGCONT the provider's registry
	// opens a new session and re-creates it.
	// A consumer (a second watch) paused with it loses its session too,
	// and misses a provider that starts meanwhile.
	paused := ps[1]
	pausedWatch.waitLine(t, regexp.MustCompile(`demo\.Echo: 2 providers$`), killed, 5*time.Second)
	for _, pid := range []int{paused.cmd.Process.Pid, pausedWatch.cmd.Process.Pid} {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	}
	stopped := time.Now()
	newcomer := serveWith(t, "127.0.0.1:0", reg)
	expired := waitZK(t, raw, "paused provider's node deleted", session+5*time.Second,
		func(l []string) bool { return !hasAddr(l, paused.addr) })
	w.waitLine(t, minus(paused.addr), stopped, 5*time.Second)
	time.Sleep(500 * time.Millisecond)
	for _, pid := range []int{paused.cmd.Process.Pid, pausedWatch.cmd.Process.Pid} {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	resumed := time.Now()
	recreated := waitZK(t, raw, "paused provider's node re-created", 10*time.Second,
		func(l []string) bool { return hasAddr(l, paused.addr) })
	w.waitLine(t, plus(paused.addr), resumed, 5*time.Second)
	picked := c.waitPid(t, paused.pid(), resumed, 10*time.Second)
	t.Logf("SIGSTOP: node deleted %v after the pause; after SIGCONT re-created in %v, picked in %v",
		rounded(expired.Sub(stopped)), rounded(recreated.Sub(resumed)), rounded(picked.Sub(resumed)))
	if !strings.Contains(paused.logText(), "new session; re-creating entries") {
		t.Errorf("paused provider's log does not mention its new session")
	}
	// After SIGCONT the zk client first reconnects with the old session,
	// learns it expired, then opens a new one (about 1 s of reconnect delay
	// each); the bound, 2 s, counts from the new session, which is
	// not visible from outside, so the bound here is generous.
	if d := recreated.Sub(resumed); d > 8*time.Second {
		t.Errorf("node re-created %v after SIGCONT, want within 8s", d)
	}
	// The paused consumer re-lists in its new session: it sees the
	// newcomer and ends with the three live providers.
	relisted := pausedWatch.waitLine(t, plus(newcomer.addr), resumed, 10*time.Second)
	pausedWatch.waitLine(t, regexp.MustCompile(`demo\.Echo: 3 providers$`), resumed, 10*time.Second)
	t.Logf("paused consumer: re-listed %v after SIGCONT", rounded(relisted.Sub(resumed)))
	if pausedWatch.has(minus(ps[2].addr)) || pausedWatch.has(minus(newcomer.addr)) {
		t.Errorf("paused consumer dropped a live provider")
	}
	c.checkNoFailures(t, begin, time.Now())
}

// Issue 5 and scenario R1: ZooKeeper is down for outage (longer than the
// session timeout) while a consumer calls in a loop: no call fails and the
// watch never loses a live provider; a consumer process with file.cache
// starts and calls during the outage; a provider started during the outage
// serves (after connect.timeout) and is registered after the restart, when the consumer
// picks it (a full re-list); a provider stopped during the outage exits and
// is gone once its session expires; later changes still reach the watches
// (re-armed). ZooKeeper restores sessions from its data directory and
// clients reconnect within about a second of the restart, so the providers
// that stayed up keep their sessions (logged); session expiry itself is the
// SIGSTOP case of TestRegistryE2E_ZooKeeperKillAndR2Expiry.
func TestRegistryE2E_R1_ZooKeeperOutage(t *testing.T) {
	t.Parallel()
	const outage = 20 * time.Second
	zks := startZooKeeper(t)
	reg := zks.URL("session.timeout=4s")
	raw := zkClient(t, zks)
	a := serveWith(t, "127.0.0.1:0", reg)
	b := serveWith(t, "127.0.0.1:0", reg, "--shutdown-wait", "500ms")
	quitter := serveWith(t, "127.0.0.1:0", reg, "--shutdown-wait", "500ms")
	w := startWatch(t, reg, "demo.Echo")
	w.waitLine(t, regexp.MustCompile(`demo\.Echo: 3 providers$`), time.Time{}, 10*time.Second)
	c := startConsumer(t, reg, true)
	begin := time.Now()
	c.waitPid(t, a.pid(), begin, 10*time.Second)
	c.waitPid(t, b.pid(), begin, 10*time.Second)
	// A one-shot consumer with file.cache, run once while ZooKeeper is up.
	cached := reg + "&connect.timeout=1s&file.cache=" + url.QueryEscape(filepath.Join(t.TempDir(), "cache.json"))
	if r := call(t, noAirnodeEnv, "--registry", cached, "demo.Echo", "Info"); r.code != 0 {
		t.Fatalf("call with file.cache: exit %d: %s", r.code, r.stderr)
	}

	zks.Stop()
	down := time.Now()
	t.Cleanup(func() { _ = zks.Restart() })
	time.Sleep(2 * time.Second)
	late := serveWith(t, "127.0.0.1:0", reg+"&check=false") // Register queues its entry (check=true, the default, fails it)
	t.Logf("provider started during the outage serving %v after ZooKeeper stopped", rounded(time.Since(down)))
	// The cache lets a new consumer process start and call while
	// ZooKeeper is down.
	r := call(t, noAirnodeEnv, "--registry", cached, "demo.Echo", "Info")
	answered := false
	for _, p := range []*provider{a, b, quitter} {
		answered = answered || strings.Contains(r.stdout, `"pid":`+p.pid()+",")
	}
	if r.code != 0 || !answered {
		t.Errorf("call with file.cache during the outage: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("call with file.cache during the outage: exit %d in %v", r.code, rounded(r.elapsed))
	// A provider shut down during the outage exits (its unregister is
	// queued); its node goes when its session expires after the restart.
	if err := quitter.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	termed := time.Now()
	if code := quitter.wait(t, 15*time.Second); code != 0 {
		t.Errorf("serve exited %d after SIGTERM during the outage", code)
	}
	t.Logf("SIGTERM during the outage: serve exited in %v", rounded(time.Since(termed)))
	time.Sleep(outage - time.Since(down))
	if picks := pidCounts(c.between(down, time.Now())); picks[a.pid()] == 0 || picks[b.pid()] == 0 {
		t.Errorf("picks during the outage %v, want both providers", picks)
	}
	// Clients may reconnect while Restart still polls the new server, so
	// times count from the restart's beginning.
	restart := time.Now()
	if err := zks.Restart(); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	// The test's own client may have dialled while the new server was
	// starting: go-zookeeper then waits up to ten receive timeouts (67 s
	// here) for a handshake answer (the registry bounds it, dial.go); a
	// fresh client connects to the serving server.
	raw.Close()
	raw = zkClient(t, zks)
	all := waitZK(t, raw, "the new provider's node after the restart", 15*time.Second, func(l []string) bool {
		return hasAddr(l, a.addr) && hasAddr(l, b.addr) && hasAddr(l, late.addr)
	})
	picked := c.waitPid(t, late.pid(), restart, 15*time.Second)
	listed := w.waitLine(t, plus(late.addr), restart, 15*time.Second)
	gone := waitZK(t, raw, "the stopped provider's node deleted", 15*time.Second, func(l []string) bool {
		return len(l) == 3 && !hasAddr(l, quitter.addr)
	})
	unlisted := w.waitLine(t, minus(quitter.addr), restart, 5*time.Second)
	t.Logf("ZooKeeper down %v, restarted (serving) in %v; from the restart: new provider's node in %v, watch listed it in %v, consumer picked it in %v; provider stopped during the outage gone in %v, unlisted in %v",
		rounded(restart.Sub(down)), rounded(up.Sub(restart)), rounded(all.Sub(restart)), rounded(listed.Sub(restart)), rounded(picked.Sub(restart)),
		rounded(gone.Sub(restart)), rounded(unlisted.Sub(restart)))
	for _, p := range []*provider{a, b} {
		if strings.Contains(p.logText(), "new session; re-creating entries") {
			t.Logf("provider %s: session expired during the outage; re-created its node", p.addr)
		} else {
			t.Logf("provider %s: kept its session across the restart", p.addr)
		}
	}

	// The watches are armed again: a graceful shutdown reaches both.
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	termed = time.Now()
	unlisted = w.waitLine(t, minus(b.addr), termed, 5*time.Second)
	if code := b.wait(t, 15*time.Second); code != 0 {
		t.Errorf("serve exited %d after SIGTERM", code)
	}
	t.Logf("SIGTERM after the restart: watch saw the provider leave in %v", rounded(unlisted.Sub(termed)))
	c.checkNoFailures(t, begin, time.Now())
	// The outage itself never removed a provider from the watch's view.
	for _, re := range []*regexp.Regexp{minus(a.addr), minus(late.addr), regexp.MustCompile(`demo\.Echo: [01] providers$`)} {
		if w.has(re) {
			t.Errorf("registry watch printed a line matching %q", re)
		}
	}
}
