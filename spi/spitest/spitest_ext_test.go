package spitest_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/cluster/forking"
	"github.com/airnode/airnode/extensions/filter/accesslog"
	"github.com/airnode/airnode/extensions/filter/activelimit"
	"github.com/airnode/airnode/extensions/filter/executelimit"
	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/extensions/filter/threadlimit"
	"github.com/airnode/airnode/extensions/filter/token"
	"github.com/airnode/airnode/extensions/heartbeat/dual"
	"github.com/airnode/airnode/extensions/heartbeat/idle"
	"github.com/airnode/airnode/extensions/heartbeat/none"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// childEnv marks a child process run by runChild: the TestChild* tests,
// which run a suite against a bad extension and so fail, run only there.
const childEnv = "SPITEST_CHILD"

// child skips t unless it runs in a child process of runChild.
func child(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs in a child process of a test that expects it to fail")
	}
}

// runChild runs the test binary's test name in a child process and returns
// its output; it fails t unless the child failed (exit status 1).
func runChild(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("child %s: %v, want a test failure (exit status 1); output:\n%s", name, err, out)
	}
	return string(out)
}

// wantLines fails t unless out contains every one of want.
func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("child output lacks %q; output:\n%s", w, out)
		}
	}
}

// --- cluster ---------------------------------------------------------------

// broadcastBuilder is Dubbo's BroadcastCluster (a user's, tester19 finding
// 4): every provider with a positive weight is called at once; the first
// failure, else the last result, is returned.
type broadcastBuilder struct{}

func (broadcastBuilder) Name() string                       { return "broadcast" }
func (broadcastBuilder) Build(spi.URL) (spi.Cluster, error) { return broadcast{}, nil }

type broadcast struct{}

func (broadcast) Invoke(ctx context.Context, inv *spi.Invocation, dir spi.Directory, _ spi.LoadBalance) spi.Result {
	var list []spi.Invoker
	for _, x := range dir.List(inv) {
		if w, _ := x.URL().Param("weight"); w != "0" {
			list = append(list, x)
		}
	}
	if len(list) == 0 {
		return spi.Result{Err: spi.Errorf(spi.StatusServiceNotFound, "broadcast: no provider of %s in %s", inv.Service, dir.Registry())}
	}
	res := make([]spi.Result, len(list))
	var wg sync.WaitGroup
	for k, x := range list {
		wg.Go(func() {
			c := *inv
			c.Attachments = make(map[string]string, len(inv.Attachments))
			for a, b := range inv.Attachments {
				c.Attachments[a] = b
			}
			res[k] = x.Invoke(ctx, &c)
		})
	}
	wg.Wait()
	for _, r := range res {
		if r.Err != nil {
			return r
		}
	}
	return res[len(res)-1]
}

// retryingBuilder retries a SERVICE_ERROR on the same provider (the user's
// bad cluster).
type retryingBuilder struct{}

func (retryingBuilder) Name() string                       { return "retrying" }
func (retryingBuilder) Build(spi.URL) (spi.Cluster, error) { return retrying{}, nil }

type retrying struct{}

func (retrying) Invoke(ctx context.Context, inv *spi.Invocation, dir spi.Directory, _ spi.LoadBalance) spi.Result {
	l := dir.List(inv)
	if len(l) == 0 {
		return spi.Result{Err: spi.Errorf(spi.StatusServiceNotFound, "retrying: no provider of %s in %s", inv.Service, dir.Registry())}
	}
	r := l[0].Invoke(ctx, inv)
	if r.Err != nil {
		r = l[0].Invoke(ctx, inv)
	}
	return r
}

func TestClusterBroadcast(t *testing.T) {
	spitest.TestCluster(t, broadcastBuilder{}, spitest.ClusterOptions{Broadcast: true})
}

func TestClusterForkingThree(t *testing.T) {
	spitest.TestCluster(t, forking.Builder{}, spitest.ClusterOptions{Forks: 3})
}

func TestChildClusterBroadcastUndeclared(t *testing.T) {
	child(t)
	spitest.TestCluster(t, broadcastBuilder{})
}

func TestChildClusterRetrying(t *testing.T) {
	child(t)
	spitest.TestCluster(t, retryingBuilder{})
}

