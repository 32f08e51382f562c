package file_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// childEnv, when set to "DIR|URL", makes the test binary a provider process:
// it registers URL in the file registry at DIR, prints "ready" and sleeps
// until killed.
const childEnv = "AIRNODE_FILE_REGISTRY_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		runChild(v)
		return
	}
	if v := os.Getenv(t22ChildEnv); v != "" {
		runT22Child(v)
		return
	}
	goleak.VerifyTestMain(m)
}

func runChild(v string) {
	dir, u, _ := strings.Cut(v, "|")
	r, err := file.Builder{}.Build(spi.MustParse("file://" + dir))
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	if err := r.Register(context.Background(), spi.MustParse(u)); err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
}

func build(t *testing.T, u string) spi.Registry {
	t.Helper()
	r, err := file.Builder{}.Build(spi.MustParse(u))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestConformance(t *testing.T) {
	dir := t.TempDir()
	spitest.TestRegistry(t, func(t *testing.T) spi.Registry {
		r, err := file.Builder{}.Build(spi.MustParse("file://" + dir + "?poll=100ms"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
}

func TestBuild(t *testing.T) {
	for _, bad := range []string{"file://host/x", "file:///x?poll=1ms", "file:///x?poll=abc", "file:///x?pol=1s", "memory://"} {
		if _, err := (file.Builder{}).Build(spi.MustParse(bad)); err == nil {
			t.Errorf("Build(%q) succeeded", bad)
		}
	}
	r, err := file.Builder{}.Build(spi.MustParse("file:///var/tmp/x/../y"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.(*file.Registry).Dir(); got != "/var/tmp/y" {
		t.Errorf("Dir() = %q", got)
	}
	runtime := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	want := filepath.Join(runtime, "airnode", "registry")
	if got := file.DefaultDir(); got != want {
		t.Errorf("DefaultDir() = %q, want %q", got, want)
	}
	r, _ = file.Builder{}.Build(spi.MustParse("file://"))
	if got := r.(*file.Registry).Dir(); got != want {
		t.Errorf("default Dir() = %q, want %q", got, want)
	}
	if got, want := r.(*file.Registry).String(), "file:// ("+want+")"; got != want {
		t.Errorf("default String() = %q, want %q", got, want)
	}
}

// A HOME that does not exist (nobody's /nonexistent, many service
// accounts') is no cache directory: the default falls back to the
// temporary directory's airnode-<uid> (serve failed "mkdir /nonexistent:
// permission denied": tester68 F7).
func TestT68_DefaultDirSkipsAMissingHome(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("HOME", filepath.Join(tmp, "nonexistent"))
	if got, want := file.DefaultDir(), filepath.Join(tmp, "airnode-"+strconv.Itoa(os.Getuid()), "registry"); got != want {
		t.Errorf("HOME missing: DefaultDir() = %q, want %q", got, want)
	}
	home := filepath.Join(tmp, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home) // no .cache yet: it is made on first use
	if got, want := file.DefaultDir(), filepath.Join(home, ".cache", "airnode", "registry"); got != want {
		t.Errorf("HOME without .cache: DefaultDir() = %q, want %q", got, want)
	}
}

// Tester finding: XDG_RUNTIME_DIR=/nonexistent/dir made the file registry
// create /nonexistent/dir/airnode/registry. The XDG spec has the login
// manager create that directory; a value that is no existing directory
// (missing, a file, relative) falls back as if unset, to the user's cache
// directory.
func TestDefaultDirIgnoresAnUnusableXDGRuntimeDir(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // os.UserCacheDir
	fallback := filepath.Join(cache, "airnode", "registry")
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nonexistent", "dir")
	for _, v := range []string{"", missing, notDir, "relative/dir"} {
		t.Setenv("XDG_RUNTIME_DIR", v)
		if got := file.DefaultDir(); got != fallback {
			t.Errorf("XDG_RUNTIME_DIR=%q: DefaultDir() = %q, want the fallback %q", v, got, fallback)
		}
	}
	// A registry using the default creates the fallback, not the
	// missing runtime directory.
	t.Setenv("XDG_RUNTIME_DIR", missing)
	r, err := file.Builder{}.Build(spi.MustParse("file://"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Register(context.Background(), spi.MustParse("airnode://127.0.0.1:1/demo.Echo?side=provider")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Errorf("%s exists after Register (stat: %v); want it never created", filepath.Dir(missing), err)
	}
	if _, err := os.Stat(filepath.Join(fallback, "demo.Echo", "providers")); err != nil {
		t.Errorf("the entry is not under the fallback %s: %v", fallback, err)
	}
}

// An unknown key says how the file registry's directory is given (the
// URL's path; file:// alone is the default directory); a misspelling of
// poll gets the key meant instead, and a key of the zookeeper registry
// (or a misspelling of one) what the file registry does instead.
func TestUnknownKeySaysHowToGiveTheDirectory(t *testing.T) {
	runtime := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	def := filepath.Join(runtime, "airnode", "registry")
	for raw, want := range map[string]string{
		"file:///x?file.cahce=y": `file registry: unknown URL key "file.cahce" in "file:///x?file.cahce=y"; did you mean "file.cache"? ` +
			`That is a key of the zookeeper registry (its cache of the last provider lists, used while ZooKeeper is down); ` +
			`the file registry needs none: its directory is the state (the one key is poll)`,
		"file:///x?root=y": `file registry: unknown URL key "root" in "file:///x?root=y": root is a key of the zookeeper registry (the root node of its entries); ` +
			`here the directory is the URL's path, file:///absolute/dir (the one key is poll)`,
		"file://?path=": `file registry: unknown URL key "path" in "file://?path=": the directory is the URL's path, file:///absolute/dir; ` +
			`file:// alone uses the default, ` + def + `; the one key is poll`,
		"file://?dir=/srv/reg/": `file registry: unknown URL key "dir" in "file://?dir=%2Fsrv%2Freg%2F": the directory is the URL's path, file:///absolute/dir (write file:///srv/reg); ` +
			`file:// alone uses the default, ` + def + `; the one key is poll`,
		"file:///x?pol=1s":  `file registry: unknown URL key "pol" in "file:///x?pol=1s"; did you mean "poll"? (the one key is poll)`,
		"file:///x?pool=1s": `file registry: unknown URL key "pool" in "file:///x?pool=1s"; did you mean "poll"? (the one key is poll)`,
	} {
		_, err := file.Builder{}.Build(spi.MustParse(raw))
		if err == nil || err.Error() != want {
			t.Errorf("Build(%s):\n got %v\nwant %s", raw, err, want)
		}
	}
}

// waitList waits until the newest list of ch has n entries, up to bound.
func waitList(t *testing.T, ch <-chan []spi.URL, n int, bound time.Duration, what string) []spi.URL {
	t.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		select {
		case l := <-ch:
			if len(l) == n {
				return l
			}
		case <-timer.C:
			t.Fatalf("%s: no list of %d providers within %v", what, n, bound)
		}
	}
}

func subscribe(t *testing.T, r spi.Registry, consumer spi.URL) <-chan []spi.URL {
	t.Helper()
	ch := make(chan []spi.URL, 100)
	sub, err := r.Subscribe(context.Background(), consumer, func(l []spi.URL) { ch <- l })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	return ch
}

// TestPushByFileEvent shows fsnotify delivers changes: polling is set to a
// minute, so only a file event can explain the pushes.
func TestPushByFileEvent(t *testing.T) {
	dir := t.TempDir()
	c := build(t, "file://"+dir+"?poll=1m")
	p := build(t, "file://"+dir+"?poll=1m")
	ch := subscribe(t, c, spi.MustParse("airnode://127.0.0.1/demo.Echo"))
	waitList(t, ch, 0, 5*time.Second, "first list")
	u := spi.MustParse("airnode://127.0.0.1:1/demo.Echo?side=provider")
	if err := p.Register(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	waitList(t, ch, 1, 5*time.Second, "after register")
	if err := p.Unregister(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	waitList(t, ch, 0, 5*time.Second, "after unregister")
}

func startChild(t *testing.T, dir, u string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir+"|"+u)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("child provider: %q", line)
	}
	return cmd
}

// TestKill9ProviderDisappears is the acceptance: kill -9 a provider
// process and consumers stop seeing it within 2 s (its lock is released
// without any file event); a restarted provider is seen again.
func TestKill9ProviderDisappears(t *testing.T) {
	dir := t.TempDir()
	c := build(t, "file://"+dir)
	ch := subscribe(t, c, spi.MustParse("airnode://127.0.0.1/demo.Echo"))
	waitList(t, ch, 0, 5*time.Second, "first list")

	child := startChild(t, dir, "airnode://127.0.0.1:20880/demo.Echo?side=provider&timestamp=1")
	waitList(t, ch, 1, 5*time.Second, "child registered")
	if err := child.Process.Kill(); err != nil { // SIGKILL, by PID
		t.Fatal(err)
	}
	killed := time.Now()
	waitList(t, ch, 0, 2*time.Second, "after kill -9")
	t.Logf("dead provider dropped %v after kill -9", time.Since(killed).Round(time.Millisecond))
	ents, _ := filepath.Glob(filepath.Join(dir, "demo.Echo", "providers", "*"))
	if len(ents) != 0 {
		t.Errorf("dead entry not cleaned: %v", ents)
	}

	startChild(t, dir, "airnode://127.0.0.1:20880/demo.Echo?side=provider&timestamp=2")
	l := waitList(t, ch, 1, 2*time.Second, "restarted provider")
	if l[0].ParamOr("timestamp", "") != "2" {
		t.Errorf("restarted provider = %v", l[0])
	}
}

func TestSecondLiveRegistrationFails(t *testing.T) {
	dir := t.TempDir()
	u := spi.MustParse("airnode://127.0.0.1:1/demo.Echo")
	if err := build(t, "file://"+dir).Register(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if err := build(t, "file://"+dir).Register(context.Background(), u); err == nil {
		t.Fatal("a second live registration of the same URL succeeded")
	}
}

func TestLongURLAndRemovedEntry(t *testing.T) {
	dir := t.TempDir()
	p := build(t, "file://"+dir+"?poll=50ms")
	c := build(t, "file://"+dir)
	u := spi.MustParse("airnode://127.0.0.1:1/demo.Echo?methods=" + strings.Repeat("Method,", 60) + "X")
	if err := p.Register(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	got, err := c.Lookup(context.Background(), u)
	if err != nil || len(got) != 1 || !got[0].Equal(u) {
		t.Fatalf("Lookup = %v, %v", got, err)
	}
	ents, _ := filepath.Glob(filepath.Join(dir, "demo.Echo", "providers", "h-*"))
	if len(ents) != 1 {
		t.Fatalf("long URL entry: %v", ents)
	}
	// Removed by hand: the provider re-creates it.
	if err := os.Remove(ents[0]); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _ := c.Lookup(context.Background(), u)
		if len(got) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("entry not re-created")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The file registry is shared by the processes of the machine
// (spi.RegistryReacher).
func TestReachIsShared(t *testing.T) {
	if got := (file.Builder{}).Reach(); got != spi.ReachShared {
		t.Errorf("Reach() = %v, want shared", got)
	}
}
