package spitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/airnode/airnode/spi"
)

// CodecPerson is the struct the codec suite round-trips into a typed
// pointer: exported fields with json tags, as service argument and result
// types usually have.
type CodecPerson struct {
	Name  string            `json:"name"`
	Age   int               `json:"age"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs"`
	Photo []byte            `json:"photo"`
}

// TestCodec runs the codec conformance suite against c.
//
// Every codec must round-trip the basic shapes — strings, ints, bools, nil,
// map[string]string (a nil map reads back as an empty or nil map) — and
// sequences of them in one stream (a request's arguments; the exchange
// writes the request and response preamble itself, kernel/protocol). The
// argument shapes — []byte, float64, nested generic values
// (map[string]any, []any), a struct read back into a typed pointer — must
// round-trip or be refused at Encode with an *spi.Error of status
// SERIALIZATION_ERROR (a codec such as protobuf accepts only its own
// messages). A generic value read into *any must print with encoding/json
// as the original does. Truncated bodies and garbage (fed as a
// *bytes.Reader, as the exchange does) give an error, never a panic, a hang,
// a huge allocation or a wrong value; Name and ID are valid; encoders and
// decoders on different goroutines do not interfere. Encoders and decoders
// are released (spi.Release) after their body, as the exchange does; a
// codec that pools them must hand out ones that keep nothing from their last
// body — not its writer, reader, bytes or error — and values decoded before a
// Release must not change when the pooled decoder reads another body.
func TestCodec(t *testing.T, c spi.Codec) {
	defer catch(t, "codec")
	if err := checkName(c.Name()); err != nil {
		t.Fatalf("codec: %v", err)
	}
	if c.ID() < 1 || c.ID() > 31 {
		t.Fatalf("codec %s: ID %d, want 1-31", c.Name(), c.ID())
	}
	run(t, "Header", "codec", func(t *testing.T) { testCodecHeader(t, c) })
	run(t, "Scalars", "codec", func(t *testing.T) { testCodecScalars(t, c) })
	run(t, "NilValues", "codec", func(t *testing.T) { testCodecNil(t, c) })
	run(t, "Arguments", "codec", func(t *testing.T) { testCodecArguments(t, c) })
	run(t, "Sequence", "codec", func(t *testing.T) { testCodecSequence(t, c) })
	run(t, "Concurrent", "codec", func(t *testing.T) { testCodecConcurrent(t, c) })
	run(t, "Truncated", "codec", func(t *testing.T) { testCodecTruncated(t, c) })
	run(t, "Garbage", "codec", func(t *testing.T) { testCodecGarbage(t, c) })
	run(t, "Release", "codec", func(t *testing.T) { testCodecRelease(t, c) })
	run(t, "ReleaseTwice", "codec", func(t *testing.T) { testCodecReleaseTwice(t, c) })
}

// testCodecReleaseTwice checks, for a codec whose encoders and decoders are
// spi.Releasers, that a second Release does not put the same one in the
// pool twice (two later bodies would share it) and that a released one
// refuses work: Encode with SERIALIZATION_ERROR, Decode with an error.
func testCodecReleaseTwice(t *testing.T, c spi.Codec) {
	body, err := encode(c, "x")
	if err != nil {
		t.Fatal(err)
	}
	dec := c.NewDecoder(bytes.NewReader(body))
	if _, ok := dec.(spi.Releaser); ok {
		spi.Release(dec)
		spi.Release(dec)
		var s string
		if err := dec.Decode(&s); err == nil {
			t.Fatal("Decode after Release succeeded, want an error")
		}
		d1, d2 := c.NewDecoder(bytes.NewReader(body)), c.NewDecoder(bytes.NewReader(body))
		if d1 == d2 {
			t.Fatal("two NewDecoder calls after a double Release returned the same decoder")
		}
		for _, d := range []spi.Decoder{d1, d2} {
			if err := d.Decode(&s); err != nil || s != "x" {
				t.Fatalf("decoder after a double Release read %q, %v", s, err)
			}
		}
	}
	enc := c.NewEncoder(io.Discard)
	if _, ok := enc.(spi.Releaser); ok {
		spi.Release(enc)
		spi.Release(enc)
		if err := enc.Encode("x"); !errors.Is(err, spi.ErrSerialization) {
			t.Fatalf("Encode after Release: %v, want SERIALIZATION_ERROR", err)
		}
		if e1, e2 := c.NewEncoder(io.Discard), c.NewEncoder(io.Discard); e1 == e2 {
			t.Fatal("two NewEncoder calls after a double Release returned the same encoder")
		}
	}
}