// A broadcast cluster checked as a one-call cluster fails and the message
// points at ClusterOptions; a cluster that retries a SERVICE_ERROR fails
// with and without Broadcast's leniency.
func TestClusterFailures(t *testing.T) {
	out := runChild(t, "TestChildClusterBroadcastUndeclared")
	wantLines(t, out, "--- FAIL: TestChildClusterBroadcastUndeclared/ServiceErrorNotRetried",
		"SERVICE_ERROR reached providers 3 times", "ClusterOptions")
	out = runChild(t, "TestChildClusterRetrying")
	wantLines(t, out, "--- FAIL: TestChildClusterRetrying/ServiceErrorNotRetried",
		"SERVICE_ERROR reached providers 2 times (127.0.0.1:1: 2, 127.0.0.1:2: 0, 127.0.0.1:3: 0); want 1")
}

// --- load balancer -------------------------------------------------------------

// oobBuilder's balancer indexes past the end of the list (the user's bad
// balancer).
type oobBuilder struct{}

func (oobBuilder) Name() string                           { return "oob" }
func (oobBuilder) Build(spi.URL) (spi.LoadBalance, error) { return oob{}, nil }

type oob struct{}

func (oob) Select(l []spi.Invoker, _ *spi.Invocation) spi.Invoker { return l[len(l)] }

func TestChildLoadBalancePanics(t *testing.T) {
	child(t)
	spitest.TestLoadBalance(t, oobBuilder{})
	t.Log("spitest: the binary survived the panics")
}

// A balancer that panics fails each subtest with the panic and its stack,
// and the test binary goes on.
func TestLoadBalancePanicFailsSubtest(t *testing.T) {
	out := runChild(t, "TestChildLoadBalancePanics")
	wantLines(t, out,
		"--- FAIL: TestChildLoadBalancePanics/NeverNil",
		"--- FAIL: TestChildLoadBalancePanics/Concurrent",
		"load balancer Select panicked: runtime error: index out of range [1] with length 1",
		"spitest_test.oob.Select(", // the stack
		"spitest: the binary survived the panics")
	if strings.Contains(out, "[recovered, repanicked]") {
		t.Errorf("the panic reached the testing package; output:\n%s", out)
	}
}

// --- transport -----------------------------------------------------------------

// unixBuilder is a transport over unix sockets in dir (the user's "unix"
// transport, tester19 finding 4): "host:port" maps to the socket dir/sock-port;
// Listen on port 0 picks the next free number from 40000. With unixAddr
// the listener reports the socket's *net.UnixAddr and Dial takes a path;
// otherwise it reports the host:port it listens on, as the kernel needs.
type unixBuilder struct {
	dir      string
	unixAddr bool
}

func (unixBuilder) Name() string { return "unix" }
func (b unixBuilder) Build(spi.URL) (spi.Transport, error) {
	return &unixTransport{dir: b.dir, unixAddr: b.unixAddr}, nil
}

type unixTransport struct {
	dir      string
	unixAddr bool
	next     atomic.Int64
}

// path maps addr (host:port, or a socket path) to the socket's path.
func (u *unixTransport) path(addr string) (string, error) {
	if strings.HasPrefix(addr, "/") {
		return addr, nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	return filepath.Join(u.dir, "sock-"+port), nil
}

func (u *unixTransport) Listen(addr string) (spi.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if port == "0" {
		port = strconv.FormatInt(40000+u.next.Add(1), 10)
	}
	hp := net.JoinHostPort(host, port)
	p, _ := u.path(hp)
	l, err := net.Listen("unix", p)
	if err != nil {
		return nil, err
	}
	return &unixListener{l: l, addr: hostPort(hp), unixAddr: u.unixAddr}, nil
}

func (u *unixTransport) Dial(ctx context.Context, addr string) (spi.Session, error) {
	p, err := u.path(addr)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", p)
	if err != nil {
		return nil, err
	}
	return newOneStream(c, false), nil
}

// hostPort is a net.Addr of network "unix" written host:port.
type hostPort string

func (hostPort) Network() string  { return "unix" }
func (a hostPort) String() string { return string(a) }

type unixListener struct {
	l        net.Listener
	addr     hostPort
	unixAddr bool
}

func (l *unixListener) Accept() (spi.Session, error) {
	c, err := l.l.Accept()
	if err != nil {
		return nil, err
	}
	return newOneStream(c, true), nil
}

func (l *unixListener) Addr() net.Addr {
	if l.unixAddr {
		return l.l.Addr()
	}
	return l.addr
}

func (l *unixListener) Close() error {
	if err := l.l.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// oneStream is a session that is not multiplexed, over one connection.
type oneStream struct {
	c        net.Conn
	provider bool
	mu       sync.Mutex
	taken    bool
	done     chan struct{}
	once     sync.Once
}

func newOneStream(c net.Conn, provider bool) *oneStream {
	return &oneStream{c: c, provider: provider, done: make(chan struct{})}
}

func (s *oneStream) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return false
	default:
	}
	if s.taken {
		return false
	}
	s.taken = true
	return true
}

