package msgpack_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
)

// rec is tester14's gen.Rec: the types a generic caller's JSON meets.
type rec struct {
	B   []byte
	D   time.Duration
	T   time.Time
	TP  *time.Time
	MI  map[int]string
	MU  map[uint8]int
	P   *int
	U8  uint8
	I64 int64
	F32 float32
	Arr [2]string
	E   recKind
	Any any
	Bl  recBlob
	In  *recInner
	Ts  []time.Time
}

type recKind int

type recBlob []byte

type recInner struct {
	At   time.Time
	Data []byte
}

// generic returns what a generic caller sends for the JSON text js:
// `airnode call` decodes it with UseNumber and sends integers as int64,
// other numbers as float64, strings as strings.
func generic(t *testing.T, js string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(js))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var fix func(any) any
	fix = func(v any) any {
		switch v := v.(type) {
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
			f, _ := v.Float64()
			return f
		case map[string]any:
			for k, e := range v {
				v[k] = fix(e)
			}
		case []any:
			for i, e := range v {
				v[i] = fix(e)
			}
		}
		return v
	}
	return fix(v)
}

// viaMsgpack encodes x with this codec and decodes it into target as the
// provider decodes a generic call's argument (DisallowUnknownFields,
// GenericArguments, a body in memory).
func viaMsgpack(t *testing.T, x, target any) error {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.Codec{}.NewEncoder(&buf)
	if err := enc.Encode(x); err != nil {
		t.Fatal(err)
	}
	spi.Release(enc)
	dec := msgpack.Codec{}.NewDecoder(bytes.NewReader(buf.Bytes()))
	defer spi.Release(dec)
	dec.(*msgpack.Decoder).DisallowUnknownFields()
	dec.(*msgpack.Decoder).GenericArguments()
	return dec.Decode(target)
}

// sameRec compares two recs, times by instant and offset.
func sameRec(a, b rec) bool {
	ta, tb := a.T, b.T
	a.T, b.T = time.Time{}, time.Time{}
	tpa, tpb := a.TP, b.TP
	a.TP, b.TP = nil, nil
	ia, ib := a.In, b.In
	a.In, b.In = nil, nil
	tsa, tsb := a.Ts, b.Ts
	a.Ts, b.Ts = nil, nil
	sameTime := func(x, y time.Time) bool {
		_, ox := x.Zone()
		_, oy := y.Zone()
		return x.Equal(y) && ox == oy
	}
	if !sameTime(ta, tb) || (tpa == nil) != (tpb == nil) || (tpa != nil && !sameTime(*tpa, *tpb)) ||
		(ia == nil) != (ib == nil) || len(tsa) != len(tsb) {
		return false
	}
	if ia != nil && (!sameTime(ia.At, ib.At) || !bytes.Equal(ia.Data, ib.Data)) {
		return false
	}
	for i := range tsa {
		if !sameTime(tsa[i], tsb[i]) {
			return false
		}
	}
	return reflect.DeepEqual(a, b)
}

// Finding 2: generic JSON (`airnode call`, Reference.Invoke with maps)
// means under msgpack what encoding/json makes of it: a string into a
// []byte is base64 (it was the base64 text's bytes, silently), a string
// into a time.Time or *time.Time at any depth is RFC 3339 (it failed
// "invalid code=b4 decoding ext len"), a nil into a time field is the
// zero time (it panicked inside msgpack), and a map[int]V's keys are
// decimal strings (they failed "invalid code=a1 decoding int64").
func TestT14_2_GenericJSONMeansWhatJSONMeans(t *testing.T) {
	for _, js := range []string{
		`{"B":"aGk="}`,
		`{"B":"aGVsbG8=","Bl":"AAEC"}`,
		`{"B":""}`,
		`{"B":[104,105]}`,
		`{"B":null}`,
		`{"T":"2026-11-30T07:00:00Z"}`,
		`{"T":"2026-11-30T06:00:00.123456789+01:00"}`,
		`{"TP":"2026-11-30T07:00:00Z"}`,
		`{"T":null,"TP":null}`,
		`{"MI":{"1":"a","-2":"b"}}`,
		`{"MU":{"255":1}}`,
		`{"In":{"At":"2026-11-30T07:00:00-05:00","Data":"aGk="}}`,
		`{"In":null}`,
		`{"Ts":["2026-01-01T00:00:00Z","2026-01-02T00:00:00+09:00"]}`,
		`{"P":3,"U8":255,"I64":-7,"F32":1.5,"Arr":["a","b"],"E":2,"D":1000000000}`,
		`{"Arr":["a"]}`,
		`{}`,
	} {
		var want rec
		if err := json.Unmarshal([]byte(js), &want); err != nil {
			t.Fatalf("%s: encoding/json: %v", js, err)
		}
		var got rec
		if err := viaMsgpack(t, generic(t, js), &got); err != nil {
			t.Errorf("%s: msgpack: %v", js, err)
			continue
		}
		if !sameRec(got, want) {
			t.Errorf("%s:\nmsgpack %+v\njson    %+v", js, got, want)
		}
	}
}