// encode writes vs with one encoder, releases it and returns the bytes.
func encode(c spi.Codec, vs ...any) ([]byte, error) {
	var buf bytes.Buffer
	enc := c.NewEncoder(&buf)
	defer spi.Release(enc)
	for i, v := range vs {
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("Encode value #%d (%T): %w", i, v, err)
		}
	}
	return buf.Bytes(), nil
}

// panicError is a panic recovered from a decoder.
type panicError struct{ v any }

func (e panicError) Error() string { return fmt.Sprintf("panic: %v", e.v) }

// decodeInto reads len(ptrs) values from data with one decoder and releases
// it (after an error too, as the exchange does); a panic becomes a
// panicError and leaves the decoder unreleased.
func decodeInto(c spi.Codec, data []byte, ptrs ...any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicError{r}
		}
	}()
	dec := c.NewDecoder(bytes.NewReader(data))
	for i, p := range ptrs {
		if err := dec.Decode(p); err != nil {
			spi.Release(dec)
			return fmt.Errorf("Decode value #%d into %T: %w", i, p, err)
		}
	}
	spi.Release(dec)
	return nil
}

// safeDecode is dec.Decode(p) with a panic turned into a panicError.
func safeDecode(dec spi.Decoder, p any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicError{r}
		}
	}()
	return dec.Decode(p)
}

// panicked reports whether err came from a recovered panic.
func panicked(err error) bool {
	var p panicError
	return errors.As(err, &p)
}

func testCodecHeader(t *testing.T, c spi.Codec) {
	for _, att := range []map[string]string{
		{"timeout": "1000", "token": "s3cr=t&/%", "ключ": "значение"},
		{},
		nil,
	} {
		data, err := encode(c, "g/demo.Echo:1.0", "Echo", att, 2, "arg", "arg2")
		if err != nil {
			t.Fatalf("header with attachments %v: %v", att, err)
		}
		var (
			svc, method, a0, a1 string
			gotAtt              map[string]string
			n                   int
		)
		if err := decodeInto(c, data, &svc, &method, &gotAtt, &n, &a0, &a1); err != nil {
			t.Fatalf("header with attachments %v: %v", att, err)
		}
		if svc != "g/demo.Echo:1.0" || method != "Echo" || n != 2 || a0 != "arg" || a1 != "arg2" {
			t.Fatalf("header read back as %q %q %d %q %q", svc, method, n, a0, a1)
		}
		if len(att) == 0 && len(gotAtt) != 0 || len(att) > 0 && !reflect.DeepEqual(att, gotAtt) {
			t.Fatalf("attachments %v read back as %v", att, gotAtt)
		}
	}
	// A response: attachments, then the value or the error message.
	data, err := encode(c, map[string]string{"k": "v"}, "SERVICE_ERROR: boom")
	if err != nil {
		t.Fatal(err)
	}
	var att map[string]string
	var msg any
	if err := decodeInto(c, data, &att, &msg); err != nil {
		t.Fatal(err)
	}
	if att["k"] != "v" || msg != "SERVICE_ERROR: boom" {
		t.Fatalf("response read back as %v %#v", att, msg)
	}
}

// roundTripTyped encodes v, decodes it into a new value of v's type and
// compares.
func roundTripTyped(t *testing.T, c spi.Codec, v any) {
	t.Helper()
	data, err := encode(c, v)
	if err != nil {
		t.Errorf("%#v: %v", v, err)
		return
	}
	p := reflect.New(reflect.TypeOf(v))
	if err := decodeInto(c, data, p.Interface()); err != nil {
		t.Errorf("%#v: %v", v, err)
		return
	}
	if got := p.Elem().Interface(); !reflect.DeepEqual(got, v) {
		t.Errorf("%T %#v read back as %#v", v, v, got)
	}
}