func (s *oneStream) Open() (io.ReadWriteCloser, error) {
	if !s.take() {
		select {
		case <-s.done:
			return nil, net.ErrClosed
		default:
			return nil, spi.ErrNotMultiplexed
		}
	}
	return (*osStream)(s), nil
}

func (s *oneStream) Accept() (io.ReadWriteCloser, error) {
	if s.provider && s.take() {
		return (*osStream)(s), nil
	}
	<-s.done
	return nil, net.ErrClosed
}

func (s *oneStream) Multiplexed() bool     { return false }
func (s *oneStream) LocalAddr() net.Addr   { return s.c.LocalAddr() }
func (s *oneStream) RemoteAddr() net.Addr  { return s.c.RemoteAddr() }
func (s *oneStream) Done() <-chan struct{} { return s.done }

func (s *oneStream) Close() error {
	s.once.Do(func() {
		s.c.Close()
		close(s.done)
	})
	return nil
}

type osStream oneStream

func (o *osStream) Read(p []byte) (int, error) {
	n, err := o.c.Read(p)
	if err != nil {
		(*oneStream)(o).Close()
	}
	return n, err
}

func (o *osStream) Write(p []byte) (int, error) {
	n, err := o.c.Write(p)
	if err != nil {
		(*oneStream)(o).Close()
	}
	return n, err
}

func (o *osStream) Close() error { return (*oneStream)(o).Close() }

// A transport over unix sockets that reports host:port passes; the raw TCP
// subtests are skipped for it.
func TestTransportUnix(t *testing.T) {
	spitest.TestTransport(t, unixBuilder{dir: t.TempDir()})
}

func TestChildTransportUnixAddr(t *testing.T) {
	child(t)
	spitest.TestTransport(t, unixBuilder{dir: t.TempDir(), unixAddr: true})
}

// A transport whose listener reports a *net.UnixAddr fails ListenAddr,
// saying that the kernel needs host:port, and only that.
func TestTransportUnixAddrFailsListenAddr(t *testing.T) {
	out := runChild(t, "TestChildTransportUnixAddr")
	wantLines(t, out,
		"--- FAIL: TestChildTransportUnixAddr/ListenAddr",
		"Addr() = *net.UnixAddr",
		"the kernel publishes the provider at the port of Addr().String()",
		"--- PASS: TestChildTransportUnixAddr/Echo",
		"--- PASS: TestChildTransportUnixAddr/LargeTransfer",
		"--- PASS: TestChildTransportUnixAddr/DialRefused",
		"--- SKIP: TestChildTransportUnixAddr/ProviderReset",
		`Addr().Network() is "unix", not tcp`)
	if n := strings.Count(out, "--- FAIL: TestChildTransportUnixAddr/"); n != 1 {
		t.Errorf("%d subtests failed, want 1 (ListenAddr); output:\n%s", n, out)
	}
}

// --- heartbeat -------------------------------------------------------------------

func TestHeartbeatIdle(t *testing.T) {
	spitest.TestHeartbeat(t, idle.Builder{}, spitest.HeartbeatOptions{
		Bad: []map[string]string{{"heartbeat.interval": "1ms"}, {"heartbeat.retries": "0"}},
	})
}

func TestHeartbeatDual(t *testing.T) {
	spitest.TestHeartbeat(t, dual.Builder{}, spitest.HeartbeatOptions{
		Bad: []map[string]string{{"heartbeat.interval": "1ms"}, {"heartbeat.timeout": "60ms"}},
	})
}

func TestHeartbeatNone(t *testing.T) { spitest.TestHeartbeat(t, none.Builder{}) }

// pingerBuilder is the user's "pinger" strategy (tester19): the consumer
// pings every pinger.every and closes the channel after one failure.
type pingerBuilder struct{ unsafeStop bool }

func (pingerBuilder) Name() string { return "pinger" }
func (pingerBuilder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: "pinger.every", Type: spi.KeyTypeDuration, Default: "1s", Doc: "ping interval, 10ms..1h"}}
}

func (b pingerBuilder) Build(u spi.URL) (spi.Heartbeat, error) {
	d, err := u.Duration("pinger.every", time.Second)
	if err != nil {
		return nil, err
	}
	if d < 10*time.Millisecond || d > time.Hour {
		return nil, &spi.ParamError{Key: "pinger.every", Value: u.ParamOr("pinger.every", ""), Want: "10ms..1h"}
	}
	return pinger{d: d, unsafeStop: b.unsafeStop}, nil
}

