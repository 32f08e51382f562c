package extension_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

// t19Codec is a third party's codec (tester19's jsonl) with a chosen
// wire id.
type t19Codec struct {
	name string
	id   uint8
}

func (c t19Codec) Name() string                     { return c.name }
func (c t19Codec) ID() uint8                        { return c.id }
func (c t19Codec) NewEncoder(io.Writer) spi.Encoder { return nil }
func (c t19Codec) NewDecoder(io.Reader) spi.Decoder { return nil }

func bundled(t *testing.T) *extension.Catalogs {
	t.Helper()
	c := extension.New()
	if err := bundle.Register(c); err != nil {
		t.Fatal(err)
	}
	return c
}

// Tester19 finding 1: a codec's wire id is checked at Register: outside
// 1-31 or already held is refused, naming the holder, so CodecByID is
// never ambiguous and a third-party codec cannot shadow msgpack.
func TestT19_1_CodecIDOutOfRangeOrTakenIsRefused(t *testing.T) {
	c := bundled(t)
	const origin = extension.Origin("nu19/ext")
	for _, tc := range []struct {
		codec t19Codec
		want  string
	}{
		{t19Codec{"evil", 1}, `codec: id 1 of "evil" is already msgpack's (bundled); ids are 1-31, unique`},
		{t19Codec{"zero", 0}, `codec: id 0 of "zero" is outside 1-31 (0 is reserved for event frames`},
		{t19Codec{"big", 32}, `codec: id 32 of "big" is outside 1-31`},
		{t19Codec{"huge", 200}, `codec: id 200 of "huge" is outside 1-31`},
	} {
		err := c.Codec.Register(tc.codec, origin)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Register(%s, id %d) = %v; want %q...", tc.codec.name, tc.codec.id, err, tc.want)
		}
	}
	if err := c.Codec.Register(t19Codec{"jsonl", 9}, origin); err != nil {
		t.Fatalf("a free id: %v", err)
	}
	if err := c.Codec.Register(t19Codec{"top", 31}, origin); err != nil {
		t.Fatalf("id 31: %v", err)
	}
	err := c.Codec.Register(t19Codec{"jsonl2", 9}, origin)
	if want := `codec: id 9 of "jsonl2" is already jsonl's (nu19/ext); ids are 1-31, unique`; err == nil || err.Error() != want {
		t.Errorf("Register(jsonl2, id 9) = %v; want %q", err, want)
	}
	// A refused codec is not registered; every id maps to one codec.
	for _, n := range []string{"evil", "zero", "big", "huge", "jsonl2"} {
		if _, ok := c.Codec.Origin(n); ok {
			t.Errorf("refused codec %q is registered", n)
		}
	}
	seen := map[uint8]string{}
	for _, n := range c.Codec.Names() {
		cd, _ := c.Codec.Get(n)
		if prev, dup := seen[cd.ID()]; dup {
			t.Errorf("id %d held by %s and %s", cd.ID(), prev, n)
		}
		seen[cd.ID()] = n
	}
	if cd, err := c.CodecByID(1); err != nil || cd.Name() != "msgpack" {
		t.Errorf("CodecByID(1) = %v, %v; want msgpack", cd, err)
	}
	if cd, err := c.CodecByID(9); err != nil || cd.Name() != "jsonl" {
		t.Errorf("CodecByID(9) = %v, %v; want jsonl", cd, err)
	}
	// The stand-in catalogs of other packages' tests still fill.
	_ = extensiontest.Catalogs()
}

func filterNamed(name string) spi.FilterBuilder {
	return &extensiontest.Filter{Ext: extensiontest.Ext{ExtName: name, Act: spi.Activation{Sides: []spi.Side{spi.Provider}}}}
}

