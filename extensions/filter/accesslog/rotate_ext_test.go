package accesslog_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/accesslog"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func logCall(t *testing.T, f spi.Filter, method string) {
	t.Helper()
	if res := f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: method}); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// Tester16 finding 6: after "mv access.log access.log.1" the lines went
// on to access.log.1 and no access.log was made. Reopen (serve's SIGHUP)
// sends the next line to a new access.log at once.
func TestAccessReopenFollowsRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	b := &accesslog.Builder{}
	defer b.Close()
	f, err := b.Build(spi.MustParse("airnode://127.0.0.1:9/demo.Echo?side=provider&accesslog=" + path))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := b.Reopen(); n != 0 || err != nil {
		t.Fatalf("Reopen before any file is open = %d, %v", n, err)
	}
	logCall(t, f, "Before")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Reopen(); n != 1 || err != nil {
		t.Fatalf("Reopen = %d, %v; want 1 file", n, err)
	}
	logCall(t, f, "After")
	old, cur := readLines(t, path+".1"), readLines(t, path)
	if len(old) != 1 || !strings.Contains(old[0], "method=Before") {
		t.Errorf("rotated file: %q", old)
	}
	if len(cur) != 1 || !strings.Contains(cur[0], "method=After") {
		t.Errorf("new file: %q", cur)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Reopen(); n != 0 || err != nil {
		t.Errorf("Reopen after Close = %d, %v", n, err)
	}
}

// Without a signal, a renamed file is noticed within RenameCheck: the
// first line after it goes to a new file at the path.
func TestAccessRenamedFileIsReopened(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	b := &accesslog.Builder{}
	defer b.Close()
	f, err := b.Build(spi.MustParse("airnode://127.0.0.1:9/demo.Echo?side=provider&accesslog=" + path))
	if err != nil {
		t.Fatal(err)
	}
	logCall(t, f, "Before")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(accesslog.RenameCheck + 100*time.Millisecond)
	logCall(t, f, "After")
	if cur := readLines(t, path); len(cur) != 1 || !strings.Contains(cur[0], "method=After") {
		t.Errorf("new file: %q", cur)
	}
	if old := readLines(t, path+".1"); len(old) != 1 {
		t.Errorf("rotated file: %q", old)
	}
}

// A path that cannot be reopened (its directory is gone) keeps the lines
// in the file already open, reported once.
func TestAccessReopenFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "logs")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sub, "access.log")
	var rep syncBuf
	b := &accesslog.Builder{}
	defer b.Close()
	f, err := b.Build(spi.MustParse("airnode://127.0.0.1:9/demo.Echo?side=provider&accesslog=" + path))
	if err != nil {
		t.Fatal(err)
	}
	f.(spi.LoggerUser).UseLogger(slog.New(slog.NewTextHandler(&rep, nil)))
	logCall(t, f, "Before")
	moved := filepath.Join(dir, "moved")
	if err := os.Rename(sub, moved); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if n, err := b.Reopen(); n != 0 || err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Reopen = %d, %v; want an error naming %s", n, err, path)
		}
	}
	logCall(t, f, "After")
	if lines := readLines(t, filepath.Join(moved, "access.log")); len(lines) != 2 {
		t.Errorf("old file has %q, want both lines", lines)
	}
	if n := strings.Count(rep.String(), "cannot reopen"); n != 1 {
		t.Errorf("%d reports:\n%s", n, rep.String())
	}
}

// Tester16 finding 11: the path is checked before serve exports.
func TestAccessCheckFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "nonexistent", "dir", "a.log")
	err := accesslog.Check(spi.MustParse("airnode://h:1/s?accesslog=" + bad))
	if err == nil || !strings.HasPrefix(err.Error(), "accesslog: ") || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("Check(%s) = %v", bad, err)
	}
	for _, v := range []string{"true", "false", "default", filepath.Join(dir, "ok.log")} {
		if err := accesslog.Check(spi.MustParse("airnode://h:1/s?accesslog=" + v)); err != nil {
			t.Errorf("Check(accesslog=%s) = %v", v, err)
		}
	}
	if err := accesslog.Check(spi.MustParse("airnode://h:1/s")); err != nil {
		t.Error(err)
	}
}

// Tester16 finding 10: the consumer's line names the provider the
// cluster called (spi.Result.ProviderAddr), both sides print the listed
// attachments, and the duration is a number of milliseconds and the same
// text in both formats.
func TestAccessPairableLines(t *testing.T) {
	var cons, prov syncBuf
	b := &accesslog.Builder{}
	fc, err := b.Build(spi.MustParse("airnode:///demo.Echo?side=consumer&accesslog=true&accesslog.attachments=trace,%20tenant,trace"))
	if err != nil {
		t.Fatal(err)
	}
	fc.(spi.LoggerUser).UseLogger(slog.New(slog.NewJSONHandler(&cons, nil)))
	fp, err := b.Build(spi.MustParse("airnode://127.0.0.1:9/demo.Echo?side=provider&accesslog=true&accesslog.attachments=trace"))
	if err != nil {
		t.Fatal(err)
	}
	fp.(spi.LoggerUser).UseLogger(slog.New(slog.NewTextHandler(&prov, nil)))
	remote := spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.7:20880/demo.Echo"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		in := &spi.Invocation{Service: inv.Service, Method: inv.Method, Attachments: map[string]string{"trace": inv.Attachment("trace"), spi.AttachmentRemote: "10.0.0.1:40000"}}
		res := fp.Invoke(ctx, next, in)
		res.ProviderAddr = "10.0.0.7:20880"
		return res
	})
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	inv.SetAttachment("trace", "T-777")
	inv.SetAttachment("other", "not-listed")
	if res := fc.Invoke(context.Background(), remote, inv); res.Err != nil {
		t.Fatal(res.Err)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(cons.String()), &line); err != nil {
		t.Fatalf("%v: %s", err, cons.String())
	}
	if line["provider"] != "10.0.0.7:20880" {
		t.Errorf("consumer line's provider = %v: %s", line["provider"], cons.String())
	}
	if att, _ := line["attachments"].(map[string]any); att["trace"] != "T-777" || len(att) != 1 {
		t.Errorf("consumer line's attachments = %v", line["attachments"])
	}
	if _, ok := line["duration_ms"].(float64); !ok {
		t.Errorf("duration_ms = %#v, want a number", line["duration_ms"])
	}
	if d, _ := line["duration"].(string); !strings.HasSuffix(d, "s") {
		t.Errorf("duration = %#v, want Go's text (1.5ms)", line["duration"])
	}
	p := prov.String()
	for _, want := range []string{"consumer=10.0.0.1:40000", "attachments.trace=T-777", "duration_ms="} {
		if !strings.Contains(p, want) {
			t.Errorf("provider line %q lacks %s", p, want)
		}
	}
	if strings.Contains(cons.String()+p, "not-listed") {
		t.Error("an attachment not listed was logged")
	}
	for _, bad := range []string{"token", "trace,Echo.token", "a b", "x!"} {
		if _, err := b.Build(spi.MustParse("airnode://h:1/s?side=provider&accesslog=true").With(accesslog.KeyAttachments, bad)); err == nil || !strings.Contains(err.Error(), accesslog.KeyAttachments) {
			t.Errorf("accesslog.attachments=%s: %v", bad, err)
		}
	}
}
