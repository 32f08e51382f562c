// Command tracepair reads two execution traces taken during the same run on
// one machine, a consumer's (`airnode bench --trace FILE`) and its
// provider's (`bench/profprovider -trace FILE`), and says who waited for
// whom: how long each process had no goroutine running, how long both had
// none at once, how many goroutines of the two ran together (two cores:
// fewer than two is a core left idle), which goroutine ran alone while the
// other process had nothing to do, and which goroutine woke an idle
// process. With -window MS it prints instead the timeline of 400 µs
// starting MS milliseconds into the common span, both processes in a
// column each: every goroutine made runnable (ready, by whom), run, stop,
// syscall and return from one, with its id and the P it ran on, and every
// P's state change (a P idle while its process has runnable goroutines is
// a core the scheduler did not use).
//
// The two traces are aligned by their first clock snapshot (Go 1.25's
// sync events carry one: monotonic time), so both must come from Go 1.25
// or later. A goroutine counts as running in state GoRunning only: one in
// a syscall (a write(2) on loopback, which also runs the peer's receive
// path) counts as not running.
//
//	go build -o /tmp/tracepair .   (in bench/tracepair: its own module)
//	/tmp/profprovider -listen 127.0.0.1:20990 -transport tcp -trace /tmp/p.trace &
//	airnode bench 'airnode://127.0.0.1:20990/demo.Echo?transport=tcp' -n 300000 -c 100 --trace /tmp/c.trace
//	kill -INT %1; /tmp/tracepair /tmp/c.trace /tmp/p.trace
//	/tmp/tracepair -window 1000 /tmp/c.trace /tmp/p.trace
//
// It is a module of its own so that golang.org/x/exp is no dependency of
// airnode's.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// step is a process's running-goroutine count from t on, and the name of
// the only one running when there is one.
type step struct {
	t    int64 // monotonic ns
	n    int
	only string
}

// event is one goroutine's start, stop or syscall entry.
type event struct {
	t    int64
	name string
	what string // "ready", "run", "stop", "syscall" (entered one), "return" (from one) or "proc"
}

// process is what one trace says of its process.
type process struct {
	first, last int64
	steps       []step
	events      []event
	idle        []span         // intervals with no goroutine running
	wakers      map[string]int // the goroutine that ran first after an idle interval
}

type span struct{ from, to int64 }

func main() {
	window := flag.Float64("window", -1, "print the 400 µs timeline starting this many ms into the common span, instead of the summary")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: tracepair [-window MS] CONSUMER.trace PROVIDER.trace")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	c, err := load(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	p, err := load(flag.Arg(1))
	if err != nil {
		fail(err)
	}
	lo, hi := max(c.first, p.first), min(c.last, p.last)
	if hi <= lo {
		fail(fmt.Errorf("the traces do not overlap in time: not taken during the same run?"))
	}
	if *window >= 0 {
		timeline(c, p, lo+int64(*window*1e6), 400_000)
		return
	}
	summary(c, p, lo, hi)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tracepair:", err)
	os.Exit(1)
}

// shortName is the last path element of the function a goroutine was
// created with.
func shortName(fn string) string {
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

func load(path string) (*process, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := &process{wakers: map[string]int{}}
	names := map[trace.GoID]string{}
	running := map[trace.GoID]bool{}
	var (
		early    []trace.Event // events before the first clock snapshot
		snapTime trace.Time
		snapMono int64
		aligned  bool
		idleFrom int64 = -1
	)
	handle := func(ev trace.Event) {
		t := snapMono + int64(ev.Time()-snapTime)
		if p.first == 0 {
			p.first = t
		}
		p.last = t
		if ev.Kind() != trace.EventStateTransition {
			return
		}
		st := ev.StateTransition()
		if st.Resource.Kind == trace.ResourceProc {
			from, to := st.Proc()
			if from != to {
				p.events = append(p.events, event{t, fmt.Sprintf("P%d %v->%v", st.Resource.Proc(), from, to), "proc"})
			}
			return
		}
		if st.Resource.Kind != trace.ResourceGoroutine {
			return
		}
		id := st.Resource.Goroutine()
		if names[id] == "" {
			stk := st.Stack
			if stk == trace.NoStack {
				stk = ev.Stack()
			}
			var fn string
			for fr := range stk.Frames() {
				fn = fr.Func // the outermost frame: what the goroutine was started with
			}
			names[id] = shortName(fn)
		}
		from, to := st.Goroutine()
		only := func() string {
			if len(running) != 1 {
				return ""
			}
			for g := range running {
				return names[g]
			}
			return ""
		}
		switch {
		case from == trace.GoWaiting && to == trace.GoRunnable:
			by := "?"
			if g := ev.Goroutine(); g != trace.NoGoroutine {
				by = names[g]
			}
			p.events = append(p.events, event{t, names[id] + fmt.Sprintf(" #%d by %s on P%d", id, by, ev.Proc()), "ready"})
		case from != trace.GoRunning && to == trace.GoRunning:
			what := "run"
			if from == trace.GoSyscall {
				what = "return" // from the syscall
			}
			p.events = append(p.events, event{t, names[id] + fmt.Sprintf(" #%d on P%d", id, ev.Proc()), what})
			if len(running) == 0 && idleFrom >= 0 {
				p.idle = append(p.idle, span{idleFrom, t})
				p.wakers[names[id]]++
			}
			running[id] = true
			p.steps = append(p.steps, step{t, len(running), only()})
		case from == trace.GoRunning && to != trace.GoRunning:
			what := "stop"
			if to == trace.GoSyscall {
				what = "syscall"
			}
			p.events = append(p.events, event{t, names[id], what})
			delete(running, id)
			if len(running) == 0 {
				idleFrom = t
			}
			p.steps = append(p.steps, step{t, len(running), only()})
		}
	}
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !aligned {
			if ev.Kind() == trace.EventSync {
				if s := ev.Sync(); s.ClockSnapshot != nil {
					snapTime, snapMono, aligned = s.ClockSnapshot.Trace, int64(s.ClockSnapshot.Mono), true
					for _, e := range early {
						handle(e)
					}
					early = nil
				}
				continue
			}
			early = append(early, ev)
			continue
		}
		handle(ev)
	}
	if !aligned {
		return nil, fmt.Errorf("%s: no clock snapshot (a trace from Go 1.25 or later is needed)", path)
	}
	return p, nil
}