// Tester19 finding 7 and the other tokens: a name the point's selection
// reads as something else is refused at Register: "default" for a filter,
// a bare number for the heartbeat, a name that is no URL scheme for the
// registry.
func TestT19_7_ReservedNamesAreRefused(t *testing.T) {
	c := bundled(t)
	err := c.Filter.Register(filterNamed("default"), "nu19/ext")
	if want := `filter: extension name "default" is reserved: in the "filter" list it stands for the activated filters`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("filter default: %v; want %q...", err, want)
	}
	err = c.Heartbeat.Register(&extensiontest.Heartbeat{Ext: extensiontest.Ext{ExtName: "60000"}}, "nu19/ext")
	if want := `heartbeat: extension name "60000" is reserved: a bare number in "heartbeat" selects the default heartbeat with heartbeat.interval in ms`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("heartbeat 60000: %v; want %q...", err, want)
	}
	for _, n := range []string{"map_reg", "9reg"} {
		err = c.Registry.Register(&extensiontest.Registry{Ext: extensiontest.Ext{ExtName: n}}, "nu19/ext")
		if err == nil || !strings.Contains(err.Error(), `registry: extension name "`+n+`" cannot be selected: it is chosen by URL scheme`) {
			t.Errorf("registry %s: %v", n, err)
		}
	}
	// Names near the reserved ones are fine.
	for _, err := range []error{
		c.Filter.Register(filterNamed("defaults"), "nu19/ext"),
		c.Filter.Register(filterNamed("acme.default"), "nu19/ext"),
		c.Heartbeat.Register(&extensiontest.Heartbeat{Ext: extensiontest.Ext{ExtName: "h60000"}}, "nu19/ext"),
		c.Registry.Register(&extensiontest.Registry{Ext: extensiontest.Ext{ExtName: "acme.map-reg2"}}, "nu19/ext"),
		c.LoadBalance.Register(&extensiontest.LoadBalance{Ext: extensiontest.Ext{ExtName: "default"}}, "nu19/ext"),
	} {
		if err != nil {
			t.Error(err)
		}
	}
	// "filter=default" still means the activated set.
	names, err := extension.FilterNames(c.Filter, spi.MustParse("airnode://h:1/s?filter=default"), spi.Provider, "")
	if err != nil || len(names) == 0 {
		t.Errorf("filter=default: %v, %v", names, err)
	}
}

type panicLB struct{ v any }

func (panicLB) Name() string                             { return "panicky" }
func (p panicLB) Build(spi.URL) (spi.LoadBalance, error) { panic(p.v) }

