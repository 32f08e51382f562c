package integration

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/internal/hbtest"
	"github.com/airnode/airnode/extensions/heartbeat/internal/task"
	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// TestHeartbeatComparison prints the idle-versus-dual table of
// docs/heartbeat.md (issue 4, "The comparison"). It takes a few minutes
// and ~10,000 sockets per process, so it runs only when asked:
//
//	AIRNODE_HEARTBEAT_COMPARISON=1 go test -run TestHeartbeatComparison -v -count=1 -timeout 30m ./extensions/heartbeat/internal/integration/
//
// AIRNODE_HEARTBEAT_CHANNELS sets the channel count of the many-channel
// measurement (default 10000).
func TestHeartbeatComparison(t *testing.T) {
	if os.Getenv("AIRNODE_HEARTBEAT_COMPARISON") == "" {
		t.Skip("set AIRNODE_HEARTBEAT_COMPARISON=1 to run the idle-versus-dual comparison (docs/heartbeat.md)")
	}
	n := 10000
	if v := os.Getenv("AIRNODE_HEARTBEAT_CHANNELS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("AIRNODE_HEARTBEAT_CHANNELS=%q: want a positive integer", v)
		}
	}
	strategies := []string{"idle", "dual"}
	var out strings.Builder
	row := func(name string, vals ...string) {
		fmt.Fprintf(&out, "| %s | %s |\n", name, strings.Join(vals, " | "))
	}
	fmt.Fprintf(&out, "| measure | idle | dual |\n|---|---|---|\n")

	// 1. Timers and goroutines per channel, each side, heartbeat alone.
	for _, side := range []spi.Side{spi.Consumer, spi.Provider} {
		var timers, gors, heap []string
		for _, s := range strategies {
			c := watchCost(t, "heartbeat="+s, side, n)
			timers = append(timers, fmt.Sprintf("%.2f", c.timers))
			gors = append(gors, fmt.Sprintf("%.2f", c.goroutines))
			heap = append(heap, fmt.Sprintf("%.0f B", c.heap))
		}
		row(fmt.Sprintf("runtime timers per idle channel, %s (measured, %d watches)", side, n), timers...)
		row(fmt.Sprintf("goroutines per idle channel, %s (measured)", side), gors...)
		row(fmt.Sprintf("heap allocated per Watch, %s (heartbeat only)", side), heap...)
	}

	// 2. Heartbeat frames per minute, idle and busy channel.
	const fi = 200 * time.Millisecond
	var idleF, busyF, split []string
	for _, s := range strategies {
		q := fmt.Sprintf("heartbeat=%s&heartbeat.interval=%v&heartbeat.timeout=%v", s, fi, 3*fi)
		var f, b frameCount
		t.Run("frames "+s, func(t *testing.T) {
			f = frames(t, q, 20, 30*fi, false)
			b = frames(t, q, 20, 30*fi, true)
		})
		idleF = append(idleF, fmt.Sprintf("%.2f", f.perInterval))
		busyF = append(busyF, fmt.Sprintf("%.2f", b.perInterval))
		split = append(split, fmt.Sprintf("%.0f%% / %.0f%%", 100*f.consumerPings/(f.consumerPings+f.providerPings), 100*f.providerPings/(f.consumerPings+f.providerPings)))
	}
	// Per interval at fi, not per minute at 60 s: a round's RTT and timer
	// delay weigh more at 200 ms (docs/heartbeat.md, Frames per minute).
	row(fmt.Sprintf("heartbeat frames per interval, idle channel (pings + answers, both ways), measured at interval %v over 20 channels", fi), idleF...)
	row("pings sent by consumer / by provider, idle channel", split...)
	row("heartbeat frames per minute, busy channel (a call every 20 ms), any interval", busyF...)

	// 3. Detection time, median of 5, interval 200ms.
	for _, kind := range []string{"hung provider (SIGSTOP)", "black-holed path"} {
		var vals []string
		for _, s := range strategies {
			q := fmt.Sprintf("heartbeat=%s&heartbeat.interval=200ms&heartbeat.timeout=600ms&heartbeat.retries=3", s)
			if s == "idle" {
				q = "heartbeat=idle&heartbeat.interval=200ms&heartbeat.retries=3&heartbeat.timeout=2s"
			}
			var ds []time.Duration
			t.Run("detect "+s, func(t *testing.T) { ds = detect(t, q, strings.HasPrefix(kind, "hung"), 5) })
			slices.Sort(ds)
			vals = append(vals, fmt.Sprintf("%v (min %v, max %v)", ds[2].Round(time.Millisecond), ds[0].Round(time.Millisecond), ds[4].Round(time.Millisecond)))
		}
		row("detection, "+kind+", consumer, interval 200ms (idle: retries 3; dual: timeout 600ms), median of 5", vals...)
	}

	// 4. Memory and CPU per channel with n idle channels, one consumer
	// process (this one) and one provider process (a child). The interval
	// is 10s: at 1s, 10,000 channels ask 10,000 pings a second of a
	// 2-core machine shared with other work, and pings time out.
	const mi = 10 * time.Second
	var base manyCost
	t.Run("many none", func(t *testing.T) { base = many(t, "heartbeat=none", n, mi) })
	var cm, pm, cc, pc, g, dead []string
	per := func(v float64) float64 { return v / float64(n) }
	for _, s := range strategies {
		var m manyCost
		t.Run("many "+s, func(t *testing.T) { m = many(t, fmt.Sprintf("heartbeat=%s&heartbeat.interval=%v", s, mi), n, mi) })
		cm = append(cm, fmt.Sprintf("%.1f KiB (+%.0f B over none)", per(m.consumerMem)/1024, per(m.consumerMem-base.consumerMem)))
		pm = append(pm, fmt.Sprintf("%.1f KiB (+%.0f B over none)", per(m.providerRSS)/1024, per(m.providerRSS-base.providerRSS)))
		scale := mi.Seconds() / 60 // CPU at interval mi → at 60s
		cc = append(cc, fmt.Sprintf("%.2f µs/s at %v (%.2f µs/s at 60s)", per(m.consumerCPU-base.consumerCPU), mi, per(m.consumerCPU-base.consumerCPU)*scale))
		pc = append(pc, fmt.Sprintf("%.2f µs/s at %v (%.2f µs/s at 60s)", per(m.providerCPU-base.providerCPU), mi, per(m.providerCPU-base.providerCPU)*scale))
		g = append(g, fmt.Sprintf("%.2f", per(m.goroutines)))
		dead = append(dead, strconv.Itoa(m.dead))
	}
	row(fmt.Sprintf("consumer Go heap + stacks per channel, %d idle channels (exchange + smux + heartbeat; none: %.1f KiB)", n, per(base.consumerMem)/1024), cm...)
	row(fmt.Sprintf("provider RSS per channel, %d idle channels (none: %.1f KiB)", n, per(base.providerRSS)/1024), pm...)
	row("consumer CPU per channel over none (scaled to interval 60s)", cc...)
	row("provider CPU per channel over none (scaled to interval 60s)", pc...)
	row(fmt.Sprintf("consumer goroutines per channel, %d idle channels (none: %.2f)", n, per(base.goroutines)), g...)
	row(fmt.Sprintf("channels of %d closed by a false verdict during the measurement", n), dead...)

	// 5. Code size: non-blank, non-comment lines of non-test Go code.
	shared := loc(t, "../task") + loc(t, "../hbparams")
	row("code size (Go lines, no tests, no comments; shared helpers "+strconv.Itoa(shared)+")",
		strconv.Itoa(loc(t, "../../idle")), strconv.Itoa(loc(t, "../../dual")))

	fmt.Printf("\n%s\nmachine: %d CPUs (GOMAXPROCS %d), %s/%s, %s\n", out.String(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, runtime.Version())
}

