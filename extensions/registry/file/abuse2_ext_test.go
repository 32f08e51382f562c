package file_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/extensions/registry/file/filetest"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// TestAbuse2_F6_InvalidEntriesSkippedLoggedOnceNeverDeleted (tester34
// finding 6): hand-written entries that are not a provider URL of the
// service (text, binary, empty, a key given twice, no port, another
// service's URL) and a directory inside providers/ were dropped without
// a word (the no-port one warned on every call, the other.Svc one was
// taken as a demo.Echo provider, the directory was removed). A
// subscription now lists only the good provider, each invalid entry is
// logged once at Warn naming its file and why, over many polls, Invalid
// returns them, and the directory is still there.
func TestAbuse2_F6_InvalidEntriesSkippedLoggedOnceNeverDeleted(t *testing.T) {
	good := spi.MustParse("airnode://127.0.0.1:37520/demo.Echo?side=provider")
	r, regDir, logBuf := loggedRegistry(t, "?poll=20ms", good)
	prov := filepath.Join(regDir, "demo.Echo", "providers")
	bad := map[string]string{}
	for _, j := range filetest.JunkEntries(t, prov, "demo.Echo") {
		bad[j.Name] = j.Why
	}
	if err := os.Mkdir(filepath.Join(prov, ".hidden-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	_ = os.Chtimes(filepath.Join(prov, ".hidden-dir"), old, old) // older than a stale temporary file

	ch := subscribe(t, r, spi.MustParse("airnode://127.0.0.1/demo.Echo"))
	list := waitList(t, ch, 1, 5*time.Second, "first list")
	if list[0].Address() != good.Address() {
		t.Fatalf("list %v, want only %s", list, good)
	}
	// Many polls and lookups: each invalid entry is still logged once.
	for range 10 {
		if l, err := r.Lookup(context.Background(), spi.MustParse("airnode://127.0.0.1/demo.Echo")); err != nil || len(l) != 1 {
			t.Fatalf("Lookup: %v, %v; want the one good provider", l, err)
		}
		time.Sleep(30 * time.Millisecond)
	}
	// Touch the directory so that the subscription lists it again.
	filetest.HandEntry(t, prov, "hand-text2", "still not a url\n")
	bad["hand-text2"] = "not a URL"
	time.Sleep(300 * time.Millisecond)

	text := logBuf.String()
	for name, why := range bad {
		n := strings.Count(text, "file="+filepath.Join(prov, name)+" ")
		if n != 1 {
			t.Errorf("%s: logged %d times, want once:\n%s", name, n, text)
		}
		if !strings.Contains(text, strings.ReplaceAll(why, `"`, `\"`)) { // quoted by the text handler
			t.Errorf("%s: no %q in the log:\n%s", name, why, text)
		}
	}
	if n := strings.Count(text, "level=WARN"); n != len(bad) {
		t.Errorf("%d Warn lines, want %d:\n%s", n, len(bad), text)
	}
	inv := invalidEntries(t, r, spi.MustParse("airnode://127.0.0.1/demo.Echo"))
	if len(inv) != len(bad) {
		t.Errorf("Invalid returned %d entries, want %d: %+v", len(inv), len(bad), inv)
	}
	for _, iv := range inv {
		if want, ok := bad[iv.Name]; !ok || !strings.Contains(iv.Why, want) {
			t.Errorf("Invalid %s: why %q, want %q", iv.Name, iv.Why, want)
		}
	}
	for _, d := range []string{"hand-dir", ".hidden-dir"} {
		if fi, err := os.Stat(filepath.Join(prov, d)); err != nil || !fi.IsDir() {
			t.Errorf("the directory %s someone put in providers/ is gone: %v", d, err)
		}
	}
}

// TestAbuse2_F5_StrayFileDoesNotHideOtherServices (tester34 finding 5): a
// file where a service's providers directory belongs made Services fail
// (registry ls: rc=1 for every service); it is now skipped, logged once.
func TestAbuse2_F5_StrayFileDoesNotHideOtherServices(t *testing.T) {
	r, regDir, logBuf := loggedRegistry(t, "", spi.MustParse("airnode://127.0.0.1:37523/demo.Echo?side=provider"))
	if err := os.MkdirAll(filepath.Join(regDir, "bad.Svc"), 0o755); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(regDir, "bad.Svc", "providers")
	if err := os.WriteFile(stray, []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		keys, err := r.Services(context.Background())
		if err != nil || len(keys) != 1 || keys[0] != "demo.Echo" {
			t.Fatalf("Services: %v, %v; want [demo.Echo]", keys, err)
		}
	}
	text := logBuf.String()
	if n := strings.Count(text, "file="+stray+" "); n != 1 || !strings.Contains(text, "not a directory") {
		t.Errorf("the stray file logged %d times, want once, saying not a directory:\n%s", n, text)
	}
}

// loggedRegistry builds a file registry of a new directory (query: the
// URL's, "?poll=20ms" or ""), its log lines in the returned buffer
// (text handler, Info and up), registers urls in it and closes it when
// the test ends.
func loggedRegistry(t *testing.T, query string, urls ...spi.URL) (spi.Registry, string, *logbuf.Buffer) {
	t.Helper()
	regDir := t.TempDir()
	logBuf := &logbuf.Buffer{}
	r, err := file.Builder{Logger: slog.New(slog.NewTextHandler(logBuf, nil))}.Build(spi.MustParse("file://" + regDir + query))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	for _, u := range urls {
		if err := r.Register(context.Background(), u); err != nil {
			t.Fatal(err)
		}
	}
	return r, regDir, logBuf
}

// invalidEntries returns what r (a file registry) lists as the invalid
// entries of consumer's service, failing the test on an error.
func invalidEntries(t *testing.T, r spi.Registry, consumer spi.URL) []file.Invalid {
	t.Helper()
	inv, err := r.(interface {
		Invalid(context.Context, spi.URL) ([]file.Invalid, error)
	}).Invalid(context.Background(), consumer)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}