// Tester19 finding 3 (Build): extension.Build, the one place builders
// are called, turns a panic into a *PanicError naming the point and the
// extension, and names an error that does not name itself.
func TestT19_3_BuildTurnsAPanicIntoANamedError(t *testing.T) {
	u := spi.MustParse("airnode:///t.E")
	_, err := extension.Build(extension.PointLoadBalance, "panicky", func() (spi.LoadBalance, error) {
		return panicLB{"Build exploded"}.Build(u)
	})
	if want := `loadbalance "panicky": Build panicked: Build exploded`; err == nil || err.Error() != want {
		t.Fatalf("err = %v; want %q", err, want)
	}
	var pe *extension.PanicError
	if !errors.As(err, &pe) || pe.Point != "loadbalance" || pe.Name != "panicky" || !strings.Contains(string(pe.Stack), "panicLB.Build") {
		t.Errorf("PanicError = %+v", pe)
	}
	boom := errors.New("boom")
	_, err = extension.Build(extension.PointFilter, "f", func() (spi.Filter, error) { panic(boom) })
	if !errors.Is(err, boom) || err.Error() != `filter "f": Build panicked: boom` {
		t.Errorf("panic(error): %v", err)
	}
	_, err = extension.Build(extension.PointCluster, "c", func() (spi.Cluster, error) { panic(nil) })
	if !errors.As(err, &pe) {
		t.Errorf("panic(nil): %v", err)
	}
	// Errors: named once.
	pe2 := &spi.ParamError{Key: "pinger.every", Value: "1ms", Want: "10ms..1h"}
	_, err = extension.Build(extension.PointHeartbeat, "pinger", func() (spi.Heartbeat, error) { return nil, pe2 })
	if want := `heartbeat "pinger": ` + pe2.Error(); err == nil || err.Error() != want || !errors.Is(err, pe2) {
		t.Errorf("err = %v; want %q", err, want)
	}
	for _, self := range []string{"heartbeat idle: bad", "pinger: bad", "heartbeat"} {
		_, err = extension.Build(extension.PointHeartbeat, "pinger", func() (spi.Heartbeat, error) { return nil, errors.New(self) })
		if err == nil || err.Error() != self {
			t.Errorf("self-naming %q became %v", self, err)
		}
	}
	_, err = extension.Build(extension.PointHeartbeat, "ping", func() (spi.Heartbeat, error) { return nil, errors.New("pinger broke") })
	if err == nil || err.Error() != `heartbeat "ping": pinger broke` {
		t.Errorf("a prefix that is not the name as a word: %v", err)
	}
	if r, err := extension.Build(extension.PointLoadBalance, "ok", func() (int, error) { return 7, nil }); r != 7 || err != nil {
		t.Errorf("ok: %v, %v", r, err)
	}

	// Explain builds through it too: a panicking Build is an explanation's
	// error, not a crash of `airnode list --explain`.
	c := bundled(t)
	if err := c.LoadBalance.Register(panicLB{"Build exploded"}, "nu19/ext"); err != nil {
		t.Fatal(err)
	}
	e, err := c.Explain(spi.MustParse("airnode:///t.E?loadbalance=panicky"), nil)
	if err == nil || !strings.Contains(err.Error(), `loadbalance "panicky": Build panicked: Build exploded`) {
		t.Errorf("Explain: %v", err)
	}
	if e == nil {
		t.Error("Explain returned no explanation")
	}
}

// secretFilter declares one secret key and one plain key.
type secretFilter struct{ extensiontest.Filter }

func (secretFilter) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: "t19auth", Type: spi.KeyTypeString, Doc: "the caller's credential", Secret: true},
		{Key: "t19auth.user", Type: spi.KeyTypeString, Doc: "the caller's name"},
	}
}

// Tester19 finding 8: a key an extension declares Secret is hidden by
// URL.Redacted once the extension is registered, at service and method
// level; its other keys are not.
func TestT19_8_SecretKeyOfARegisteredExtensionIsRedacted(t *testing.T) {
	u := spi.MustParse("airnode://127.0.0.1:26030/t.Sec?t19auth=s3cret&Echo.t19auth=m3thod&t19auth.user=alice&t19authx=visible&token=tok")
	if spi.IsSecretKey("t19auth") {
		t.Fatal("t19auth secret before any extension declared it")
	}
	if err := spi.ValidateKeys(secretFilter{}.Keys()); err != nil {
		t.Fatal(err)
	}
	c := bundled(t)
	f := &secretFilter{extensiontest.Filter{Ext: extensiontest.Ext{ExtName: "acme.auth"}}}
	if err := c.Filter.Register(f, "nu19/ext"); err != nil {
		t.Fatal(err)
	}
	got := u.Redacted()
	for _, s := range []string{"s3cret", "m3thod", "tok"} {
		if strings.Contains(got, "="+s) {
			t.Errorf("Redacted shows %s: %s", s, got)
		}
	}
	for _, s := range []string{"t19auth=***", "Echo.t19auth=***", "t19auth.user=alice", "t19authx=visible", "token=***"} {
		if !strings.Contains(got, s) {
			t.Errorf("Redacted lacks %s: %s", s, got)
		}
	}
	var keys []spi.KeyDoc
	for _, p := range c.Describe() {
		for _, e := range p.Extensions {
			if e.Name == "acme.auth" {
				keys = e.Keys
			}
		}
	}
	if len(keys) != 2 || !keys[0].Secret || keys[1].Secret {
		t.Errorf("Describe keys of acme.auth: %+v", keys)
	}
}
