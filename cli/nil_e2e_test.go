package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// nilService is nil.Svc of testdata/nilplugin, exported by the kernel in
// process.
type nilService struct{}

func (nilService) Strings(context.Context) ([]string, error)         { return nil, nil }
func (nilService) EmptyStrings(context.Context) ([]string, error)    { return []string{}, nil }
func (nilService) Map(context.Context) (map[string]int, error)       { return nil, nil }
func (nilService) EmptyMap(context.Context) (map[string]int, error)  { return map[string]int{}, nil }
func (nilService) Record(context.Context) (nilRecord, error)         { return nilRecord{}, nil }
func (nilService) IsNil(_ context.Context, s []string) (bool, error) { return s == nil, nil }

// nilRecord is nilplugin's Record.
type nilRecord struct {
	Tags  []string
	Attrs map[string]string
}

// A tester reported that msgpack turned nil slices and maps into empty
// ones end to end, though the codec alone keeps nil. Into fresh variables
// it did not: a nil []string or map returned by a service — a service
// plugin served by `airnode serve` (sdk), or a Go value the kernel
// exports — reached `airnode call` as null and a Go consumer as nil, and
// a nil argument reached the method as nil. But a Go consumer's reply
// that held a value — made empty up front ([]string{}), or reused from
// an earlier call — kept it when the result was nil: msgpack's []string
// decoding returns on a nil without touching its target (a top-level
// *[]string, or a []string field of a reply struct). Now a nil sets the
// reply to nil as json's null does, with both codecs.
func TestE2E_NilSlicesAndMapsStayNil(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	plugin := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/nilplugin")
	if err := os.WriteFile(cfg, []byte("plugins:\n  - {name: nil, point: service, command: "+plugin+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "127.0.0.1:0", dir, "--config", cfg)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prov := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = prov.Close() })
	exp, err := prov.Export(ctx, nilService{}, spi.MustParse("airnode://127.0.0.1:0/nil.Svc"))
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []struct{ name, url string }{
		{"plugin", p.url("nil.Svc")},
		{"kernel export", "airnode://" + exp.URL().Address() + "/nil.Svc"},
	} {
		for _, codec := range []string{"msgpack", "json"} {
			u := target.url + "?codec=" + codec
			for method, want := range map[string]string{"Strings": "null", "Map": "null", "EmptyStrings": "[]", "EmptyMap": "{}",
				"Record": `{"Attrs":null,"Tags":null}`} {
				if r := call(t, nil, u, method); r.code != 0 || r.stdout != want+"\n" {
					t.Errorf("%s, %s: airnode call %s: exit %d, stdout %q, stderr %q; want %s", target.name, codec, method, r.code, r.stdout, r.stderr, want)
				}
			}
			if r := call(t, nil, u, "IsNil", "null"); r.stdout != "true\n" {
				t.Errorf("%s, %s: airnode call IsNil null: %q %q, want true", target.name, codec, r.stdout, r.stderr)
			}
			ref := refer(t, u)
			var s, empty []string
			var m, emptyMap map[string]int
			var isNil bool
			// Replies that hold values before the call (reused, or made
			// empty up front): a nil result makes them nil.
			rec := nilRecord{Tags: []string{"x"}, Attrs: map[string]string{"x": "y"}}
			s, m = []string{}, map[string]int{}
			for _, c := range []struct {
				method string
				args   []any
				reply  any
			}{
				{"Strings", nil, &s}, {"EmptyStrings", nil, &empty}, {"Map", nil, &m}, {"EmptyMap", nil, &emptyMap},
				{"IsNil", []any{[]string(nil)}, &isNil}, {"Record", nil, &rec},
			} {
				if err := ref.Call(ctx, c.method, c.args, c.reply); err != nil {
					t.Fatalf("%s, %s: %s: %v", target.name, codec, c.method, err)
				}
			}
			if s != nil || m != nil || empty == nil || len(empty) != 0 || emptyMap == nil || len(emptyMap) != 0 || !isNil || rec.Tags != nil || rec.Attrs != nil {
				t.Errorf("%s, %s: Go consumer got Strings %#v, Map %#v, EmptyStrings %#v, EmptyMap %#v, IsNil(nil) %v, Record %#v; want nil, nil, empty, empty, true, nil fields",
					target.name, codec, s, m, empty, emptyMap, isNil, rec)
			}
			if v, err := ref.Invoke(ctx, "Strings"); err != nil || v != nil {
				t.Errorf("%s, %s: Invoke Strings = %#v, %v; want nil", target.name, codec, v, err)
			}
		}
	}
}
