package kernel

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/testaddr"
	"github.com/airnode/airnode/spi"
)

// downZooKeeper returns the URL of a ZooKeeper registry on a loopback
// port the test holds and nothing listens on (connections refused), with
// connect.timeout 3s (past the tests' ctxs) so that the registry calls
// left running end soon after the test.
func downZooKeeper(t *testing.T) spi.URL {
	return spi.MustParse("zookeeper://" + testaddr.Reserved(t) + "?connect.timeout=3s&session.timeout=4s")
}

// tester89 #1: Refer and Export stopped by the caller's ctx deadline
// (ZooKeeper unreachable) returned "... Subscribe of t89.Down did not
// return within 295ms: ..." that errors.Is(err,
// context.DeadlineExceeded) did not match, as a call's does. Now it
// matches, and the error says the caller's deadline passed, keeping
// the registry's cause; a cancelled ctx matches context.Canceled.
func TestBo_ReferExportEndedByTheCallersContext(t *testing.T) {
	reg := downZooKeeper(t)
	n, _ := faultNode(t, testCatalogs(t), WithRegistry(reg))
	zk := reg.Address()

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := n.Refer(ctx, spi.MustParse("airnode:///bo.Down"), spi.URL{})
	cancel()
	t.Logf("Refer, 300ms ctx: %v", err)
	// ZooKeeper's Subscribe honours ctx: it may return its own error
	// (matching ctx's) just before the kernel stops waiting for it
	if left := (*LeftRunningError)(nil); errors.As(err, &left) {
		wantCallersDeadline(t, "Refer", err, `kernel: refer bo.Down: registry "zookeeper" Subscribe of bo.Down did not return before the caller's context deadline passed, after \d+ms: zookeeper registry: no session with `+regexp.QuoteMeta(zk))
	} else if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no session with "+zk) {
		t.Errorf("Refer: %v; want the registry's cause, matching context.DeadlineExceeded", err)
	}

	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	_, err = n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://"+testaddr.Reserved(t)+"/bo.Down"))
	cancel()
	t.Logf("Export, 1s ctx: %v", err)
	if left := (*LeftRunningError)(nil); errors.As(err, &left) {
		wantCallersDeadline(t, "Export", err, `kernel: export bo.Down: registry "zookeeper" Register of bo.Down did not return before the caller's context deadline passed, after (\d+ms|1s): zookeeper registry: no session with `+regexp.QuoteMeta(zk))
	} else if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no session with "+zk) {
		t.Errorf("Export: %v; want the registry's cause, matching context.DeadlineExceeded", err)
	}

	// cancelled: context.Canceled, not DeadlineExceeded
	for _, op := range []string{"Refer", "Export"} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		if op == "Refer" {
			_, err = n.Refer(ctx, spi.MustParse("airnode:///bo.Down"), spi.URL{})
		} else {
			_, err = n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://"+testaddr.Reserved(t)+"/bo.Down"))
		}
		cancel()
		t.Logf("%s, cancelled ctx: %v", op, err)
		if err == nil || !errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s with a cancelled ctx: %v; want it to match context.Canceled only", op, err)
		}
	}
}

