package bundle_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// built is one bundled extension: its point, name, declared keys (nil
// when its builder is no spi.KeyDescriber) and its Build over a base URL
// good for it.
type built struct {
	point, name string
	pkg         string // import path of the builder's package
	keys        []spi.KeyDoc
	described   bool
	base        spi.URL
	build       func(spi.URL) error
}

// keysOf returns x's declared keys, and whether x declares any.
func keysOf(x any) ([]spi.KeyDoc, bool) {
	d, ok := x.(spi.KeyDescriber)
	if !ok {
		return nil, false
	}
	return d.Keys(), true
}

// bundled lists every bundled extension with a Build (codecs have none).
func bundled(t *testing.T) []built {
	t.Helper()
	c := bundle.Catalogs()
	svc := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo")
	var out []built
	add := func(point, name string, x any, base spi.URL, build func(spi.URL) error) {
		keys, ok := keysOf(x)
		typ := reflect.TypeOf(x)
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		out = append(out, built{point: point, name: name, pkg: typ.PkgPath(), keys: keys, described: ok, base: base, build: build})
	}
	for _, n := range c.Transport.Names() {
		x, _ := c.Transport.Get(n)
		add(extension.PointTransport, n, x, svc, func(u spi.URL) error { _, err := x.Build(u); return err })
	}
	regBase := map[string]spi.URL{
		"file":      spi.MustParse("file:///tmp/airnode-keys-test"),
		"zookeeper": spi.MustParse("zookeeper://127.0.0.1:2181"),
		"direct":    spi.MustParse("direct://127.0.0.1:20880"),
		"memory":    spi.MustParse("memory://"),
	}
	for _, n := range c.Registry.Names() {
		x, _ := c.Registry.Get(n)
		add(extension.PointRegistry, n, x, regBase[n], func(u spi.URL) error { _, err := x.Build(u); return err })
	}
	for _, n := range c.LoadBalance.Names() {
		x, _ := c.LoadBalance.Get(n)
		add(extension.PointLoadBalance, n, x, svc, func(u spi.URL) error { _, err := x.Build(u); return err })
	}
	for _, n := range c.Cluster.Names() {
		x, _ := c.Cluster.Get(n)
		add(extension.PointCluster, n, x, svc, func(u spi.URL) error { _, err := x.Build(u); return err })
	}
	for _, n := range c.Heartbeat.Names() {
		x, _ := c.Heartbeat.Get(n)
		add(extension.PointHeartbeat, n, x, svc, func(u spi.URL) error { _, err := x.Build(u); return err })
	}
	// Filters: a side, and the keys that activate accesslog and
	// threadlimit, whose Build refuses their absence.
	fbase := svc.WithParams(map[string]string{spi.KeySide: "provider", "accesslog": "false", "threads": "8"})
	for _, n := range c.Filter.Names() {
		x, _ := c.Filter.Get(n)
		add(extension.PointFilter, n, x, fbase, func(u spi.URL) error { _, err := x.Build(u); return err })
	}
	for _, n := range c.Codec.Names() {
		x, _ := c.Codec.Get(n)
		if _, ok := keysOf(x); ok {
			t.Errorf("codec %s declares keys, but a codec has no Build to read them", n)
		}
	}
	return out
}

// noKeys are the bundled extensions that read no URL key of their own
// ("side", set by the kernel, is the kernel's), so need not declare any.
var noKeys = []string{"cluster/failfast", "cluster/failsafe", "registry/memory", "filter/metrics"}

