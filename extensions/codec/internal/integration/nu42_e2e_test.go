package integration

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// Shop is nu42's service, reduced to what a typed Go consumer sends and
// what its provider receives.
type Shop struct{}

// Doc holds generic metadata.
type Doc struct {
	Meta map[string]any `json:"meta"`
}

// Money encodes itself as text ("1234 cents").
type Money struct{ Cents int64 }

// MarshalText writes "<cents> cents".
func (m Money) MarshalText() ([]byte, error) { return fmt.Appendf(nil, "%d cents", m.Cents), nil }

// UnmarshalText reads "<cents> cents".
func (m *Money) UnmarshalText(b []byte) error {
	_, err := fmt.Sscanf(string(b), "%d cents", &m.Cents)
	return err
}

// Ticket is a struct argument.
type Ticket struct {
	ID int64 `json:"id"`
}

// Put returns the bytes it received.
func (Shop) Put(_ context.Context, b []byte) ([]byte, error) { return b, nil }

// Name returns the string it received.
func (Shop) Name(_ context.Context, s string) (string, error) { return s, nil }

// Latin1 returns a string that is not UTF-8.
func (Shop) Latin1(context.Context) (string, error) { return "caf\xe9", nil }

// SaveMap returns the Go type of m["blob"] as received.
func (Shop) SaveMap(_ context.Context, m map[string]any) (string, error) {
	return reflect.TypeOf(m["blob"]).String(), nil
}

// SaveDoc returns the Go type of d.Meta["blob"] as received.
func (Shop) SaveDoc(_ context.Context, d Doc) (string, error) {
	return reflect.TypeOf(d.Meta["blob"]).String(), nil
}

// Ratio returns a float64 beyond float32's range.
func (Shop) Ratio(context.Context) (float64, error) { return 1e300, nil }

// F32 returns f.
func (Shop) F32(_ context.Context, f float32) (float32, error) { return f, nil }

// Price returns m.
func (Shop) Price(_ context.Context, m Money) (Money, error) { return m, nil }

// Echo returns o.
func (Shop) Echo(_ context.Context, o Ticket) (Ticket, error) { return o, nil }

var codecs = []string{"msgpack", "json", "protobuf"}

