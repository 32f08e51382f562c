package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// t14Rec is tester14's gen.Rec (/tmp/nu14/gen), with a nested struct as
// their shop.Order has: the types a generic caller's JSON meets.
type t14Rec struct {
	B   []byte
	D   time.Duration
	T   time.Time
	TP  *time.Time
	MI  map[int]string
	P   *int
	U8  uint8
	I64 int64
	F32 float32
	Arr [2]string
	E   t14Kind
	In  *t14Item `json:"in"`
}

type t14Kind int

type t14Item struct {
	SKU     string    `json:"sku"`
	Qty     int64     `json:"qty"`
	Created time.Time `json:"created"`
	Data    []byte    `json:"data"`
}

// t14Gen is gen.Svc: Echo returns its argument and keeps what it
// received, Bytes the length of its argument.
type t14Gen struct {
	mu   sync.Mutex
	last t14Rec
}

func (g *t14Gen) Echo(_ context.Context, r t14Rec) (t14Rec, error) {
	g.mu.Lock()
	g.last = r
	g.mu.Unlock()
	return r, nil
}

func (g *t14Gen) received() t14Rec {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last
}

func (*t14Gen) Bytes(_ context.Context, b []byte) (int, error) { return len(b), nil }

// t14Named holds an interface with methods, which no codec can fill (a
// parameter of that type is not served at all: kernel's Export).
type t14Named struct{ Who fmt.Stringer }

func (*t14Gen) Who(_ context.Context, n t14Named) (string, error) { return fmt.Sprint(n.Who), nil }

// exportT14Gen exports a t14Gen on loopback in this process.
func exportT14Gen(t *testing.T) (*t14Gen, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	g := &t14Gen{}
	e, err := n.Export(ctx, g, spi.MustParse("airnode://127.0.0.1:0/t14.Gen"))
	if err != nil {
		t.Fatal(err)
	}
	return g, "airnode://" + e.URL().Address() + "/t14.Gen"
}

// sameT14 reports whether two received recs hold the same values: times
// the same instant with the same UTC offset.
func sameT14(a, b t14Rec) bool {
	sameTime := func(x, y time.Time) bool {
		_, ox := x.Zone()
		_, oy := y.Zone()
		return x.Equal(y) && ox == oy
	}
	if !sameTime(a.T, b.T) || (a.TP == nil) != (b.TP == nil) || (a.TP != nil && !sameTime(*a.TP, *b.TP)) ||
		(a.In == nil) != (b.In == nil) || (a.In != nil && !sameTime(a.In.Created, b.In.Created)) {
		return false
	}
	a.T, b.T, a.TP, b.TP = time.Time{}, time.Time{}, nil, nil
	if a.In != nil {
		ai, bi := *a.In, *b.In
		ai.Created, bi.Created = time.Time{}, time.Time{}
		a.In, b.In = &ai, &bi
	}
	return reflect.DeepEqual(a, b)
}

// Finding 2, end to end: `airnode call` with the same JSON reaches the
// provider as the same values under codec=msgpack (the default) and
// codec=json, and as encoding/json reads that JSON: a []byte given as a
// base64 string is its decoded bytes (msgpack stored the base64 text's
// bytes, silently), a time.Time or *time.Time inside a struct is RFC 3339
// (msgpack failed "invalid code=b4 decoding ext len"), a null time is the
// zero time (msgpack panicked), and a map[int]string takes "1" keys.
// What call prints is accepted back, and means the same again.
func TestT14_2_CallSendsTheSameValuesUnderEveryCodec(t *testing.T) {
	g, url := exportT14Gen(t)
	for _, js := range []string{
		`{"B":"aGk="}`,
		`{"T":"2026-11-30T07:00:00Z"}`,
		`{"TP":"2026-11-30T07:00:00Z"}`,
		`{"T":null,"TP":null,"in":null}`,
		`{"MI":{"1":"a","-2":"b"}}`,
		`{"P":3,"U8":255,"I64":-7,"F32":1.5,"Arr":["a","b"],"E":2,"D":1000000000}`,
		`{"in":{"sku":"a","qty":3,"created":"2026-11-30T06:00:00+01:00","data":"AAEC"}}`,
	} {
		var want t14Rec
		if err := json.Unmarshal([]byte(js), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", js, err)
		}
		printed := map[string]string{}
		for _, codec := range []string{"msgpack", "json"} {
			r := call(t, nil, url+"?codec="+codec, "Echo", js)
			if r.code != 0 {
				t.Errorf("%s, codec=%s: exit %d, stderr %q", js, codec, r.code, r.stderr)
				continue
			}
			if got := g.received(); !sameT14(got, want) {
				t.Errorf("%s, codec=%s: the provider received\n%+v\nwant (encoding/json's)\n%+v", js, codec, got, want)
			}
			printed[codec] = strings.TrimSpace(r.stdout)

			// What call printed, sent back, is received as the same values.
			if r := call(t, nil, url+"?codec="+codec, "Echo", printed[codec]); r.code != 0 {
				t.Errorf("%s, codec=%s: call's own output %s sent back: exit %d, stderr %q", js, codec, printed[codec], r.code, r.stderr)
			} else if got := g.received(); !sameInstants(got, want) {
				t.Errorf("%s, codec=%s: call's own output %s sent back was received as\n%+v\nwant\n%+v", js, codec, printed[codec], got, want)
			}
		}
	}

	for _, codec := range []string{"msgpack", "json"} {
		expectOK(t, call(t, nil, url+"?codec="+codec, "Bytes", `"aGVsbG8="`), "5")
	}
}