// TestBundledExtensionsDeclareTheirKeys: every bundled builder that reads
// keys declares them (spi.KeyDescriber); each declaration passes
// spi.ValidateKeys (non-empty, unique, known type, a Default that parses
// as its Type, one line of doc), and Build accepts every key at its
// declared default.
func TestBundledExtensionsDeclareTheirKeys(t *testing.T) {
	for _, b := range bundled(t) {
		id := b.point + "/" + b.name
		if !b.described || len(b.keys) == 0 {
			if !slices.Contains(noKeys, id) {
				t.Errorf("%s declares no keys (spi.KeyDescriber)", id)
			}
			continue
		}
		if slices.Contains(noKeys, id) {
			t.Errorf("%s declares keys but is listed in noKeys", id)
		}
		if err := spi.ValidateKeys(b.keys); err != nil {
			t.Errorf("%s: %v", id, err)
		}
		if err := b.build(b.base); err != nil {
			t.Fatalf("%s: base URL %s: %v", id, b.base, err)
		}
		for _, k := range b.keys {
			if k.Default == "" {
				continue
			}
			if err := b.build(b.base.With(k.Key, k.Default)); err != nil {
				t.Errorf("%s: %s=%s (the declared default) refused: %v", id, k.Key, k.Default, err)
			}
		}
	}
}

// refused are values the Build of each declaring extension refuses for a
// key whose type has no malformed form (string, path): proof that Build
// reads the key.
var refused = map[string]string{
	"tls.cert":              "x.pem", // without tls=true
	"tls.key":               "x.pem",
	"tls.ca":                "ca.pem",
	"tls.servername":        "h",
	"tls.client.names":      "a.example", // without tls=true and tls.ca
	"root":                  "a/b",
	"backup":                "h2:2l81",
	"protocol":              "",
	"accesslog":             "",
	"token":                 "",
	"accesslog.attachments": "token",
	"retry.ratio":           "2", // failover's retry budget: a decimal in (0, 1]
}

// notCheckedByBuild are declared keys Build does not validate, and why.
var notCheckedByBuild = map[string]string{
	"weight":     "a provider key, read from each provider URL at Select (checked at export)",
	"warmup":     "a provider key, read from each provider URL at Select (checked at export)",
	"timestamp":  "a provider key, set at export and read at Select",
	"file.cache": "any path; the file is read on first use",
}

// TestDeclaredKeysAreRead: every key a bundled builder declares is one its
// Build reads: a malformed value (for typed keys) or a value Build must
// refuse (refused) makes Build fail naming the key, unless the key is in
// notCheckedByBuild.
func TestDeclaredKeysAreRead(t *testing.T) {
	for _, b := range bundled(t) {
		id := b.point + "/" + b.name
		for _, k := range b.keys {
			bad, ok := refused[k.Key]
			switch {
			case notCheckedByBuild[k.Key] != "":
				continue
			case ok:
			case k.Type == spi.KeyTypeString || k.Type == spi.KeyTypePath:
				t.Errorf("%s: key %q (%s) is neither in refused nor in notCheckedByBuild", id, k.Key, k.Type)
				continue
			default:
				bad = "x!"
			}
			err := b.build(b.base.With(k.Key, bad))
			if err == nil || !strings.Contains(err.Error(), k.Key) {
				t.Errorf("%s: Build with %s=%q: %v, want an error naming %s", id, k.Key, bad, err, k.Key)
			}
		}
	}
}

// TestDeclaredKeysAreDocumented: every key a bundled builder declares is
// named in its package's doc.go (the contract a reader looks at first),
// so declarations and doc do not drift apart.
func TestDeclaredKeysAreDocumented(t *testing.T) {
	const module = "github.com/airnode/airnode/"
	for _, b := range bundled(t) {
		if len(b.keys) == 0 {
			continue
		}
		rel, ok := strings.CutPrefix(b.pkg, module)
		if !ok {
			t.Fatalf("%s/%s: package %s outside the module", b.point, b.name, b.pkg)
		}
		doc, err := os.ReadFile(filepath.Join("..", "..", rel, "doc.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range b.keys {
			if !regexp.MustCompile(`(^|[^\w.])` + regexp.QuoteMeta(k.Key) + `($|[^\w.])`).Match(doc) {
				t.Errorf("%s/%s: key %q is declared but %s/doc.go does not name it", b.point, b.name, k.Key, rel)
			}
		}
	}
}
