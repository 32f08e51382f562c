package protobuf_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/airnode/airnode/extensions/codec/protobuf"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestConformance(t *testing.T) { spitest.TestCodec(t, protobuf.Codec{}) }

func encode(t *testing.T, vs ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := protobuf.Codec{}.NewEncoder(&buf)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			t.Fatalf("Encode(%T): %v", v, err)
		}
	}
	return buf.Bytes()
}

func TestMessagesRoundTrip(t *testing.T) {
	ts := timestamppb.New(time.Date(2026, 11, 29, 15, 0, 0, 42, time.UTC))
	st, err := structpb.NewStruct(map[string]any{"a": 1.5, "b": []any{"x", true}})
	if err != nil {
		t.Fatal(err)
	}
	// A request as the exchange writes it: header values, then messages.
	data := encode(t, "demo.Clock", "Now", map[string]string{"timeout": "1000"}, 3,
		wrapperspb.String("hello"), ts, st)
	dec := protobuf.Codec{}.NewDecoder(bytes.NewReader(data))
	var (
		svc, method string
		att         map[string]string
		n           int
	)
	for _, p := range []any{&svc, &method, &att, &n} {
		if err := dec.Decode(p); err != nil {
			t.Fatal(err)
		}
	}
	if svc != "demo.Clock" || method != "Now" || att["timeout"] != "1000" || n != 3 {
		t.Fatalf("header read back as %q %q %v %d", svc, method, att, n)
	}
	// Into the message itself (a reply the caller allocated).
	s := &wrapperspb.StringValue{Value: "stale"}
	if err := dec.Decode(s); err != nil || s.Value != "hello" {
		t.Fatalf("into *StringValue: %v %v", s, err)
	}
	// Into a pointer to a message pointer (a parameter made with reflect.New).
	pp := reflect.New(reflect.TypeFor[*timestamppb.Timestamp]())
	if err := dec.Decode(pp.Interface()); err != nil {
		t.Fatal(err)
	}
	if got := pp.Elem().Interface().(*timestamppb.Timestamp); !proto.Equal(got, ts) {
		t.Fatalf("timestamp read back as %v, want %v", got, ts)
	}
	// Into *any: resolved by its full name.
	var g any
	if err := dec.Decode(&g); err != nil {
		t.Fatal(err)
	}
	if got, ok := g.(*structpb.Struct); !ok || !proto.Equal(got, st) {
		t.Fatalf("struct read into *any as %T %v", g, g)
	}
	if err := dec.Decode(&g); !errors.Is(err, io.EOF) {
		t.Fatalf("Decode past the end: %v, want io.EOF", err)
	}
}

func TestNonProtoArgumentIsSerializationError(t *testing.T) {
	type Order struct{ ID int }
	for _, v := range []any{Order{1}, &Order{2}, map[string]int{"a": 1}, []string{"x"}, make(chan int)} {
		err := protobuf.Codec{}.NewEncoder(io.Discard).Encode(v)
		var e *spi.Error
		if !errors.As(err, &e) || e.Status != spi.StatusSerializationError {
			t.Errorf("Encode(%T): %v, want an *spi.Error of status SERIALIZATION_ERROR", v, err)
			continue
		}
		if name := reflect.TypeOf(v).String(); !strings.Contains(err.Error(), name) {
			t.Errorf("Encode(%T): %q does not name the type %s", v, err, name)
		}
	}
}

func TestWrongMessageTypeIsAnError(t *testing.T) {
	data := encode(t, wrapperspb.String("x"))
	err := protobuf.Codec{}.NewDecoder(bytes.NewReader(data)).Decode(&wrapperspb.Int64Value{})
	if err == nil || !strings.Contains(err.Error(), "google.protobuf.StringValue") {
		t.Fatalf("StringValue into *Int64Value: %v, want an error naming both", err)
	}
}

func TestNilMessage(t *testing.T) {
	data := encode(t, (*wrapperspb.StringValue)(nil))
	var p *wrapperspb.StringValue = wrapperspb.String("stale")
	if err := (protobuf.Codec{}).NewDecoder(bytes.NewReader(data)).Decode(&p); err != nil || p != nil {
		t.Fatalf("nil message read back as %v, %v; want nil", p, err)
	}
}

func TestUnknownMessageIntoAny(t *testing.T) {
	// kind message, name "no.Such", empty body
	data := []byte{byte(protobuf.KindMessage), 7, 'n', 'o', '.', 'S', 'u', 'c', 'h', 0}
	var g any
	err := protobuf.Codec{}.NewDecoder(bytes.NewReader(data)).Decode(&g)
	if err == nil || !strings.Contains(err.Error(), "no.Such") {
		t.Fatalf("unknown message into *any: %v, want an error naming it", err)
	}
}

func TestIntegerRanges(t *testing.T) {
	var i8 int8
	if err := (protobuf.Codec{}).NewDecoder(bytes.NewReader(encode(t, 300))).Decode(&i8); err == nil {
		t.Errorf("300 into *int8: %d, nil error", i8)
	}
	var u uint
	if err := (protobuf.Codec{}).NewDecoder(bytes.NewReader(encode(t, -1))).Decode(&u); err == nil {
		t.Errorf("-1 into *uint: %d, nil error", u)
	}
	var n int64
	if err := (protobuf.Codec{}).NewDecoder(bytes.NewReader(encode(t, uint8(7)))).Decode(&n); err != nil || n != 7 {
		t.Errorf("uint8 7 into *int64: %d, %v", n, err)
	}
}

// encodeOne returns the body of v alone.
func encodeOne(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := protobuf.Codec{}.NewEncoder(&buf)
	defer spi.Release(enc)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// tester63 finding 1: an integer for a float parameter (airnode call F64
// 3) was BAD_REQUEST "got an integer, want float64" under protobuf alone;
// encoding/json and msgpack read it. It is read when the float holds it
// exactly, and refused naming the value when it does not (2^53+1 would
// silently become 2^53).
func TestIntegerIntoFloat(t *testing.T) {
	dec := func(v, into any) error {
		return (protobuf.Codec{}).NewDecoder(bytes.NewReader(encode(t, v))).Decode(into)
	}
	var f float64
	for _, v := range []any{3, int64(-1 << 53), uint64(1 << 63), int64(math.MinInt64)} {
		if err := dec(v, &f); err != nil {
			t.Errorf("%T %v into *float64: %v", v, v, err)
		} else if want := reflect.ValueOf(v).Convert(reflect.TypeFor[float64]()).Float(); f != want {
			t.Errorf("%T %v into *float64: %v", v, v, f)
		}
	}
	var f32 float32
	if err := dec(1<<24, &f32); err != nil || f32 != 1<<24 {
		t.Errorf("2^24 into *float32: %v, %v", f32, err)
	}
	for _, c := range []struct {
		v    any
		into any
	}{{int64(1<<53 + 1), &f}, {uint64(math.MaxUint64), &f}, {1<<24 + 1, &f32}} {
		err := dec(c.v, c.into)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("got an integer (%v)", c.v)) || !strings.Contains(err.Error(), "not exactly representable") {
			t.Errorf("%T %v into %T: %v; want a refusal naming the integer", c.v, c.v, c.into, err)
		}
	}
}