// roundTripGeneric encodes v, decodes it into *any and compares both as
// encoding/json prints them.
func roundTripGeneric(t *testing.T, c spi.Codec, v any) {
	t.Helper()
	data, err := encode(c, v)
	if err != nil {
		t.Errorf("%#v: %v", v, err)
		return
	}
	var got any
	if err := decodeInto(c, data, &got); err != nil {
		t.Errorf("%#v into *any: %v", v, err)
		return
	}
	want, err := normalJSON(v)
	if err != nil {
		t.Fatalf("%#v: encoding/json: %v", v, err)
	}
	have, err := normalJSON(got)
	if err != nil {
		t.Errorf("%T %#v read into *any as %#v, which encoding/json cannot print: %v", v, v, got, err)
		return
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("%T %#v read into *any as %#v; as JSON %v, want %v", v, v, got, have, want)
	}
}

// normalJSON prints v with encoding/json and reads it back generically.
func normalJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var n any
	return n, json.Unmarshal(b, &n)
}

func testCodecScalars(t *testing.T, c spi.Codec) {
	for _, v := range []any{
		"", "hello", "ünïcødé ✓", string(bytes.Repeat([]byte("x"), 70000)),
		0, 1, -1, 127, 128, 255, 256, -129, 65536, math.MaxInt32, 1 << 40, math.MinInt64, math.MaxInt64,
		int64(-5), int32(7), uint8(200), uint64(math.MaxUint64),
		true, false,
	} {
		roundTripTyped(t, c, v)
		if _, big := v.(uint64); !big && v != math.MinInt64 && v != math.MaxInt64 {
			roundTripGeneric(t, c, v) // encoding/json reads numbers as float64
		}
	}
}

