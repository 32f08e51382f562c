package cli

import (
	"context"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

func fileRegistry(t *testing.T, dir string) spi.Registry {
	t.Helper()
	r, err := file.Builder{}.Build(spi.MustParse("file://" + dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// registered writes the provider entries urls to a file registry in a new
// directory and returns the directory.
func registered(t *testing.T, urls ...string) string {
	t.Helper()
	dir := t.TempDir()
	reg := fileRegistry(t, dir)
	for _, u := range urls {
		if err := reg.Register(context.Background(), spi.MustParse(u)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// registryLs runs `airnode registry ls ARGS --registry file://dir` and
// returns its output, failing the test unless it exits 0.
func registryLs(t *testing.T, dir string, args ...string) string {
	t.Helper()
	code, out, errOut := airnode(t, nil, append(append([]string{"registry", "ls"}, args...), "--registry", "file://"+dir)...)
	if code != 0 {
		t.Fatalf("registry ls %v: exit %d: %s", args, code, errOut)
	}
	return out
}

func TestRegistryLsShowsWeightWarmupUptime(t *testing.T) {
	ts := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	old := strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10)
	dir := registered(t,
		"airnode://127.0.0.1:20001/demo.Echo?side=provider&timestamp="+ts+"&weight=100&warmup=10m",
		"airnode://127.0.0.1:20002/demo.Echo?side=provider&timestamp="+old+"&weight=50",
		"airnode://127.0.0.1:20003/demo.Other?side=provider&group=g&version=1.0&timestamp="+old,
	)
	out := registryLs(t, dir)
	for _, r := range [][]string{
		{"demo.Echo", "(2 providers)"},
		{"ADDRESS", "WEIGHT", "WARM-UP", "UPTIME", "PROTOCOL"},
		{"127.0.0.1:20001", "100", "weight", "10", "of", "100", "(10%),", "9m0s", "left", "1m0s", "airnode"},
		{"127.0.0.1:20002", "50", "done", "1h0m0s", "airnode"},
		{"g/demo.Other:1.0", "(1 provider)"},
	} {
		if !row(r...).MatchString(out) {
			t.Errorf("output lacks row %q:\n%s", r, out)
		}
	}
	if out := registryLs(t, dir, "g/demo.Other:1.0"); strings.Contains(out, "demo.Echo") || !strings.Contains(out, "127.0.0.1:20003") {
		t.Fatalf("ls SERVICE:\n%s", out)
	}
	if out := registryLs(t, t.TempDir()); !strings.Contains(out, "no services") {
		t.Fatalf("empty registry:\n%s", out)
	}
}

func TestRegistryWatchStreamsChanges(t *testing.T) {
	dir := t.TempDir()
	provider := fileRegistry(t, dir)
	watcher := fileRegistry(t, dir)
	var out logbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- registryWatch(ctx, watcher, "file://"+dir, "demo.Echo", &out, io.Discard, "text", false)
	}()
	waitOutput := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("output lacks %q:\n%s", want, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitOutput("demo.Echo: 0 providers")
	u := spi.MustParse("airnode://127.0.0.1:20001/demo.Echo?side=provider")
	if err := provider.Register(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	waitOutput("+ " + u.String())
	if err := provider.Unregister(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	waitOutput("- " + u.String())
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestDescribeProviderClockSkew(t *testing.T) {
	now := time.Now()
	u := spi.MustParse("airnode://h:1/x?timestamp=" + strconv.FormatInt(now.Add(5*time.Minute).UnixMilli(), 10))
	s := describeProvider(u, now)
	if !strings.HasPrefix(s.uptime, "clock skew 5m") {
		t.Fatalf("uptime = %q", s.uptime)
	}
	// the balancers pick it with weight 1 (warmup.Effective): ls says so
	// rather than "-" (tester28 finding 7)
	if s.effective != 1 || s.warmup != "weight 1 of 100: its clock is ahead of this host's" {
		t.Fatalf("warmup %q, effective %d; want weight 1 of 100 and why", s.warmup, s.effective)
	}
	done := spi.MustParse("airnode://h:1/x?warmup=0&timestamp=" + strconv.FormatInt(now.Add(5*time.Minute).UnixMilli(), 10))
	if s := describeProvider(done, now); s.effective != 100 || s.warmup != "off" {
		t.Fatalf("warm-up off, clock ahead: warmup %q, effective %d; want the full weight", s.warmup, s.effective)
	}
}

// A provider just into its warm-up is shown with the weight the load
// balancers pick it with (warmup.Weigher, the same formula) and that
// weight's share of the configured one — never "0%", which read like "not
// receiving traffic".
func TestDescribeProviderWarmupIsTheBalancersWeight(t *testing.T) {
	now := time.Now()
	w := warmup.New(warmup.WithClock(func() time.Time { return now }))
	for _, c := range []struct {
		query  string
		uptime time.Duration
		want   string
	}{
		{"weight=100&warmup=10m", time.Second, "weight 1 of 100 (1%), 9m59s left"},
		{"weight=100&warmup=10m", 5 * time.Minute, "weight 50 of 100 (50%), 5m0s left"},
		{"weight=1000&warmup=10m", time.Second, "weight 1 of 1000 (<1%), 9m59s left"},
		{"weight=7&warmup=600000", 9 * time.Minute, "weight 6 of 7 (85%), 1m0s left"},
		{"weight=100&warmup=10m", 11 * time.Minute, "done"},
	} {
		u := spi.MustParse("airnode://h:1/x?" + c.query + "&timestamp=" + strconv.FormatInt(now.Add(-c.uptime).UnixMilli(), 10))
		s := describeProvider(u, now)
		if s.warmup != c.want {
			t.Errorf("%s up %v: warm-up %q, want %q", c.query, c.uptime, s.warmup, c.want)
		}
		if bw := w.Weight(u, w.Now()); c.want != "done" && !strings.HasPrefix(s.warmup, "weight "+strconv.FormatInt(bw, 10)+" of") {
			t.Errorf("%s up %v: ls shows %q, the balancer picks it with weight %d", c.query, c.uptime, s.warmup, bw)
		}
	}
}

// A provider taken out with weight=0 a second after its start is "none:
// weight 0, not picked", not "done" (tester65 #6); an uptime past a day
// splits off days (tester65 #8: 1200h0m1s).
func TestT65_DescribeProviderWeightZeroAndDays(t *testing.T) {
	now := time.Now()
	at := func(query string, up time.Duration) providerState {
		return describeProvider(spi.MustParse("airnode://h:1/x?"+query+"&timestamp="+strconv.FormatInt(now.Add(-up).UnixMilli(), 10)), now)
	}
	if s := at("weight=0", time.Second); s.warmup != "none: weight 0, not picked" || s.uptime != "1s" {
		t.Errorf("weight 0 up 1s: warm-up %q, uptime %q", s.warmup, s.uptime)
	}
	for up, want := range map[time.Duration]string{
		50*24*time.Hour + time.Second:               "50d0h0m1s",
		(1<<32)*time.Millisecond + 5*time.Minute:    "49d17h7m47s",
		23*time.Hour + 59*time.Minute + time.Second: "23h59m1s",
	} {
		if s := at("weight=100", up); s.uptime != want || s.warmup != "done" {
			t.Errorf("up %v: uptime %q, warm-up %q; want %q, done", up, s.uptime, s.warmup, want)
		}
	}
}

// Tester finding (item 13): Ctrl-C while registry watch waited for a
// ZooKeeper session exited 1 ("context canceled"), while watching it
// exited 0. Both exit 130, as call and bench on SIGINT.
func TestRegistryWatchSIGINTExits130(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close() // nothing listens there: watch waits for a session
	for _, tc := range []struct{ name, reg, ready string }{
		{"waiting for a session", "zookeeper://" + dead + "?connect.timeout=1m", ""},
		{"watching", "file://" + t.TempDir(), "watching demo.Echo"},
	} {
		var out, errb logbuf.Buffer
		cmd := exec.Command(binary, "registry", "watch", "--registry", tc.reg, "demo.Echo")
		cmd.Env = append(hostEnviron(), noAirnodeEnv...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		deadline := time.Now().Add(10 * time.Second)
		if tc.ready == "" {
			time.Sleep(time.Second) // in Subscribe, waiting for the session
		}
		for tc.ready != "" && !strings.Contains(out.String()+errb.String(), tc.ready) { // the banner is on stderr
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("%s: no %q line:\n%s\n%s", tc.name, tc.ready, out.String(), errb.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("%s: watch did not exit after SIGINT", tc.name)
		}
		if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(errb.String(), "registry watch: interrupted by SIGINT") {
			t.Errorf("%s: exit %d, stderr %q; want 130 and the interrupted line", tc.name, code, errb.String())
		}
	}
}