func pct(d int64, of float64) float64 { return 100 * float64(d) / of }

func quantiles(d []int64) string {
	if len(d) == 0 {
		return "none"
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	q := func(f float64) time.Duration { return time.Duration(d[int(f*float64(len(d)-1))]) }
	return fmt.Sprintf("p10 %v p50 %v p90 %v p99 %v max %v", q(.1), q(.5), q(.9), q(.99), q(1))
}

func summary(c, p *process, lo, hi int64) {
	span := float64(hi - lo)
	fmt.Printf("common span %v (consumer trace %v, provider trace %v)\n",
		time.Duration(hi-lo), time.Duration(c.last-c.first), time.Duration(p.last-p.first))
	for _, x := range []struct {
		name string
		p    *process
	}{{"consumer", c}, {"provider", p}} {
		var total, long int64
		var d []int64
		for _, s := range x.p.idle {
			if s.from >= lo && s.to <= hi {
				total += s.to - s.from
				d = append(d, s.to-s.from)
				if s.to-s.from > 5000 {
					long += s.to - s.from
				}
			}
		}
		fmt.Printf("%s: no goroutine running %.1f%% of the span, in %d intervals (%s); in intervals over 5 µs: %.1f%%\n",
			x.name, pct(total, span), len(d), quantiles(d), pct(long, span))
	}

	// Both processes' running counts together, and who ran alone.
	var joint [5]int64
	var both []int64 // lengths of the intervals in which neither ran anything
	alone := map[string]int64{}
	i, j := 0, 0
	var cs, ps step
	for i < len(c.steps) && c.steps[i].t <= lo {
		cs = c.steps[i]
		i++
	}
	for j < len(p.steps) && p.steps[j].t <= lo {
		ps = p.steps[j]
		j++
	}
	var bothFrom int64 = -1
	for t := lo; t < hi; {
		next := hi
		if i < len(c.steps) {
			next = min(next, c.steps[i].t)
		}
		if j < len(p.steps) {
			next = min(next, p.steps[j].t)
		}
		d := next - t
		joint[min(cs.n+ps.n, 4)] += d
		switch {
		case cs.n == 1 && ps.n == 0:
			alone["consumer "+cs.only] += d
		case cs.n == 0 && ps.n == 1:
			alone["provider "+ps.only] += d
		}
		if cs.n+ps.n == 0 && bothFrom < 0 {
			bothFrom = t
		}
		t = next
		for i < len(c.steps) && c.steps[i].t == t {
			cs = c.steps[i]
			i++
		}
		for j < len(p.steps) && p.steps[j].t == t {
			ps = p.steps[j]
			j++
		}
		if bothFrom >= 0 && cs.n+ps.n > 0 {
			both = append(both, t-bothFrom)
			bothFrom = -1
		}
	}
	fmt.Printf("goroutines running in the two processes together: 0 %.1f%%, 1 %.1f%%, 2 %.1f%%, 3 %.1f%%, 4+ %.1f%%\n",
		pct(joint[0], span), pct(joint[1], span), pct(joint[2], span), pct(joint[3], span), pct(joint[4], span))
	fmt.Printf("both idle at once: %d intervals (%s)\n", len(both), quantiles(both))
	type kv struct {
		k string
		v int64
	}
	var l []kv
	for k, v := range alone {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(a, b int) bool { return l[a].v > l[b].v })
	fmt.Println("running alone (one goroutine in one process, nothing in the other):")
	for _, e := range l {
		if pct(e.v, span) >= 0.5 {
			fmt.Printf("  %-60s %5.1f%%\n", e.k, pct(e.v, span))
		}
	}
	for _, x := range []struct {
		name string
		p    *process
	}{{"consumer", c}, {"provider", p}} {
		var w []kv
		for k, v := range x.p.wakers {
			w = append(w, kv{k, int64(v)})
		}
		sort.Slice(w, func(a, b int) bool { return w[a].v > w[b].v })
		fmt.Printf("%s woken from idle by:", x.name)
		for _, e := range w[:min(4, len(w))] {
			fmt.Printf(" %s %d;", e.k, e.v)
		}
		fmt.Println()
	}
}

func timeline(c, p *process, from, length int64) {
	to := from + length
	fmt.Printf("%9s  %-44s %s\n", "µs", "consumer", "provider")
	i, j := 0, 0
	for i < len(c.events) || j < len(p.events) {
		var e event
		consumer := j >= len(p.events) || i < len(c.events) && c.events[i].t <= p.events[j].t
		if consumer {
			e = c.events[i]
			i++
		} else {
			e = p.events[j]
			j++
		}
		if e.t < from || e.t > to {
			continue
		}
		col := fmt.Sprintf("%-7s %s", e.what, e.name)
		if consumer {
			fmt.Printf("%9.2f  %-44s\n", float64(e.t-from)/1e3, col)
		} else {
			fmt.Printf("%9.2f  %-44s %s\n", float64(e.t-from)/1e3, "", col)
		}
	}
}