// sameInstants is sameT14 with times compared by instant only: call
// prints a msgpack timestamp in its own time zone (the timestamp carries
// none; see the codec's doc).
func sameInstants(a, b t14Rec) bool {
	norm := func(r *t14Rec) {
		r.T = r.T.UTC()
		if r.TP != nil {
			tp := r.TP.UTC()
			r.TP = &tp
		}
		if r.In != nil {
			in := *r.In
			in.Created = in.Created.UTC()
			r.In = &in
		}
	}
	norm(&a)
	norm(&b)
	return sameT14(a, b)
}

// Finding 2's messages: what the parameter's type cannot take is a
// BAD_REQUEST naming the field path and what was sent, under msgpack as
// under json, never a msgpack opcode or "msgpack panicked: reflect...".
func TestT14_2_CallMismatchNamesTheField(t *testing.T) {
	_, url := exportT14Gen(t)
	cases := []struct {
		method, arg string
		msgpack     string // the message under msgpack
	}{
		{"Echo", `{"in":{"sku":"a","qty":"3"}}`,
			`t14.Gen.Echo argument 0 (cli.t14Rec), at in.qty: want an integer, got a string ("3")`},
		{"Echo", `{"T":"yesterday"}`,
			`t14.Gen.Echo argument 0 (cli.t14Rec), at T: want an RFC 3339 time`},
		{"Echo", `{"B":"not base64!"}`,
			`t14.Gen.Echo argument 0 (cli.t14Rec), at B: want base64`},
		{"Echo", `{"MI":{"one":"a"}}`,
			`t14.Gen.Echo argument 0 (cli.t14Rec), at MI: want an object of string values, got a map ({"one":"a"}), key "one" is not a decimal int`},
		{"Bytes", `"aGk"`, `t14.Gen.Bytes argument 0 ([]byte): want base64`},
		{"Who", `{"Who":"bob"}`,
			`t14.Gen.Who argument 0 (cli.t14Named), at Who: want a value of fmt.Stringer, got a string ("bob"), fmt.Stringer is an interface with methods`},
	}
	for _, c := range cases {
		for _, codec := range []string{"msgpack", "json"} {
			r := call(t, nil, url+"?codec="+codec, c.method, c.arg)
			if r.code != 1 || !strings.HasPrefix(r.stderr, "BAD_REQUEST: ") {
				t.Errorf("%s %s, codec=%s: exit %d, stdout %q, stderr %q; want BAD_REQUEST", c.method, c.arg, codec, r.code, r.stdout, r.stderr)
				continue
			}
			if strings.Contains(r.stderr, "panicked") || strings.Contains(r.stderr, "reflect") || strings.Contains(r.stderr, "invalid code") {
				t.Errorf("%s %s, codec=%s: %q leaks the codec's internals", c.method, c.arg, codec, r.stderr)
			}
			if codec == "msgpack" && !strings.HasPrefix(r.stderr, "BAD_REQUEST: "+c.msgpack) {
				t.Errorf("%s %s: stderr %q\nwant it to start BAD_REQUEST: %s", c.method, c.arg, r.stderr, c.msgpack)
			}
		}
	}
}

// Reference.Invoke with map arguments (a Go gateway's generic call) gives
// the provider the same values under both codecs: strings for []byte and
// time.Time mean base64 and RFC 3339.
func TestT14_2_InvokeWithMapsUnderEveryCodec(t *testing.T) {
	g, url := exportT14Gen(t)
	arg := map[string]any{"B": "aGk=", "T": "2026-11-30T07:00:00+02:00", "MI": map[string]any{"7": "x"},
		"in": map[string]any{"sku": "a", "qty": 3, "created": "2026-01-02T03:04:05Z", "data": "AAEC"}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var first t14Rec
	for i, codec := range []string{"msgpack", "json"} {
		ref := refer(t, url+"?codec="+codec)
		if _, err := ref.Invoke(ctx, "Echo", arg); err != nil {
			t.Fatalf("codec=%s: %v", codec, err)
		}
		got := g.received()
		if !bytes.Equal(got.B, []byte("hi")) || got.T.Format(time.RFC3339) != "2026-11-30T07:00:00+02:00" || got.MI[7] != "x" ||
			got.In == nil || !bytes.Equal(got.In.Data, []byte{0, 1, 2}) || !got.In.Created.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
			t.Errorf("codec=%s: the provider received %+v", codec, got)
		}
		if i == 0 {
			first = got
		} else if !sameT14(first, got) {
			t.Errorf("msgpack and json gave the provider different values:\n%+v\n%+v", first, got)
		}
	}
}
