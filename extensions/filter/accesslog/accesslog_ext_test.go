package accesslog_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/airnode/airnode/extensions/filter/accesslog"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

var next = spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
	if inv.Method == "Fail" {
		return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "boom")}
	}
	return spi.Result{Value: 1}
})

func TestLinesToLogger(t *testing.T) {
	var buf syncBuf
	b := &accesslog.Builder{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	f, err := b.Build(spi.MustParse("airnode://127.0.0.1:9/demo.Echo?side=provider&accesslog=true"))
	if err != nil {
		t.Fatal(err)
	}
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"secret-arg"}}
	inv.SetAttachment(spi.AttachmentRemote, "127.0.0.1:40000")
	f.Invoke(context.Background(), next, inv)
	f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Fail", Args: []any{"x"}})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for _, want := range []string{"time=", "msg=access", "side=provider", "consumer=127.0.0.1:40000", "service=demo.Echo", "method=Echo", "status=OK", "duration="} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("line %q lacks %q", lines[0], want)
		}
	}
	if !strings.Contains(lines[1], "status=SERVICE_ERROR") {
		t.Errorf("line %q", lines[1])
	}
	if strings.Contains(buf.String(), "secret-arg") {
		t.Error("arguments logged without accesslog.args")
	}
}

func TestArgsAndFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	b := &accesslog.Builder{}
	defer b.Close()
	f1, err := b.Build(spi.MustParse("airnode://127.0.0.1:9/demo.Echo?side=consumer&accesslog.args=true&accesslog=" + path))
	if err != nil {
		t.Fatal(err)
	}
	f2, err := b.Build(spi.MustParse("airnode://127.0.0.1:9/other?side=consumer&accesslog=" + path))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := f1
			if i%2 == 1 {
				f = f2
			}
			f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"hello", strings.Repeat("z", 2000)}})
		}()
	}
	wg.Wait()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	withArgs := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "time=") || !strings.Contains(l, "provider=127.0.0.1:9") {
			t.Errorf("bad line %q", l)
		}
		if strings.Contains(l, "args=") {
			withArgs++
			if !strings.Contains(l, "hello") || len(l) > accesslog.MaxArgs+400 {
				t.Errorf("args line of %d bytes: %.200q", len(l), l)
			}
		}
	}
	if len(lines) != 50 || withArgs != 25 {
		t.Errorf("%d lines, %d with args", len(lines), withArgs)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestBuildErrorsAndOff(t *testing.T) {
	b := &accesslog.Builder{}
	for _, q := range []string{"side=provider&accesslog=", "side=provider&accesslog=true&accesslog.args=maybe", "accesslog=true"} {
		if _, err := b.Build(spi.MustParse("airnode://h:1/s?" + q)); err == nil || !strings.HasPrefix(err.Error(), "accesslog: ") {
			t.Errorf("%s: err = %v", q, err)
		}
	}
	f, err := b.Build(spi.MustParse("airnode://h:1/s?side=provider&accesslog=false"))
	if err != nil {
		t.Fatal(err)
	}
	if res := f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "M"}); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func TestUnopenableFileNeverFailsCalls(t *testing.T) {
	var buf syncBuf
	b := &accesslog.Builder{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	f, err := b.Build(spi.MustParse("airnode://h:1/s?side=provider&accesslog=" + filepath.Join(t.TempDir(), "missing", "dir", "a.log")))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if res := f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "M"}); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if n := strings.Count(buf.String(), "cannot open"); n != 1 {
		t.Errorf("%d reports of the open failure:\n%s", n, buf.String())
	}
}

// A filter of a Builder without Logger logs to its node's logger
// (UseLogger), in that logger's format, files included; a failure a
// cluster below swallowed is logged with its status and swallowed=true.
func TestNodeLoggerAndSwallowed(t *testing.T) {
	var node syncBuf
	b := &accesslog.Builder{}
	defer b.Close()
	f, err := b.Build(spi.MustParse("airnode://127.0.0.1:9/demo.Echo?side=consumer&accesslog=true"))
	if err != nil {
		t.Fatal(err)
	}
	f.(spi.LoggerUser).UseLogger(slog.New(slog.NewJSONHandler(&node, nil)))
	swallowing := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), func(context.Context, *spi.Invocation) spi.Result {
		return spi.Result{Swallowed: spi.Errorf(spi.StatusServiceError, "boom")}
	})
	if res := f.Invoke(context.Background(), swallowing, &spi.Invocation{Service: "demo.Echo", Method: "Echo"}); res.Err != nil {
		t.Fatal(res.Err)
	}
	line := strings.TrimSpace(node.String())
	for _, want := range []string{`{"time":`, `"status":"SERVICE_ERROR"`, `"swallowed":true`} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %s", line, want)
		}
	}
	path := filepath.Join(t.TempDir(), "access.log")
	f, err = b.Build(spi.MustParse("airnode://127.0.0.1:9/demo.Echo?side=consumer&accesslog=" + path))
	if err != nil {
		t.Fatal(err)
	}
	f.(spi.LoggerUser).UseLogger(slog.New(slog.NewJSONHandler(&node, nil)))
	f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), `{"time":`) || !strings.Contains(string(data), `"status":"OK"`) || strings.Contains(string(data), "swallowed") {
		t.Errorf("file got %q, want a JSON line with status OK", data)
	}
}
