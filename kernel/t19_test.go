package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// Extensions whose Build panics, one per point (tester19 finding 3).
type (
	t19PanicLB        struct{}
	t19PanicCluster   struct{}
	t19PanicFilter    struct{}
	t19PanicTransport struct{}
	t19PanicHB        struct{}
	t19PanicRegistry  struct{}
)

func (t19PanicLB) Name() string                            { return "t19.panicky" }
func (t19PanicLB) Build(spi.URL) (spi.LoadBalance, error)  { panic("lb Build exploded") }
func (t19PanicCluster) Name() string                       { return "t19.panicky" }
func (t19PanicCluster) Build(spi.URL) (spi.Cluster, error) { panic("cluster Build exploded") }
func (t19PanicFilter) Name() string                        { return "t19.boom" }
func (t19PanicFilter) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}, Key: "t19.boom"}
}
func (t19PanicFilter) Build(spi.URL) (spi.Filter, error)       { panic("filter Build exploded") }
func (t19PanicTransport) Name() string                         { return "t19.ptr" }
func (t19PanicTransport) Build(spi.URL) (spi.Transport, error) { panic("transport Build exploded") }
func (t19PanicHB) Name() string                                { return "t19.phb" }
func (t19PanicHB) Build(spi.URL) (spi.Heartbeat, error)        { panic("heartbeat Build exploded") }
func (t19PanicRegistry) Name() string                          { return "t19reg" }
func (t19PanicRegistry) Build(spi.URL) (spi.Registry, error)   { panic("registry Build exploded") }

// t19Pinger is tester19's heartbeat, whose Build refuses a short
// "pinger.every" with a *spi.ParamError that does not name the extension.
type t19Pinger struct{}

func (t19Pinger) Name() string { return "t19.pinger" }
func (t19Pinger) Build(u spi.URL) (spi.Heartbeat, error) {
	if v, _ := u.Param("pinger.every"); v == "1ms" {
		return nil, &spi.ParamError{Key: "pinger.every", Value: v, Want: "10ms..1h"}
	}
	return nil, nil
}

func t19Catalogs(t *testing.T) *extension.Catalogs {
	t.Helper()
	cat := testCatalogs(t)
	const o = extension.Origin("nu19/ext")
	for _, err := range []error{
		cat.LoadBalance.Register(t19PanicLB{}, o),
		cat.Cluster.Register(t19PanicCluster{}, o),
		cat.Filter.Register(t19PanicFilter{}, o),
		cat.Transport.Register(t19PanicTransport{}, o),
		cat.Heartbeat.Register(t19PanicHB{}, o),
		cat.Heartbeat.Register(t19Pinger{}, o),
		cat.Registry.Register(t19PanicRegistry{}, o),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

// Tester19 finding 3 (Build): a panic in the Build of an extension of any
// point is an error of Refer or Export naming the point and the extension,
// not a crash; the node goes on serving.
func TestT19_3_PanickingBuildFailsReferAndExport(t *testing.T) {
	cat := t19Catalogs(t)
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	for _, tc := range []struct{ query, want string }{
		{"transport=t19.ptr", `kernel: export demo.Echo: transport "t19.ptr": Build panicked: transport Build exploded`},
		{"t19.boom=1", `kernel: export demo.Echo: filter "t19.boom": Build panicked: filter Build exploded`},
		{"heartbeat=t19.phb", `kernel: export demo.Echo: heartbeat "t19.phb": Build panicked: heartbeat Build exploded`},
	} {
		_, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+tc.query))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Export ?%s: %v; want %q", tc.query, err, tc.want)
		}
	}
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	addr := e.URL().Address()
	for _, tc := range []struct{ query, want string }{
		{"loadbalance=t19.panicky", `kernel: refer demo.Echo: loadbalance "t19.panicky": Build panicked: lb Build exploded`},
		{"cluster=t19.panicky", `kernel: refer demo.Echo: cluster "t19.panicky": Build panicked: cluster Build exploded`},
		{"filter=t19.boom", `kernel: refer demo.Echo: filter "t19.boom": Build panicked: filter Build exploded`},
		{"transport=t19.ptr", `kernel: refer demo.Echo: transport "t19.ptr": Build panicked: transport Build exploded`},
		{"heartbeat=t19.phb", `kernel: refer demo.Echo: heartbeat "t19.phb": Build panicked: heartbeat Build exploded`},
	} {
		_, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Echo?"+tc.query), spi.URL{})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Refer ?%s: %v; want %q", tc.query, err, tc.want)
		}
	}
	_, err = c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), spi.MustParse("t19reg://x"))
	if want := `registry "t19reg": Build panicked: registry Build exploded`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Refer through t19reg: %v; want ...%q", err, want)
	}
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Echo"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := r.Call(ctxT(t), "Echo", []any{"x"}, &out); err != nil || out == "" {
		t.Errorf("a call after the failed builds: %q, %v", out, err)
	}
}