// A Go consumer's typed values (binary, the timestamp extension, integer
// keys, nil pointers) still decode as they did.
func TestT14_2_TypedValuesUnchanged(t *testing.T) {
	at := time.Date(2026, 11, 30, 7, 0, 0, 123456789, time.UTC)
	n := 5
	sent := rec{B: []byte("hi"), T: at, TP: &at, MI: map[int]string{-1: "a", 7: "b"}, MU: map[uint8]int{200: 1},
		P: &n, U8: 200, Bl: recBlob{0, 1}, In: &recInner{At: at, Data: []byte{}}, Ts: []time.Time{at, {}}, Arr: [2]string{"x", "y"}}
	var got rec
	if err := viaMsgpack(t, sent, &got); err != nil {
		t.Fatal(err)
	}
	sent.T, sent.TP, sent.In.At, sent.Ts[0] = at.Local(), ptr(at.Local()), at.Local(), at.Local()
	if !got.T.Equal(at) || !got.TP.Equal(at) || !bytes.Equal(got.B, sent.B) || !reflect.DeepEqual(got.MI, sent.MI) ||
		!reflect.DeepEqual(got.MU, sent.MU) || *got.P != 5 || got.U8 != 200 || !bytes.Equal(got.Bl, sent.Bl) ||
		!got.In.At.Equal(at) || got.In.Data == nil || !got.Ts[0].Equal(at) || !got.Ts[1].IsZero() || got.Arr != sent.Arr {
		t.Errorf("round trip:\ngot  %+v\nsent %+v", got, sent)
	}

	// A reply variable reused: binary goes into the slice's own storage when
	// it has room, as msgpack's decoder did.
	var buf bytes.Buffer
	enc := msgpack.Codec{}.NewEncoder(&buf)
	if err := enc.Encode([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	reused := make([]byte, 0, 8)
	first := &reused[:1][0]
	dec := msgpack.Codec{}.NewDecoder(bytes.NewReader(buf.Bytes()))
	if err := dec.Decode(&reused); err != nil || string(reused) != "abc" || &reused[0] != first {
		t.Errorf("binary into a []byte with room: %q, %v (same storage: %v)", reused, err, &reused[0] == first)
	}
}

func ptr[T any](v T) *T { return &v }

// What a generic caller sends that its type cannot take is a BAD_REQUEST
// naming the field path and what was sent (spi.TypeMismatch), never a
// msgpack opcode or a reflect panic.
func TestT14_2_NestedMismatchNamesThePath(t *testing.T) {
	type item struct {
		SKU string `json:"sku"`
		Qty int64  `json:"qty"`
	}
	type order struct {
		ID      string    `json:"id"`
		Items   []item    `json:"items"`
		Created time.Time `json:"created"`
		Tags    map[int]string
		Who     fmt.Stringer
		Arr     [2]string
		Small   uint8
	}
	cases := []struct {
		js, got string
	}{
		{`{"id":"o1","items":[{"sku":"a","qty":"3"}]}`, `a map with order.items[0].qty: cannot decode into int64: got a string ("3")`},
		{`{"created":"yesterday"}`, `a map with order.created: cannot decode into time.Time: got a string ("yesterday"), want an RFC 3339 time`},
		{`{"created":12}`, `a map with order.created: cannot decode into time.Time: got an integer (12), want an RFC 3339 time or a timestamp`},
		{`{"Tags":{"x":"a"}}`, `a map with order.Tags: cannot decode into map[int]string: got a map ({"x":"a"}), key "x" is not a decimal int`},
		{`{"Who":"bob"}`, `a map with order.Who: cannot decode into fmt.Stringer: got a string ("bob"), fmt.Stringer is an interface with methods`},
		{`{"Arr":["a","b","c"]}`, `a map with order.Arr: cannot decode into [2]string: got an array (["a","b","c"]), longer than [2]string (3 elements)`},
		{`{"Small":256}`, `a map with order.Small: cannot decode into uint8: got an integer (256), out of range 0..255`},
	}
	for _, c := range cases {
		err := viaMsgpack(t, generic(t, c.js), new(order))
		var tm spi.TypeMismatch
		if !errors.As(err, &tm) || !strings.HasPrefix(tm.Got(), c.got) {
			t.Errorf("%s: %v\nwant Got() starting %s", c.js, err, c.got)
		}
		if err != nil && (strings.Contains(err.Error(), "panicked") || strings.Contains(err.Error(), "reflect")) {
			t.Errorf("%s: %v leaks msgpack's internals", c.js, err)
		}
	}

	// The same at the top of a Decode: the value itself.
	for _, c := range []struct {
		x      any
		target any
		got    string
	}{
		{"aGk", new([]byte), `a string ("aGk"), want base64`},
		{"noon", new(time.Time), `a string ("noon"), want an RFC 3339 time`},
		{"x", new(fmt.Stringer), `a string ("x"), fmt.Stringer is an interface with methods`},
		{map[string]any{"fields": map[string]any{"a": map[string]any{"Kind": map[string]any{"NumberValue": 1.0}}}},
			new(*structpb.Struct), `a map ({"fields":{"a":{"Kind":{"NumberValue":1}…), a protobuf message`},
	} {
		err := viaMsgpack(t, c.x, c.target)
		var tm spi.TypeMismatch
		if !errors.As(err, &tm) || !strings.HasPrefix(tm.Got(), c.got) {
			t.Errorf("%v into %T: %v\nwant Got() starting %s", c.x, c.target, err, c.got)
		}
		if err != nil && (strings.Contains(err.Error(), "panicked") || strings.Contains(err.Error(), "reflect")) {
			t.Errorf("%v into %T: %v leaks msgpack's internals", c.x, c.target, err)
		}
	}
}

// Finding 7, where the codecs still differ, as the package doc says. A
// Go array sent more elements than it holds is an error naming it (json
// drops the extra ones); sent fewer, the rest stay zero in both.
func TestT14_7_FixedArrayLengths(t *testing.T) {
	type arr struct{ A [2]string }
	var got arr
	err := viaMsgpack(t, generic(t, `{"A":["a","b","c"]}`), &got)
	var pe *msgpack.PathError
	if !errors.As(err, &pe) || pe.Inner() != `arr.A: cannot decode into [2]string: got an array (["a","b","c"]), longer than [2]string (3 elements)` {
		t.Errorf(`{"A":["a","b","c"]} into [2]string: %v, want a *PathError naming arr.A`, err)
	}
	got = arr{}
	if err := viaMsgpack(t, generic(t, `{"A":["a"]}`), &got); err != nil || got.A != [2]string{"a", ""} {
		t.Errorf(`{"A":["a"]} into [2]string: %q, %v; want [a ""]`, got.A, err)
	}
	var j arr
	if err := json.Unmarshal([]byte(`{"A":["a","b","c"]}`), &j); err != nil || j.A != [2]string{"a", "b"} {
		t.Errorf("encoding/json no longer truncates (%q, %v): make the codecs agree", j.A, err)
	}
}

// An embedded struct's fields are read inline ({"ID":1}), as json reads
// them; msgpack also takes the embedded struct by its type's name.
func TestT14_7_EmbeddedStructShapes(t *testing.T) {
	type Base struct{ ID int }
	type user struct {
		Base
		Name string
	}
	for _, js := range []string{`{"ID":1,"Name":"a"}`, `{"id":1,"Name":"a"}`, `{"Base":{"ID":1},"Name":"a"}`} {
		var got user
		if err := viaMsgpack(t, generic(t, js), &got); err != nil || got.ID != 1 || got.Name != "a" {
			t.Errorf("%s: %+v, %v; want ID 1", js, got, err)
		}
	}
}

// msgpack's timestamp carries the instant, not the zone: a time sent
// with an offset arrives equal, in time.Local. A string a generic caller
// sends keeps its offset.
func TestT14_7_TimeZoneIsNotCarried(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
	var got time.Time
	if err := viaMsgpack(t, &at, &got); err != nil || !got.Equal(at) || got.Location() != time.Local {
		t.Errorf("typed %v: %v (%v), %v; want the same instant in Local", at, got, got.Location(), err)
	}
	var s time.Time
	if err := viaMsgpack(t, at.Format(time.RFC3339Nano), &s); err != nil || !s.Equal(at) || s.Format(time.RFC3339Nano) != at.Format(time.RFC3339Nano) {
		t.Errorf("string %s: %v, %v; want its offset kept", at.Format(time.RFC3339Nano), s, err)
	}
}