type pinger struct {
	d          time.Duration
	unsafeStop bool // stop closes its channel again on a second call
}

func (p pinger) Watch(ch spi.Channel) func() {
	if ch.Side() != spi.Consumer {
		return func() {}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(p.d)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ch.Done():
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), p.d)
				err := ch.Ping(ctx)
				cancel()
				if err != nil {
					ch.Close("pinger: ping failed: " + err.Error())
					return
				}
			}
		}
	})
	if p.unsafeStop {
		return func() { close(stop); wg.Wait() }
	}
	var once sync.Once
	return func() { once.Do(func() { close(stop); wg.Wait() }) }
}

func TestHeartbeatPinger(t *testing.T) {
	spitest.TestHeartbeat(t, pingerBuilder{}, spitest.HeartbeatOptions{
		Params: map[string]string{"pinger.every": "50ms"},
		Bad:    []map[string]string{{"pinger.every": "1ms"}, {"pinger.every": "2h"}},
	})
}

func TestChildHeartbeatUnsafeStop(t *testing.T) {
	child(t)
	spitest.TestHeartbeat(t, pingerBuilder{unsafeStop: true}, spitest.HeartbeatOptions{
		Params: map[string]string{"pinger.every": "50ms"},
	})
}

// A strategy whose stop is not idempotent fails WatchThenStop with the
// panic of its second stop.
func TestHeartbeatUnsafeStopFails(t *testing.T) {
	out := runChild(t, "TestChildHeartbeatUnsafeStop")
	wantLines(t, out,
		"--- FAIL: TestChildHeartbeatUnsafeStop/consumer/WatchThenStop",
		"heartbeat stop panicked: close of closed channel",
		"--- PASS: TestChildHeartbeatUnsafeStop/consumer/StopWhilePingWaits",
		"--- PASS: TestChildHeartbeatUnsafeStop/BuildRefusesBadKeys")
}

// --- filter --------------------------------------------------------------------

func TestFilterAccessLog(t *testing.T) {
	b := &accesslog.Builder{}
	path := filepath.Join(t.TempDir(), "access.log")
	spitest.TestFilter(t, b, spitest.FilterOptions{Params: map[string]string{"accesslog": path, "accesslog.attachments": "trace"}})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "trace=T-1") {
		t.Fatalf("the access log has no line of the suite's call (attachments.trace=T-1):\n%.2000s", data)
	}
}

func TestFilterActiveLimit(t *testing.T) {
	spitest.TestFilter(t, activelimit.Builder{}, spitest.FilterOptions{Params: map[string]string{"actives": "100"}})
}

func TestFilterExecuteLimit(t *testing.T) {
	spitest.TestFilter(t, executelimit.Builder{}, spitest.FilterOptions{Params: map[string]string{"executes": "100"}})
}

func TestFilterThreadLimit(t *testing.T) {
	spitest.TestFilter(t, &threadlimit.Builder{}, spitest.FilterOptions{Params: map[string]string{"threads": "100"}})
}

func TestFilterToken(t *testing.T) { spitest.TestFilter(t, token.Builder{}) }

func TestFilterMetrics(t *testing.T) {
	spitest.TestFilter(t, metrics.NewBuilder(metrics.NewRegistry()))
}

// swallowBuilder's filter hides every failure of next (a bad filter).
type swallowBuilder struct{}

func (swallowBuilder) Name() string { return "swallow" }
func (swallowBuilder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer}}
}
func (swallowBuilder) Build(spi.URL) (spi.Filter, error) { return swallow{}, nil }

type swallow struct{}

func (swallow) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	r := next.Invoke(ctx, inv)
	if r.Err != nil {
		return spi.Result{Err: errors.New("swallow: the call failed")}
	}
	return r
}

func TestChildFilterSwallow(t *testing.T) {
	child(t)
	spitest.TestFilter(t, swallowBuilder{})
}

// A filter that replaces next's error fails ErrorPropagated and Concurrent.
func TestFilterSwallowFails(t *testing.T) {
	out := runChild(t, "TestChildFilterSwallow")
	wantLines(t, out,
		"--- PASS: TestChildFilterSwallow/consumer/PassThrough",
		"--- FAIL: TestChildFilterSwallow/consumer/ErrorPropagated",
		"Invoke returned swallow: the call failed",
		"--- FAIL: TestChildFilterSwallow/consumer/Concurrent")
}