// wantCallersDeadline fails unless err is a *LeftRunningError matching
// context.DeadlineExceeded, with no Bound, whose text matches re.
func wantCallersDeadline(t *testing.T, op string, err error, re string) {
	t.Helper()
	var left *LeftRunningError
	if !errors.As(err, &left) {
		t.Fatalf("%s: %v; want a *LeftRunningError", op, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || left.Ctx != context.DeadlineExceeded || left.Bound != 0 {
		t.Errorf("%s: errors.Is(err, context.DeadlineExceeded) = %v, Ctx %v, Bound %v; want true, DeadlineExceeded, 0",
			op, errors.Is(err, context.DeadlineExceeded), left.Ctx, left.Bound)
	}
	if !regexp.MustCompile("^" + re).MatchString(err.Error()) {
		t.Errorf("%s: error\n%s\ndoes not match\n%s", op, err, re)
	}
}

// A bound of the kernel's own (the provider's Register: WithRegisterTimeout)
// that ended the wait, the caller's ctx having none, is no caller's
// deadline: the error gives the bound and matches neither ctx error;
// with a caller's deadline before that bound, the caller's deadline.
func TestBo_RegisterBoundIsNotTheCallersDeadline(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	cat := testCatalogs(t)
	n, _ := faultNode(t, cat, withFaultRegistry(t, cat, &faultRegistry{name: "boreg", gate: gate, register: block}), WithRegisterTimeout(300*time.Millisecond))
	_, err := n.Export(context.Background(), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	var left *LeftRunningError
	if !errors.As(err, &left) || left.Bound != 300*time.Millisecond || left.Ctx != nil ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Fatalf("Export held by the 300ms register bound: %v; want a *LeftRunningError with Bound 300ms, matching no ctx error", err)
	}
	if !strings.HasPrefix(err.Error(), `kernel: export demo.Echo: registry "boreg" Register of demo.Echo did not return within 300ms; stopped waiting`) ||
		strings.Contains(err.Error(), "caller's context") {
		t.Errorf("error %q; want the bound, not the caller's context", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Other"))
	wantCallersDeadline(t, "Export", err, `kernel: export demo.Other: registry "boreg" Register of demo.Other did not return before the caller's context deadline passed, after \d+ms; stopped waiting`)
}

// A registry whose Subscribe ignores ctx: Refer's error at the caller's
// deadline matches it and says so; with a cause, the cause too.
func TestBo_ReferSubscribeLeftAtTheCallersDeadline(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	cat := testCatalogs(t)
	n, _ := faultNode(t, cat, withFaultRegistry(t, cat, &faultRegistry{name: "boreg", gate: gate, subscribe: block}))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := n.Refer(ctx, spi.MustParse("airnode:///demo.Echo"), spi.URL{})
	cancel()
	wantCallersDeadline(t, "Refer", err, `kernel: refer demo.Echo: registry "boreg" Subscribe of demo.Echo did not return before the caller's context deadline passed, after \d+ms; stopped waiting for it \(it may still finish later\)$`)

	mine := errors.New("bo: the operator's deadline")
	ctx, cancel = context.WithTimeoutCause(context.Background(), 200*time.Millisecond, mine)
	_, err = n.Refer(ctx, spi.MustParse("airnode:///demo.Other"), spi.URL{})
	cancel()
	if !errors.Is(err, mine) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "ms (cause: bo: the operator's deadline); stopped waiting") {
		t.Errorf("Refer with a deadline cause: %v; want it to match and name the cause", err)
	}
}

// tester89 #2: a Go Export that failed (its Register left running at the
// ctx's deadline) left its listener open until Shutdown, accepting
// connections and answering SERVICE_NOT_FOUND "(nothing is exported
// here)". It is closed now, the error says so, and a second Export on
// the address listens again; a listener shared with a service exported
// before stays.
func TestBo_FailedExportClosesTheListenerItOpened(t *testing.T) {
	zk := downZooKeeper(t)
	n, logs := faultNode(t, testCatalogs(t))
	addr := testaddr.Reserved(t)
	withReg := spi.MustParse("airnode://"+addr+"/bo.Ghost").With("registry", zk.String())

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_, err := n.Export(ctx, demo.New("p", 100), withReg)
	cancel()
	t.Logf("Export: %v", err)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Export with ZooKeeper down: %v; want it to fail at the ctx's deadline", err)
	}
	if !strings.HasSuffix(err.Error(), "; the listener it opened on "+addr+" is closed: nothing is exported on it") {
		t.Errorf("error %q does not say the listener on %s is closed", err, addr)
	}
	if c, derr := net.DialTimeout("tcp", addr, 2*time.Second); derr == nil {
		c.Close()
		t.Errorf("%s accepts a connection after the failed Export; want it refused", addr)
	}
	if len(logs.find("kernel: closed the listener of a failed export")) != 1 {
		t.Errorf("no Info record says the listener was closed")
	}

	// the same address again, without the registry: it listens and serves
	e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://"+addr+"/bo.Ghost"))
	if err != nil {
		t.Fatalf("second Export on %s: %v", addr, err)
	}
	callEcho(t, n, addr, "bo.Ghost")

	// a failed Export on that listener, shared with bo.Ghost: it stays
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err = n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://"+addr+"/bo.Other").With("registry", zk.String()))
	cancel()
	if err == nil || strings.Contains(err.Error(), "listener") {
		t.Errorf("failed Export on a shared listener: %v; want a failure that closes nothing", err)
	}
	callEcho(t, n, addr, "bo.Ghost")

	// nor does a failed Export close a listener whose service was unexported
	if err := e.Unexport(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err = n.Export(ctx, demo.New("p", 100), withReg)
	cancel()
	if err == nil || strings.Contains(err.Error(), "listener") {
		t.Errorf("failed Export after an Unexport: %v; want a failure that closes nothing", err)
	}
	c, derr := net.DialTimeout("tcp", addr, 2*time.Second)
	if derr != nil {
		t.Errorf("%s refuses connections after a failed Export on a listener an Export used: %v", addr, derr)
	} else {
		c.Close()
	}
}

// callEcho calls service's Echo on addr directly, from a node of its own.
func callEcho(t *testing.T, n *Node, addr, service string) {
	t.Helper()
	c := consumerOn(t, n.Catalogs())
	ref, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/"+service), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := ref.Call(ctxT(t), "Echo", []any{"hi"}, &out); err != nil || out != "hi" {
		t.Errorf("%s.Echo on %s: %q, %v", service, addr, out, err)
	}
}