type cost struct{ timers, goroutines, heap float64 }

// watchCost watches n fake idle channels on side with the strategy of
// query and returns what one watch costs.
func watchCost(t *testing.T, query string, side spi.Side, n int) cost {
	hb := heartbeat(t, query) // default interval 60s: the watches stay idle
	chs := make([]*hbtest.Channel, n)
	for i := range chs {
		chs[i] = hbtest.NewChannel(side, hbtest.Answering)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	alloc0, g0, t0 := ms.TotalAlloc, runtime.NumGoroutine(), task.Armed()
	stops := make([]func(), n)
	for i, ch := range chs {
		stops[i] = hb.Watch(ch)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	c := cost{
		timers:     float64(task.Armed()-t0) / float64(n),
		goroutines: float64(runtime.NumGoroutine()-g0) / float64(n),
		heap:       float64(ms.TotalAlloc-alloc0) / float64(n),
	}
	for _, stop := range stops {
		stop()
	}
	return c
}

type frameCount struct {
	perInterval                  float64 // heartbeat frames (pings and answers, both ways) per interval per channel
	consumerPings, providerPings float64
}

// frames runs pairs idle (or busy) channels for window and counts
// heartbeat frames.
func frames(t *testing.T, query string, pairs int, window time.Duration, busy bool) frameCount {
	u := spi.MustParse("airnode://h:1/s?" + query)
	interval, _ := u.Duration("heartbeat.interval", 0)
	var cs []*consumer
	var ps []*provider
	for range pairs {
		p := startProvider(t, heartbeat(t, query))
		ps = append(ps, p)
		cs = append(cs, dial(t, p.addr, heartbeat(t, query)))
	}
	var wg sync.WaitGroup
	deadline := time.Now().Add(window)
	if busy {
		for _, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) {
					_ = call(c.ch)
					time.Sleep(20 * time.Millisecond)
				}
			}()
		}
	}
	time.Sleep(time.Until(deadline))
	wg.Wait()
	var f frameCount
	var total float64
	for i := range cs {
		cw, pw := cs[i].wrote, ps[i].wrote
		total += float64(cw.pings.Load() + cw.answers.Load() + pw.pings.Load() + pw.answers.Load())
		f.consumerPings += float64(cw.pings.Load())
		f.providerPings += float64(pw.pings.Load())
	}
	f.perInterval = total / float64(pairs) / (float64(window) / float64(interval))
	for _, c := range cs {
		c.ch.Close("measured")
	}
	return f
}

