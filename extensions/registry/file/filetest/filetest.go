// Package filetest helps tests put hand-written entries into a file
// registry directory, as an operator or a script would.
package filetest

import (
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
)

// HandEntry writes content as an entry of the older format named name in
// dir (a service's providers or consumers directory, which must exist),
// the way docs/wire.md says a hand-written entry stays live: written to
// a temporary name, flocked exclusively, renamed into place, and kept
// locked by this process until the test ends (so no reader ever sees it
// dead and removes it). It fails the test on any error.
func HandEntry(t testing.TB, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, ".tmp-"+name)
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(tmp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// Junk is one invalid entry JunkEntries wrote: its file name and path in
// the providers directory, a part of the reason the registry gives for
// skipping it (in file.Invalid's Why as is; slog's text handler escapes
// its double quotes in a Warn line), and the address its URL names, if
// any, which no listing may show as a provider.
type Junk struct {
	Name, Path, Why, Addr string
}

// JunkEntries writes into prov, the providers directory of service (a
// service key, "demo.Echo"), which must exist, the hand-written entries
// the file registry skips, as a person or a script could leave them:
// text, binary, an empty file, a key given twice, a provider URL of a
// scheme no transport serves (http://), one with no port, another
// service's URL, and a directory. Every file is a
// HandEntry, kept live until the test ends. It returns them sorted by
// name, and fails the test on any error.
func JunkEntries(t testing.TB, prov, service string) []Junk {
	t.Helper()
	files := []struct{ name, content, why, addr string }{
		{"hand-binary", "\x00\xff\xfe junk \x01", "not a URL", ""},
		{"hand-dupkey", "airnode://127.0.0.1:37521/" + service + "?side=provider&weight=1&weight=2\n", `parameter "weight" given twice`, "127.0.0.1:37521"},
		{"hand-empty", "", "empty file", ""},
		{"hand-http", "http://127.0.0.1:37524/" + service + "?side=provider\n", `scheme "http", which no transport serves (want airnode://)`, "127.0.0.1:37524"},
		{"hand-noport", "airnode://127.0.0.1/" + service + "?side=provider&transport=tcp\n", "has no port", ""},
		{"hand-other", "airnode://127.0.0.1:37522/other.Svc?side=provider\n", `URL of service "other.Svc" in the directory of "` + service + `"`, "127.0.0.1:37522"},
		{"hand-text", "this is not a url\n", "not a URL", ""},
	}
	var out []Junk
	for _, f := range files {
		HandEntry(t, prov, f.name, f.content)
		out = append(out, Junk{Name: f.name, Path: filepath.Join(prov, f.name), Why: f.why, Addr: f.addr})
	}
	dir := filepath.Join(prov, "hand-dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out = append(out, Junk{Name: "hand-dir", Path: dir, Why: "a directory, not an entry file"})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