func testCodecNil(t *testing.T, c spi.Codec) {
	data, err := encode(c, nil, map[string]string(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := any("sentinel")
	att := map[string]string{"stale": "x"}
	var m map[string]string
	if err := decodeInto(c, data, &got, &att, &m); err != nil {
		t.Fatal(err)
	}
	if got != nil {
		t.Errorf("nil read into *any as %#v", got)
	}
	if len(att) != 0 {
		t.Errorf("nil map read over a filled map as %v, want empty", att)
	}
	if len(m) != 0 {
		t.Errorf("nil read into *map[string]string as %v", m)
	}
}

// argument encodes v, reporting whether the codec accepts its type; a
// refusal must be a SERIALIZATION_ERROR.
func argument(t *testing.T, c spi.Codec, v any) bool {
	t.Helper()
	_, err := encode(c, v)
	if err == nil {
		return true
	}
	if !errors.Is(err, spi.ErrSerialization) {
		t.Errorf("Encode(%T) refused with %v, want an *spi.Error of status SERIALIZATION_ERROR", v, err)
	} else {
		t.Logf("codec %s refuses %T: %v", c.Name(), v, err)
	}
	return false
}

func testCodecArguments(t *testing.T, c spi.Codec) {
	person := CodecPerson{
		Name: "Ada", Age: 36, Tags: []string{"math", "engines"},
		Attrs: map[string]string{"born": "1815"}, Photo: []byte{0, 1, 2, 0xff},
	}
	typed := []any{
		[]byte{0, 1, 2, 0xfe, 0xff}, []byte{},
		1.5, -0.25, math.MaxFloat64,
		[]string{"a", "b"}, map[string]int{"one": 1},
		person,
	}
	for _, v := range typed {
		if argument(t, c, v) {
			roundTripTyped(t, c, v)
		}
	}
	if argument(t, c, &person) { // a pointer argument reads into the struct
		data, _ := encode(c, &person)
		var got *CodecPerson
		if err := decodeInto(c, data, &got); err != nil {
			t.Errorf("*CodecPerson into **CodecPerson: %v", err)
		} else if got == nil || !reflect.DeepEqual(*got, person) {
			t.Errorf("*CodecPerson read back as %#v", got)
		}
	}
	generic := []any{
		[]byte("bytes"), 1.5, "plain",
		map[string]any{"a": []any{1, "x", true, nil, 2.5}, "b": map[string]any{"c": map[string]any{"d": "deep"}}},
		[]any{map[string]any{"k": "v"}, []any{}, "s"},
		map[string]string{"x": "y"},
		person,
	}
	for _, v := range generic {
		if argument(t, c, v) {
			roundTripGeneric(t, c, v)
		}
	}
}

// testCodecSequence writes many values of mixed shapes in one stream.
func testCodecSequence(t *testing.T, c spi.Codec) {
	var vs []any
	for i := range 200 {
		switch i % 4 {
		case 0:
			vs = append(vs, fmt.Sprintf("value-%d", i))
		case 1:
			vs = append(vs, i*1000)
		case 2:
			vs = append(vs, map[string]string{"i": fmt.Sprint(i)})
		case 3:
			vs = append(vs, i%2 == 0)
		}
	}
	data, err := encode(c, vs...)
	if err != nil {
		t.Fatal(err)
	}
	dec := c.NewDecoder(bytes.NewReader(data))
	for i, v := range vs {
		p := reflect.New(reflect.TypeOf(v))
		if err := safeDecode(dec, p.Interface()); err != nil {
			t.Fatalf("value #%d: %v", i, err)
		}
		if !reflect.DeepEqual(p.Elem().Interface(), v) {
			t.Fatalf("value #%d %#v read back as %#v", i, v, p.Elem().Interface())
		}
	}
	var extra any
	if err := safeDecode(dec, &extra); err == nil || panicked(err) {
		t.Fatalf("Decode past the last value: %#v, %v; want an error", extra, err)
	}
	// A reader that is only an io.Reader (a stream, not a body in memory).
	dec = c.NewDecoder(struct{ io.Reader }{bytes.NewReader(data)})
	for i, v := range vs {
		p := reflect.New(reflect.TypeOf(v))
		if err := safeDecode(dec, p.Interface()); err != nil {
			t.Fatalf("from a plain io.Reader: value #%d: %v", i, err)
		}
		if !reflect.DeepEqual(p.Elem().Interface(), v) {
			t.Fatalf("from a plain io.Reader: value #%d %#v read back as %#v", i, v, p.Elem().Interface())
		}
	}
}

func testCodecConcurrent(t *testing.T, c spi.Codec) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer catch(t, "codec")
			for i := range 200 {
				svc := fmt.Sprintf("svc-%d-%d", g, i)
				data, err := encode(c, svc, map[string]string{"g": svc}, i)
				if err != nil {
					errs <- err
					return
				}
				var s string
				var m map[string]string
				var n int
				if err := decodeInto(c, data, &s, &m, &n); err != nil {
					errs <- err
					return
				}
				if s != svc || m["g"] != svc || n != i {
					errs <- fmt.Errorf("goroutine %d: read back %q %v %d", g, s, m, n)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// testCodecTruncated decodes every strict prefix of a request body: each
// either fails or, when only trailing padding was cut, reads every value
// back unchanged.
func testCodecTruncated(t *testing.T, c spi.Codec) {
	att := map[string]string{"timeout": "1000", "trace": "abc"}
	data, err := encode(c, "demo.Echo", "Echo", att, 1, "the last argument")
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(data); n++ {
		var (
			svc, method, arg string
			gotAtt           map[string]string
			num              int
		)
		err := decodeInto(c, data[:n], &svc, &method, &gotAtt, &num, &arg)
		if panicked(err) {
			t.Fatalf("%d of %d bytes: %v", n, len(data), err)
		}
		if err == nil && (svc != "demo.Echo" || method != "Echo" || !reflect.DeepEqual(gotAtt, att) ||
			num != 1 || arg != "the last argument") {
			t.Fatalf("%d of %d bytes read without error as %q %q %v %d %q", n, len(data), svc, method, gotAtt, num, arg)
		}
	}
}

// testCodecGarbage feeds random and hostile bytes to decoders of every
// target type.
func testCodecGarbage(t *testing.T, c spi.Codec) {
	inputs := [][]byte{
		nil,
		{0x00},
		{0xff, 0xff, 0xff, 0xff},
		// Lengths far beyond the input (msgpack bin32, str32, array32, map32).
		{0xc6, 0xff, 0xff, 0xff, 0xff},
		{0xdb, 0xff, 0xff, 0xff, 0xff, 'a'},
		{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01},
		{0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 'k'},
		// Varint-prefixed lengths far beyond the input.
		{0x06, 0xff, 0xff, 0xff, 0xff, 0x0f},
		{0x09, 0xff, 0xff, 0xff, 0xff, 0x0f},
		[]byte(`{"a":`), []byte(`[[[[[[[[`), []byte(`"unterminated`), []byte("\x00\x01\x02garbage"),
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 300 {
		b := make([]byte, rng.IntN(64))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		inputs = append(inputs, b)
	}
	// Valid bodies with one byte flipped.
	valid, err := encode(c, "demo.Echo", "Echo", map[string]string{"a": "b"}, 1, "x")
	if err != nil {
		t.Fatal(err)
	}
	for i := range valid {
		b := bytes.Clone(valid)
		b[i] ^= byte(1 + rng.IntN(255))
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		targets := []func() any{
			func() any { return new(any) },
			func() any { return new(string) },
			func() any { return new(int) },
			func() any { return new(map[string]string) },
			func() any { return new([]byte) },
			func() any { return new(CodecPerson) },
		}
		for _, target := range targets {
			err := decodeInto(c, in, target(), target(), target())
			if panicked(err) {
				t.Fatalf("decoding % x into %T: %v", in, target(), err)
			}
		}
		if len(in) == 0 {
			if err := decodeInto(c, in, new(any)); err == nil {
				t.Errorf("Decode of an empty body: nil error")
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Logf("Decode of an empty body: %v (not io.EOF)", err)
			}
		}
	}
}

// testCodecRelease checks what a codec that pools its encoders and decoders
// must get right: a released one comes back with nothing of its last body
// (writer, reader, buffered bytes, sticky error), and the values decoded
// before a Release share memory neither with the decoder's reused buffers
// nor with the body, which the exchange reuses too.
func testCodecRelease(t *testing.T, c spi.Codec) {
	// A released encoder writes no more to its old writer.
	var first bytes.Buffer
	enc := c.NewEncoder(&first)
	if err := enc.Encode("first body"); err != nil {
		t.Fatal(err)
	}
	spi.Release(enc)
	written := bytes.Clone(first.Bytes())
	for i := range 4 {
		want := fmt.Sprintf("body %d after a release", i)
		var buf bytes.Buffer
		enc := c.NewEncoder(&buf)
		if err := enc.Encode(want); err != nil {
			t.Fatalf("Encode with a reused encoder: %v", err)
		}
		spi.Release(enc)
		var got string
		if err := decodeInto(c, buf.Bytes(), &got); err != nil || got != want {
			t.Fatalf("encoded by a reused encoder, read back as %q, %v; want %q", got, err, want)
		}
	}
	if !bytes.Equal(first.Bytes(), written) {
		t.Fatalf("a released encoder wrote to its old writer: % x, was % x", first.Bytes(), written)
	}
	// An encoder released after a failed Encode comes back working.
	failed := c.NewEncoder(io.Discard)
	if err := failed.Encode(make(chan int)); err == nil {
		t.Fatal("Encode(chan int): nil error")
	}
	spi.Release(failed)
	if _, err := encode(c, "after a failed encode"); err != nil {
		t.Fatalf("Encode after a failed encoder was released: %v", err)
	}

	// Values decoded before a Release stay as they were while the decoder
	// (likely the same pooled one) reads other bodies and the first body's
	// bytes are overwritten.
	shapes := func(tag string) []any {
		vs := []any{
			strings.Repeat(tag, 40),
			[]byte(strings.Repeat(tag, 30)),
			map[string]string{tag + "-key": strings.Repeat(tag, 20)},
			strings.Repeat(tag, 50), // read into *any
		}
		generic := map[string]any{"s": strings.Repeat(tag, 20), "a": []any{strings.Repeat(tag, 10), true}}
		if _, err := encode(c, generic); err == nil {
			vs = append(vs, generic)
		}
		person := CodecPerson{Name: strings.Repeat(tag, 10), Tags: []string{tag}, Attrs: map[string]string{tag: tag}, Photo: []byte(tag)}
		if _, err := encode(c, person); err == nil {
			vs = append(vs, person)
		}
		return vs
	}
	targets := func(vs []any) []any {
		ptrs := make([]any, len(vs))
		for i, v := range vs {
			if i >= 3 { // generic values
				ptrs[i] = new(any)
				continue
			}
			ptrs[i] = reflect.New(reflect.TypeOf(v)).Interface()
		}
		return ptrs
	}
	alpha := shapes("a")
	body, err := encode(c, alpha...)
	if err != nil {
		t.Fatal(err)
	}
	kept := targets(alpha)
	if err := decodeInto(c, body, kept...); err != nil {
		t.Fatal(err)
	}
	before, err := normalJSON(kept)
	if err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 0xff
	}
	bravo := shapes("b")
	other, err := encode(c, bravo...)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		ptrs := targets(bravo)
		if err := decodeInto(c, other, ptrs...); err != nil {
			t.Fatalf("a reused decoder: %v", err)
		}
		for i, p := range ptrs {
			if i < 3 && !reflect.DeepEqual(reflect.ValueOf(p).Elem().Interface(), bravo[i]) {
				t.Fatalf("a reused decoder read %#v as %#v", bravo[i], reflect.ValueOf(p).Elem().Interface())
			}
		}
	}
	if after, err := normalJSON(kept); err != nil || !reflect.DeepEqual(after, before) {
		t.Fatalf("values decoded before a Release changed when the decoder was reused and the body overwritten:\n now %v (%v)\nwas %v", after, err, before)
	}

	// A decoder released halfway through a body, or after an error, comes
	// back reading its new body from the start, with no error.
	three, err := encode(c, "one", "two", "three")
	if err != nil {
		t.Fatal(err)
	}
	half := c.NewDecoder(bytes.NewReader(three))
	var s string
	if err := half.Decode(&s); err != nil || s != "one" {
		t.Fatalf("first of three values: %q, %v", s, err)
	}
	spi.Release(half)
	if err := decodeInto(c, three[:1], &s, &s); err == nil {
		t.Fatalf("two values from a 1-byte body: nil error")
	}
	for range 4 {
		var a, b, c3 string
		if err := decodeInto(c, three, &a, &b, &c3); err != nil || a != "one" || b != "two" || c3 != "three" {
			t.Fatalf("after a decoder released halfway and one released after an error: read %q %q %q, %v", a, b, c3, err)
		}
	}
}

// BenchmarkCodec measures c on a typical small request body, as the exchange
// writes and reads it: service key, method, attachments {"timeout": "1000"},
// one argument (a 100-byte string). "encode" makes a new encoder per body
// into a reused buffer; "decode" a new decoder per body over a
// *bytes.Reader, reading into typed values. "released" releases each one
// after its body, as the exchange does (a pooling codec reuses it);
// "unreleased" does not (a new one per body), so the two show what pooling
// saves. The values are boxed once, outside the loop, so allocations are
// the codec's own. Both report bytes of body.
func BenchmarkCodec(b *testing.B, c spi.Codec) {
	arg := string(bytes.Repeat([]byte("a"), 100))
	att := map[string]string{"timeout": "1000"}
	values := []any{"demo.Echo", "Echo", att, 1, arg}
	body, err := encode(c, values...)
	if err != nil {
		b.Fatal(err)
	}
	for _, release := range []bool{true, false} {
		variant := "released"
		if !release {
			variant = "unreleased"
		}
		b.Run("encode/"+variant, func(b *testing.B) {
			var buf bytes.Buffer
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				enc := c.NewEncoder(&buf)
				for _, v := range values {
					if err := enc.Encode(v); err != nil {
						b.Fatal(err)
					}
				}
				if release {
					spi.Release(enc)
				}
			}
		})
		b.Run("decode/"+variant, func(b *testing.B) {
			var (
				r              bytes.Reader
				svc, method, a string
				m              map[string]string
				n              int
			)
			ptrs := []any{&svc, &method, &m, &n, &a}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(body)
				m = nil // a new map per body, as the exchange reads attachments
				dec := c.NewDecoder(&r)
				for _, p := range ptrs {
					if err := dec.Decode(p); err != nil {
						b.Fatal(err)
					}
				}
				if release {
					spi.Release(dec)
				}
			}
		})
	}
}