// detect measures, runs times concurrently, how long after a provider
// hangs (SIGSTOP of a child process) or its path is black-holed the
// consumer closes the channel. Each channel is busy until the failure, so
// its last read is the failure's moment.
func detect(t *testing.T, query string, hung bool, runs int) []time.Duration {
	out := make([]time.Duration, runs)
	var wg sync.WaitGroup
	for i := range runs {
		var c *consumer
		var fail func()
		if hung {
			ch := startChild(t, query)
			c = dial(t, ch.addr, heartbeat(t, query))
			fail = func() { _ = ch.Stop() }
		} else {
			p := startProvider(t, heartbeat(t, query))
			px := testproxy.New(t, p.addr)
			c = dial(t, px.Addr(), heartbeat(t, query))
			fail = px.BlackHole
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 { // busy until the failure: its last read is the last answer
				time.Sleep(20 * time.Millisecond)
				_ = call(c.ch)
			}
			fail()
			at := time.Now()
			if _, ok := waitReason(c.closed, 10*time.Second); !ok {
				t.Errorf("%s: not detected in 10 s", query)
			}
			out[i] = time.Since(at)
		}()
	}
	wg.Wait()
	return out
}

type manyCost struct {
	consumerMem, providerRSS float64 // bytes: Go heap in use + stacks (this process), RSS (child)
	consumerCPU, providerCPU float64 // µs of CPU per second
	goroutines               float64 // consumer
	dead                     int     // channels that died while idle
}

// many opens n idle channels from this process to a child provider, lets
// them settle for an interval, and measures both processes' memory and
// CPU over two intervals.
func many(t *testing.T, query string, n int, interval time.Duration) manyCost {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mem0 := ms.HeapInuse + ms.StackInuse
	prov := startChild(t, query)
	tr, err := smux.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	hb := heartbeat(t, query)
	chs := make([]*exchange.Channel, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var dialErr error
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				sess, err := tr.Dial(ctx, prov.addr)
				cancel()
				if err != nil {
					mu.Lock()
					dialErr = err
					mu.Unlock()
					continue
				}
				chs[i] = exchange.NewChannel(sess, exchange.Options{Side: spi.Consumer, Codec: codecByID, Heartbeat: hb, Logger: quiet})
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	closeAll := func() {
		for _, ch := range chs {
			if ch != nil {
				ch.Close("measured")
			}
		}
		for _, ch := range chs {
			if ch != nil {
				ch.Wait()
			}
		}
	}
	defer closeAll()
	if dialErr != nil {
		t.Fatalf("dial %d channels: %v", n, dialErr)
	}
	time.Sleep(interval + 2*time.Second) // every watch has started pinging
	runtime.GC()
	var m manyCost
	m.goroutines = float64(runtime.NumGoroutine())
	runtime.ReadMemStats(&ms)
	m.consumerMem = float64(int64(ms.HeapInuse+ms.StackInuse) - int64(mem0))
	m.providerRSS = float64(rss(t, prov.cmd.Process.Pid))
	window := 2 * interval
	c0, p0 := cpu(t, os.Getpid()), cpu(t, prov.cmd.Process.Pid)
	time.Sleep(window)
	c1, p1 := cpu(t, os.Getpid()), cpu(t, prov.cmd.Process.Pid)
	m.consumerCPU = float64(c1-c0) / float64(time.Microsecond) / window.Seconds()
	m.providerCPU = float64(p1-p0) / float64(time.Microsecond) / window.Seconds()
	for _, ch := range chs {
		if r := ch.Reason(); r != "" {
			if m.dead == 0 {
				t.Logf("%s: a channel died while idle: %s", query, r)
			}
			m.dead++
		}
	}
	return m
}

// rss returns the resident set size of process pid, in bytes.
func rss(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// cpu returns the user + system CPU time of process pid.
func cpu(t *testing.T, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 on
	ut, _ := strconv.ParseInt(f[11], 10, 64)                 // field 14
	st, _ := strconv.ParseInt(f[12], 10, 64)                 // field 15
	return time.Duration(ut+st) * time.Second / 100          // USER_HZ = 100 on Linux
}

// loc counts the non-blank, non-comment lines of the non-test Go files in dir.
func loc(t *testing.T, dir string) int {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "//") {
				n++
			}
		}
		fh.Close()
	}
	return n
}