// Tester19 finding 10a: a heartbeat's Build error names the extension as
// the other points' do; a bundled heartbeat that names itself is not
// named twice.
func TestT19_10a_HeartbeatBuildErrorNamesTheExtension(t *testing.T) {
	p := NewNode(t19Catalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	_, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?heartbeat=t19.pinger&pinger.every=1ms"))
	if want := `kernel: export demo.Echo: heartbeat "t19.pinger": invalid value "1ms" for URL key "pinger.every": want 10ms..1h`; err == nil || err.Error() != want {
		t.Errorf("Export: %v; want %q", err, want)
	}
	_, err = p.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/demo.Echo?heartbeat=t19.pinger&pinger.every=1ms"), spi.URL{})
	if want := `kernel: refer demo.Echo: heartbeat "t19.pinger": invalid value "1ms"`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Refer: %v; want %q...", err, want)
	}
	_, err = p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?heartbeat=idle&heartbeat.interval=abc"))
	if err == nil || !strings.Contains(err.Error(), ": heartbeat idle: ") || strings.Count(err.Error(), "idle") != 1 {
		t.Errorf("bundled idle: %v; want it named once, as it names itself", err)
	}
}

// t19SecretFilter is a provider filter (tester19's auth) that declares
// its key "t19pass" secret.
type t19SecretFilter struct{}

func (t19SecretFilter) Name() string { return "t19.auth" }
func (t19SecretFilter) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Provider}, Key: "t19pass"}
}
func (t19SecretFilter) Build(spi.URL) (spi.Filter, error) {
	return tagInvoke{name: "auth", side: string(spi.Provider)}, nil
}
func (t19SecretFilter) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: "t19pass", Type: spi.KeyTypeString, Doc: "the password callers must send", Secret: true}}
}

// Tester19 finding 8: once an extension declaring a secret key is
// registered, the kernel's log of an export and its errors naming a
// registry URL show "***" for it, as for "token" and a password.
func TestT19_8_KernelLogsAndErrorsHideSecretKeys(t *testing.T) {
	cat := t19Catalogs(t)
	if err := cat.Filter.Register(t19SecretFilter{}, "nu19/ext"); err != nil {
		t.Fatal(err)
	}
	var log logbuf.Buffer
	p := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&log, nil))), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?t19pass=s3cret&token=t0k"))
	if err != nil {
		t.Fatal(err)
	}
	out := log.String()
	if !strings.Contains(out, "msg=exported component=kernel") || strings.Contains(out, "s3cret") || strings.Contains(out, "t0k") || !strings.Contains(out, "t19pass=***") {
		t.Errorf("export log shows a secret or lacks the export:\n%s", out)
	}
	if got := e.URL().Redacted(); strings.Contains(got, "s3cret") {
		t.Errorf("Redacted: %s", got)
	}
	_, err = p.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), spi.MustParse("t19reg://alice:pw0rd@127.0.0.1:1?t19pass=s3cret"))
	if err == nil || strings.Contains(err.Error(), "pw0rd") || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "Build panicked") {
		t.Errorf("Refer through t19reg: %v; want the Build panic without the password or the secret", err)
	}
}
