package executelimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/filter/executelimit"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBuildChecksKeys(t *testing.T) {
	for _, q := range []string{"executes=-1", "executes=x", "methods.Sleep.executes=2000000", "Sleep.executes=1.5"} {
		_, err := executelimit.Builder{}.Build(spi.MustParse("airnode://h:1/s?" + q))
		key := strings.Split(q, "=")[0]
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "executelimit") {
			t.Errorf("%s: err = %v", q, err)
		}
	}
	a := executelimit.Builder{}.Activation()
	if a.Key != "executes" || len(a.Sides) != 1 || a.Sides[0] != spi.Provider {
		t.Errorf("activation %+v", a)
	}
}

// Excess calls are refused at once, method by method; a method-level key
// wins and 0 lifts the limit.
func TestLimitPerMethod(t *testing.T) {
	f, err := executelimit.Builder{}.Build(spi.MustParse("airnode://h:1/s?executes=2&methods.Free.executes=0&methods.One.executes=1"))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		<-release
		return spi.Result{Value: inv.Method}
	})
	type outcome struct {
		method string
		err    error
		took   time.Duration
	}
	out := make(chan outcome, 64)
	var wg sync.WaitGroup
	run := func(method string, n int) {
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				res := f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: method})
				out <- outcome{method, res.Err, time.Since(start)}
			}()
		}
	}
	run("Sleep", 10)
	run("Free", 5)
	run("One", 3)
	// 8 + 2 refusals arrive at once, while the others wait for release.
	refused := map[string]int{}
	for range 8 + 2 {
		select {
		case o := <-out:
			if !errors.Is(o.err, spi.ErrServerThreadpoolExhausted) || !strings.Contains(o.err.Error(), "executes=") {
				t.Fatalf("%s: %v", o.method, o.err)
			}
			refused[o.method]++
		case <-time.After(5 * time.Second):
			t.Fatalf("refusals did not come at once: %v", refused)
		}
	}
	close(release)
	wg.Wait()
	close(out)
	ok := map[string]int{}
	for o := range out {
		if o.err != nil {
			t.Fatalf("%s: %v", o.method, o.err)
		}
		ok[o.method]++
	}
	if refused["Sleep"] != 8 || refused["One"] != 2 || ok["Sleep"] != 2 || ok["Free"] != 5 || ok["One"] != 1 {
		t.Errorf("refused %v, succeeded %v", refused, ok)
	}
	// The slots are free again.
	if res := f.Invoke(context.Background(), spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), nil), &spi.Invocation{Service: "s", Method: "One"}); res.Err != nil {
		t.Errorf("after release: %v", res.Err)
	}
}

// A refusal's record names the consumer whose call was refused (and its
// application when the provider knows it), as well as the provider.
func TestRefusalRecordNamesConsumer(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	f, err := executelimit.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:1/s?executes=1"))
	if err != nil {
		t.Fatal(err)
	}
	f.(spi.LoggerUser).UseLogger(slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil)))
	release, running := make(chan struct{}), make(chan struct{})
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		close(running)
		<-release
		return spi.Result{}
	})
	done := make(chan struct{})
	go func() { f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "M"}); close(done) }()
	<-running
	inv := &spi.Invocation{Service: "s", Method: "M", ConsumerApplication: "billing"}
	inv.SetAttachment(spi.AttachmentRemote, "127.0.0.1:40000")
	if res := f.Invoke(context.Background(), next, inv); spi.StatusOf(res.Err) != spi.StatusServerThreadpoolExhausted {
		t.Fatalf("second call: %v, want SERVER_THREADPOOL_EXHAUSTED", res.Err)
	}
	close(release)
	<-done
	mu.Lock()
	defer mu.Unlock()
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(buf.String())), &rec); err != nil {
		t.Fatalf("refusal record %q: %v", buf.String(), err)
	}
	if rec["consumer"] != "127.0.0.1:40000" || rec["consumer_application"] != "billing" || rec["provider"] != "127.0.0.1:1" || rec["component"] != "executelimit" {
		t.Errorf("refusal record %v; want consumer=127.0.0.1:40000 consumer_application=billing provider=127.0.0.1:1 component=executelimit", rec)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
