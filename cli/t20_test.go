package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

// Tester20 N4, N7: secrets in what the command line prints, a panic in
// a WithExtensions function, and the program's name.

// t20SecretFilter is an in-process filter declaring its key Secret
// (tester20's auth filter); it is registered only, never activated.
type t20SecretFilter struct {
	extensiontest.Filter
	key string
}

func (f *t20SecretFilter) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: f.key, Type: spi.KeyTypeString, Doc: "the caller's credential", Secret: true}}
}

// withSecretKey registers a filter named name declaring key secret.
func withSecretKey(name, key string) Option {
	return WithExtensions(func(cat *extension.Catalogs) error {
		return cat.Filter.Register(&t20SecretFilter{Filter: extensiontest.Filter{Ext: extensiontest.Ext{ExtName: name}}, key: key}, acmeOrigin)
	})
}

// t20Echo is the provider bench calls.
type t20Echo struct{}

func (t20Echo) Echo(_ context.Context, b []byte) ([]byte, error) { return b, nil }

// bench's report names its SERVICE_URL with the token and an extension's
// secret key hidden (it printed both as given).
func TestT20_4_BenchReportRedactsSecrets(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prov := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = prov.Close() })
	exp, err := prov.Export(ctx, t20Echo{}, spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	target := "airnode://" + exp.URL().Address() + "/demo.Echo?t20benchauth=s3cretpw&token=tok123"
	code, out, errOut := runCLI(t, []string{"bench", "-n", "20", "-c", "1", "--warmup", "0", target}, withSecretKey("t20benchf", "t20benchauth"))
	if code != 0 {
		t.Fatalf("bench: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "s3cretpw") || strings.Contains(out+errOut, "tok123") {
		t.Errorf("bench printed a secret:\nstdout %s\nstderr %s", out, errOut)
	}
	if want := "airnode bench airnode://" + exp.URL().Address() + "/demo.Echo?t20benchauth=***&token=***: 20 calls"; !strings.Contains(out, want) {
		t.Errorf("bench report lacks %q:\n%s", want, out)
	}
}

// The URL checks of call, bench and serve run before the command builds
// its catalogs: Run registers the WithExtensions extensions first, so an
// extension's secret key is hidden in those early errors as "token" is.
// Each case uses a key of its own: a mark is process-wide and never
// removed, so a key marked by an earlier test would hide nothing here.
func TestT20_4_EarlyURLErrorsHideExtensionSecrets(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		key  string
		args func(key string) []string
		want string
	}{
		{"t20callauth", func(k string) []string {
			return []string{"call", "airnode://127.0.0.1:0/demo.Echo?" + k + "=s3cretpw&token=tok123", "Echo", `"hi"`}
		}, "port 0: want a port from 1 to 65535"},
		{"t20benchearly", func(k string) []string {
			return []string{"bench", "airnode://127.0.0.1:0/demo.Echo?" + k + "=s3cretpw"}
		}, "port 0: want a port from 1 to 65535"},
		{"t20serveauth", func(k string) []string {
			return []string{"serve", "--listen", "127.0.0.1:0", "--registry", "file://" + dir + "?" + k + "=s3cretpw&token=tok123&bogus=1"}
		}, "bogus"},
	} {
		if spi.IsSecretKey(c.key) {
			t.Fatalf("%s is marked secret before the case ran", c.key)
		}
		code, out, errOut := runCLI(t, c.args(c.key), withSecretKey(strings.ReplaceAll(c.key, "auth", "f"), c.key))
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want a failure naming %q", c.args(c.key)[0], code, errOut, c.want)
		}
		if strings.Contains(out+errOut, "s3cretpw") || strings.Contains(out+errOut, "tok123") {
			t.Errorf("%s printed a secret:\nstdout %s\nstderr %s", c.args(c.key)[0], out, errOut)
		}
		if !strings.Contains(errOut, c.key+"=***") {
			t.Errorf("%s: stderr %q; want %s=***", c.args(c.key)[0], errOut, c.key)
		}
	}
}