func statusOf(err error) spi.Status {
	var e *spi.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// A typed call's Go string for a []byte parameter arrives as the string's
// bytes where the wire tells a string from bytes (msgpack, protobuf); under
// json, which has no bytes type, a string for a []byte is base64 (the only
// reading). A marked generic call's string is base64 under every codec.
func TestNu42_StringIntoBytes(t *testing.T) {
	typed := map[string][]byte{"msgpack": []byte("cafe"), "json": {0x71, 0xa7, 0xde}, "protobuf": []byte("cafe")}
	for _, codec := range codecs {
		r := exportAs(t, Shop{}, "nu42.Shop", codec)
		var got []byte
		if err := r.Call(ctxT(t), "Put", []any{"cafe"}, &got); err != nil || string(got) != string(typed[codec]) {
			t.Errorf("%s: typed Put(\"cafe\") = %q, %v; want %q", codec, got, err, typed[codec])
		}
		generic := spi.WithAttachments(ctxT(t), spi.AttachmentGeneric, spi.GenericTrue)
		got = nil
		if err := r.Call(generic, "Put", []any{"Y2FmZQ=="}, &got); err != nil || string(got) != "cafe" {
			t.Errorf("%s: generic Put(\"Y2FmZQ==\") = %q, %v; want \"cafe\"", codec, got, err)
		}
		if err := r.Call(generic, "Put", []any{"cafe!"}, &got); statusOf(err) != spi.StatusBadRequest || !strings.Contains(err.Error(), "base64") {
			t.Errorf("%s: generic Put(\"cafe!\"): %v, want BAD_REQUEST naming base64", codec, err)
		}
		// The other way: []byte for a string parameter.
		var s string
		err := r.Call(ctxT(t), "Name", []any{[]byte("cafe")}, &s)
		switch codec {
		case "msgpack":
			if err != nil || s != "cafe" {
				t.Errorf("msgpack: Name([]byte(\"cafe\")) = %q, %v", s, err)
			}
		case "json":
			if err != nil || s != "Y2FmZQ==" {
				t.Errorf("json: Name([]byte(\"cafe\")) = %q, %v; want the base64 text", s, err)
			}
		case "protobuf":
			if statusOf(err) != spi.StatusBadRequest || !strings.Contains(err.Error(), "got bytes, want a string") {
				t.Errorf("protobuf: Name([]byte(\"cafe\")): %v, want BAD_REQUEST", err)
			}
		}
	}
}

// Under msgpack a []byte inside a map[string]any, a parameter or a struct
// field, arrives as []byte, as it does in an any parameter.
func TestNu42_BytesInsideGenericMap(t *testing.T) {
	r := exportAs(t, Shop{}, "nu42.Shop", "msgpack")
	var typ string
	if err := r.Call(ctxT(t), "SaveMap", []any{map[string]any{"blob": []byte{0xde, 0xad}}}, &typ); err != nil || typ != "[]uint8" {
		t.Errorf("SaveMap: provider got %s (%v), want []uint8", typ, err)
	}
	if err := r.Call(ctxT(t), "SaveDoc", []any{Doc{Meta: map[string]any{"blob": []byte{0xde, 0xad}}}}, &typ); err != nil || typ != "[]uint8" {
		t.Errorf("SaveDoc: provider got %s (%v), want []uint8", typ, err)
	}
	if err := r.Call(ctxT(t), "SaveMap", []any{map[string]any{"blob": "text"}}, &typ); err != nil || typ != "string" {
		t.Errorf("SaveMap(string): provider got %s (%v), want string", typ, err)
	}
}

// Under json a string that is not UTF-8 is refused (SERIALIZATION_ERROR
// naming the argument, the field and the byte offset) where encoding/json
// sent U+FFFD; msgpack and protobuf carry the bytes.
func TestNu42_NonUTF8String(t *testing.T) {
	for _, codec := range codecs {
		r := exportAs(t, Shop{}, "nu42.Shop", codec)
		var s string
		err := r.Call(ctxT(t), "Name", []any{"caf\xe9 (latin-1)"}, &s)
		if codec != "json" {
			if err != nil || s != "caf\xe9 (latin-1)" {
				t.Errorf("%s: Name = %q, %v; want the bytes unchanged", codec, s, err)
			}
			continue
		}
		if statusOf(err) != spi.StatusSerializationError || !strings.Contains(err.Error(), "argument 0") ||
			!strings.Contains(err.Error(), "invalid UTF-8 at byte offset 3 (0xe9)") {
			t.Errorf("json: Name: %v, want SERIALIZATION_ERROR naming argument 0 and offset 3", err)
		}
		err = r.Call(ctxT(t), "SaveDoc", []any{Doc{Meta: map[string]any{"a": "ok", "k": []any{"x", "caf\xe9"}}}}, &s)
		if statusOf(err) != spi.StatusSerializationError || !strings.Contains(err.Error(), `Doc.meta["k"][1]: invalid UTF-8 at byte offset 3`) {
			t.Errorf("json: SaveDoc: %v, want SERIALIZATION_ERROR naming Doc.meta[\"k\"][1]", err)
		}
		err = r.Call(ctxT(t), "Latin1", nil, &s)
		if statusOf(err) != spi.StatusSerializationError || !strings.Contains(err.Error(), "invalid UTF-8 at byte offset 3") {
			t.Errorf("json: Latin1 result: %v, want SERIALIZATION_ERROR", err)
		}
		// U+FFFD itself and the text `\ufffd` are UTF-8: sent as they are.
		for _, ok := range []string{"\uFFFD", `\ufffd`, `\\ufffd`} {
			if err := r.Call(ctxT(t), "Name", []any{ok}, &s); err != nil || s != ok {
				t.Errorf("json: Name(%q) = %q, %v", ok, s, err)
			}
		}
	}
}

// A float beyond float32's range is BAD_RESPONSE in a float32 reply and
// BAD_REQUEST for a float32 parameter, in every codec.
func TestNu42_Float32Range(t *testing.T) {
	for _, codec := range codecs {
		r := exportAs(t, Shop{}, "nu42.Shop", codec)
		var f float32
		if err := r.Call(ctxT(t), "Ratio", nil, &f); statusOf(err) != spi.StatusBadResponse {
			t.Errorf("%s: Ratio into float32 = %v, %v; want BAD_RESPONSE", codec, f, err)
		}
		if err := r.Call(ctxT(t), "F32", []any{1e300}, &f); statusOf(err) != spi.StatusBadRequest {
			t.Errorf("%s: F32(1e300) = %v, %v; want BAD_REQUEST", codec, f, err)
		} else if codec != "json" && !strings.Contains(err.Error(), "a float (1e+300)") {
			t.Errorf("%s: F32(1e300): %v, want it to say a float was sent", codec, err)
		}
		if err := r.Call(ctxT(t), "F32", []any{1.5}, &f); err != nil || f != 1.5 {
			t.Errorf("%s: F32(1.5) = %v, %v", codec, f, err)
		}
	}
}

// A TextMarshaler's result reads as its text generically under msgpack and
// json, and that text sent back generically is read by UnmarshalText: what
// `airnode call` prints can be sent back.
func TestNu42_TextMarshalerIsText(t *testing.T) {
	for _, codec := range []string{"msgpack", "json"} {
		r := exportAs(t, Shop{}, "nu42.Shop", codec)
		got, err := r.Invoke(ctxT(t), "Price", Money{1234})
		if err != nil || got != "1234 cents" {
			t.Errorf("%s: Invoke(Price) = %T %v, %v; want string \"1234 cents\"", codec, got, got, err)
			continue
		}
		generic := spi.WithAttachments(ctxT(t), spi.AttachmentGeneric, spi.GenericTrue)
		var m Money
		if err := r.Call(generic, "Price", []any{got}, &m); err != nil || m.Cents != 1234 {
			t.Errorf("%s: Price(%q) sent back = %+v, %v", codec, got, m, err)
		}
	}
}

// An array sent into a struct is BAD_REQUEST saying so under msgpack, not
// msgpack's "number of fields in array-encoded struct has changed".
func TestNu42_ArrayIntoStruct(t *testing.T) {
	r := exportAs(t, Shop{}, "nu42.Shop", "msgpack")
	_, err := r.Invoke(ctxT(t), "Echo", []any{1, 2})
	if statusOf(err) != spi.StatusBadRequest || !strings.Contains(err.Error(), "got an array ([1,2])") ||
		strings.Contains(err.Error(), "array-encoded") {
		t.Errorf("Echo([1,2]): %v, want BAD_REQUEST saying got an array ([1,2])", err)
	}
}
