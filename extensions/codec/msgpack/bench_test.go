package msgpack_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func BenchmarkRequest(b *testing.B) { spitest.BenchmarkCodec(b, msgpack.Codec{}) }

// BenchmarkEncoder prices NewEncoder, one Encode of a 100-byte string into a
// reused buffer, and Release ("released", pooled) against the same without
// Release ("unreleased": a new encoder per body, as before pooling).
//
//	go test -run '^$' -bench 'Encoder|Decoder' -benchmem -count 6 ./extensions/codec/msgpack
func BenchmarkEncoder(b *testing.B) {
	var arg any = strings.Repeat("a", 100) // boxed once: the caller's cost, not the codec's
	for _, release := range []bool{true, false} {
		b.Run(variant(release), func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				enc := msgpack.Codec{}.NewEncoder(&buf)
				if err := enc.Encode(arg); err != nil {
					b.Fatal(err)
				}
				if release {
					spi.Release(enc)
				}
			}
		})
	}
}

// BenchmarkDecoder prices NewDecoder over a *bytes.Reader, one Decode of a
// 100-byte string into a *string and into a *any, and Release, against the
// same without Release.
func BenchmarkDecoder(b *testing.B) {
	var body bytes.Buffer
	if err := (msgpack.Codec{}).NewEncoder(&body).Encode(strings.Repeat("a", 100)); err != nil {
		b.Fatal(err)
	}
	for _, target := range []string{"string", "any"} {
		for _, release := range []bool{true, false} {
			b.Run(target+"/"+variant(release), func(b *testing.B) {
				var (
					r bytes.Reader
					s string
					v any
				)
				p := any(&s)
				if target == "any" {
					p = &v
				}
				b.ReportAllocs()
				for b.Loop() {
					r.Reset(body.Bytes())
					dec := msgpack.Codec{}.NewDecoder(&r)
					if err := dec.Decode(p); err != nil {
						b.Fatal(err)
					}
					if release {
						spi.Release(dec)
					}
				}
			})
		}
	}
}

func variant(release bool) string {
	if release {
		return "released"
	}
	return "unreleased"
}

// intReply is a reply with integer fields of every width, as a Go
// consumer's struct.
type intReply struct {
	A int8
	B uint16
	C int32
	D int64
	E uint64
}

// BenchmarkDecoderInts prices NewDecoder, one Decode of integers and
// Release: an int64 (1<<40) into a *int64, 100 into a *int8, and a struct
// of five integer fields; the range check on every integer is inside.
//
//	go test -run '^$' -bench DecoderInts -benchmem -count 6 ./extensions/codec/msgpack
func BenchmarkDecoderInts(b *testing.B) {
	var i64 int64
	var i8 int8
	var st intReply
	cases := []struct {
		name   string
		value  any
		target any
	}{
		{"int64", int64(1) << 40, &i64},
		{"int8", int8(100), &i8},
		{"struct", intReply{A: -100, B: 60000, C: -1 << 30, D: 1 << 50, E: 1 << 63}, &st},
	}
	for _, c := range cases {
		benchDecode(b, c.name, c.value, c.target)
	}
}

// BenchmarkCheckCycles prices the cycle check Encode makes before msgpack
// encodes (cycles.go), alone: a string and a flat struct (a type switch,
// a type comparison and a map lookup: not walked), a map[string]any of 10
// scalars (walked by type switch), a 10-long and a 2,000-long list of
// *Node2 (walked by reflect; beyond 1,000 steps every pointer goes into a
// map), and, for scale, Encode of the 10-long list with the check inside.
//
//	go test -run '^$' -bench CheckCycles -benchmem ./extensions/codec/msgpack
func BenchmarkCheckCycles(b *testing.B) {
	generic := map[string]any{}
	for i := range 10 {
		generic[strings.Repeat("k", i+1)] = int64(i)
	}
	cases := []struct {
		name  string
		value any
	}{
		{"string", "hello"},
		{"flat-struct", intReply{A: 1}},
		{"map10", generic},
		{"list10", list(10)},
		{"list2000", list(2000)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := msgpack.CheckCycles(c.value, "json"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("encode-list10", func(b *testing.B) {
		v := any(list(10))
		var buf bytes.Buffer
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			enc := msgpack.Codec{}.NewEncoder(&buf)
			if err := enc.Encode(v); err != nil {
				b.Fatal(err)
			}
			spi.Release(enc)
		}
	})
}

// typedReply is a Go consumer's struct with the types a generic caller
// sends as JSON strings (jsonforms.go): binary, a timestamp, a pointer to
// one, a map with integer keys.
type typedReply struct {
	B  []byte
	T  time.Time
	TP *time.Time
	MI map[int]string
	S  string
}

// BenchmarkDecoderTyped prices NewDecoder, one Decode and Release of what
// a Go consumer sends (binary, the timestamp extension, integer keys): a
// 100-byte []byte into a *[]byte, a time.Time into a *time.Time, and a
// typedReply; the peek that tells a generic caller's strings apart is
// inside.
//
//	go test -run '^$' -bench DecoderTyped -benchmem -count 6 ./extensions/codec/msgpack
func BenchmarkDecoderTyped(b *testing.B) {
	at := time.Date(2026, 11, 30, 7, 0, 0, 123456789, time.UTC)
	var (
		bs []byte
		tm time.Time
		st typedReply
	)
	cases := []struct {
		name   string
		value  any
		target any
	}{
		{"bytes", bytes.Repeat([]byte("a"), 100), &bs},
		{"time", at, &tm},
		{"struct", typedReply{B: []byte("hello"), T: at, TP: &at, MI: map[int]string{1: "a", 2: "b"}, S: "s"}, &st},
	}
	for _, c := range cases {
		benchDecode(b, c.name, c.value, c.target)
	}
}

// benchDecode runs sub-benchmark name: value encoded once, then decoded
// into target with a pooled decoder per iteration, as the exchange does.
func benchDecode(b *testing.B, name string, value, target any) {
	var body bytes.Buffer
	if err := (msgpack.Codec{}).NewEncoder(&body).Encode(value); err != nil {
		b.Fatal(err)
	}
	b.Run(name, func(b *testing.B) {
		var r bytes.Reader
		b.ReportAllocs()
		for b.Loop() {
			r.Reset(body.Bytes())
			dec := msgpack.Codec{}.NewDecoder(&r)
			if err := dec.Decode(target); err != nil {
				b.Fatal(err)
			}
			spi.Release(dec)
		}
	})
}