// A panic in a WithExtensions function fails Run with exit status 1 and
// "airnode: extensions: panic: ..." instead of reaching Run's caller,
// whatever the command (list, or the help, which builds no catalogs).
func TestT20_7_PanicInWithExtensionsIsExit1(t *testing.T) {
	boom := WithExtensions(func(*extension.Catalogs) error { panic("acme: register exploded") })
	for _, args := range [][]string{{"list"}, {"--help"}, {"registry", "ls", "--registry", "file://" + t.TempDir()}} {
		var code int
		var out, errOut string
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Fatalf("%v: the panic reached Run's caller: %v", args, v)
				}
			}()
			code, out, errOut = runCLI(t, args, boom)
		}()
		if want := "airnode: extensions: panic: acme: register exploded\n"; code != 1 || errOut != want || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", args, code, out, errOut, want)
		}
	}
}

// WithName names the program in usage and errors; Run without it, as
// the stock binary, says "airnode".
func TestT20_7_WithNameNamesTheProgram(t *testing.T) {
	code, _, errOut := runCLI(t, []string{"nosuch"}, WithName("acme-airnode"))
	if want := "acme-airnode: unknown command \"nosuch\" (available: "; code != exitUsage || !strings.HasPrefix(errOut, want) {
		t.Errorf("nosuch: exit %d, stderr %q; want %q", code, errOut, want)
	}
	code, out, _ := runCLI(t, []string{"--help"}, WithName("acme-airnode"))
	if code != 0 || !strings.Contains(out, "acme-airnode [command]") || strings.Contains(out, "\n  airnode [command]") {
		t.Errorf("--help: exit %d; want the usage of acme-airnode:\n%s", code, out)
	}
	boom := WithExtensions(func(*extension.Catalogs) error { panic("x") })
	if code, _, errOut := runCLI(t, []string{"list"}, WithName("acme-airnode"), boom); code != 1 || errOut != "acme-airnode: extensions: panic: x\n" {
		t.Errorf("list with a panicking register: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI(t, []string{"call", "airnode://127.0.0.1:0/demo.Echo", "Echo", `"x"`}, WithName("acme-airnode"))
	if code != exitUsage || !strings.HasPrefix(errOut, "acme-airnode: call: SERVICE_URL ") || strings.Contains(errOut, "\nairnode: ") || strings.HasPrefix(errOut, "airnode: ") {
		t.Errorf("call: exit %d, stderr %q; want the error under acme-airnode", code, errOut)
	}
	if code, _, errOut := runCLI(t, []string{"nosuch"}); code != exitUsage || !strings.HasPrefix(errOut, "airnode: unknown command \"nosuch\" (available: ") {
		t.Errorf("without WithName: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, []string{"nosuch"}, WithName("bad/name")); code != 1 || !strings.HasPrefix(errOut, "airnode: ") {
		t.Errorf("WithName(\"bad/name\") was not ignored: exit %d, stderr %q", code, errOut)
	}
}

// The real acmecli binary (cli.Main with WithName("acme-airnode"))
// names itself in errors and usage; the stock binary says "airnode".
func TestT20_7_AcmeCLINamesItself(t *testing.T) {
	r := runCommandOf(t, acmecli, 20*time.Second, nil, "nosuch")
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, "acme-airnode: unknown command \"nosuch\" (available: ") {
		t.Errorf("acmecli nosuch: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runCommandOf(t, acmecli, 20*time.Second, nil, "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "acme-airnode [command]") {
		t.Errorf("acmecli --help: exit %d\n%s", r.code, r.stdout)
	}
	r = runCommandOf(t, binary, 20*time.Second, nil, "nosuch")
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, "airnode: unknown command \"nosuch\" (available: ") {
		t.Errorf("airnode nosuch: exit %d, stderr %q", r.code, r.stderr)
	}
}
