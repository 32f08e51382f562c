package protobuf

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/airnode/airnode/extensions/codec/internal/generic"
	jsoncodec "github.com/airnode/airnode/extensions/codec/internal/jsonwire"
	"github.com/airnode/airnode/internal/cyclecheck"
	"github.com/airnode/airnode/internal/gotype"
	"github.com/airnode/airnode/spi"
)

// A generic caller (`airnode call`, Reference.Invoke with maps, a gateway)
// has what JSON has. Its scalars travel as the kinds above. Its objects
// and arrays have a kind of their own, KindJSON, a JSON text, which the
// decoder reads but the encoder does not send yet: a provider built before
// KindJSON answers "unknown value kind 10", so a consumer may send it only
// once providers declare that they read it, by a key an older one ignores
// (docs/wire.md, Versioning); until then Encode refuses a generic map or
// array (codec=json carries them). The decoder reads them as the other
// codecs do: into a proto message by the
// proto3 JSON mapping (protojson: "bob" for a google.protobuf.StringValue,
// an RFC 3339 string for a Timestamp, enum names, lowerCamel or original
// field names) or, when protojson cannot, as codec=json reads the message's
// generated Go struct ({"value":"bob"} for a StringValue); into any other
// target exactly as codec=json reads it (this package decodes the text
// with the json codec); and a string into a []byte as standard base64, as
// encoding/json does.

// appendJSON appends v, a generic map or array, as KindJSON: the text
// codec=json would send. A value reaching itself or nested deeper than
// cyclecheck.MaxDepth is refused first, as msgpack refuses it.
func appendJSON(b []byte, v any) ([]byte, error) {
	if err := cyclecheck.Check(v, "json"); err != nil {
		return nil, spi.Errorf(spi.StatusSerializationError, "protobuf: encode %T: %w", v, err)
	}
	var buf bytes.Buffer
	enc := jsoncodec.Codec{}.NewEncoder(&buf)
	err := enc.Encode(v)
	spi.Release(enc)
	if err != nil {
		return nil, spi.Errorf(spi.StatusSerializationError, "protobuf: %w", err)
	}
	return appendBytes(append(b, byte(KindJSON)), bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// fromJSON decodes text, a JSON text, into v (a non-nil pointer that is no
// message) as codec=json does, refusing a map key naming no struct field
// when strict.
func fromJSON(text []byte, v any, strict bool) error {
	dec := jsoncodec.Codec{}.NewDecoder(bytes.NewReader(text))
	defer spi.Release(dec)
	if strict {
		dec.(spi.StrictDecoder).DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	return nil
}

// asJSON reads a value of kind k (not KindMessage, not KindNil) as a JSON
// text: KindJSON's own text, any other kind as encoding/json writes its Go
// value (a []byte as base64, a string map as an object).
func (d *Decoder) asJSON(k Kind) ([]byte, error) {
	if k == KindJSON {
		return d.bytes(nil)
	}
	g, err := d.generic(k)
	if err != nil {
		return nil, err
	}
	return json.Marshal(g)
}

// messageFromJSON fills m from text: protojson first (unknown fields are
// an error when strict, dropped otherwise), then encoding/json on m's
// generated struct, as codec=json reads it. When neither can, the error is
// a *mismatch saying what was sent and protojson's reason, or, for an
// object with a key naming no field of m, a *generic.FieldError listing
// m's fields.
func messageFromJSON(text []byte, m proto.Message, strict bool) error {
	perr := protojson.UnmarshalOptions{DiscardUnknown: !strict}.Unmarshal(text, m)
	if perr == nil {
		return nil
	}
	proto.Reset(m)
	if fromJSON(text, m, strict) == nil {
		return nil
	}
	proto.Reset(m)
	md := m.ProtoReflect().Descriptor()
	if fe := unknownKey(text, md); fe != nil && strict {
		return fe
	}
	why := strings.TrimPrefix(perr.Error(), "proto: ")
	why = strings.TrimPrefix(why, "(line 1:1): ")
	return &mismatch{got: describeJSON(text), want: "message " + string(md.FullName()), why: "protojson: " + why, err: perr}
}

// unknownKey returns, for a JSON object text, its keys that name no field
// of md by their JSON or proto name, as one *generic.FieldError
// (generic.NewFieldError: the first few named, with their suggestions);
// nil for an object whose keys all name fields, and for any other JSON.
func unknownKey(text []byte, md protoreflect.MessageDescriptor) *generic.FieldError {
	var obj map[string]json.RawMessage
	if json.Unmarshal(text, &obj) != nil {
		return nil
	}
	fields := md.Fields()
	var names, unknown []string
	for i := range fields.Len() {
		names = append(names, fields.Get(i).JSONName())
	}
	for key := range obj {
		if fields.ByJSONName(key) == nil && fields.ByTextName(key) == nil {
			unknown = append(unknown, key)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return generic.NewFieldError(string(md.FullName()), "", names, unknown)
}

// describeJSON names a JSON text's value in a user's terms: `a string
// ("bob")`, `a number (5)`, "an object", "an array", "true", "null".
func describeJSON(text []byte) string {
	text = bytes.TrimSpace(text)
	if len(text) == 0 {
		return "nothing"
	}
	switch c := text[0]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string (" + short(string(text)) + ")"
	case c == 't' || c == 'f' || c == 'n':
		return string(text)
	}
	return "a number (" + short(string(text)) + ")"
}

// short cuts s to 40 bytes for an error message.
func short(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// mismatch is a value the target cannot take, in a user's terms
// (spi.TypeMismatch): "got a string ("bob"), want message
// google.protobuf.Int64Value (protojson: ...)".
type mismatch struct {
	got  string // what was sent: `a string ("bob")`
	want string // what the target is: "message google.protobuf.Int64Value", "a string"
	why  string // optional detail
	err  error  // optional cause
}

func (e *mismatch) Error() string { return "got " + e.Got() }

// Got returns what was sent, what was wanted and why it does not fit.
func (e *mismatch) Got() string {
	s := e.got + ", want " + e.want
	if e.why != "" {
		s += " (" + e.why + ")"
	}
	return s
}

func (e *mismatch) Unwrap() error { return e.err }

var _ spi.TypeMismatch = (*mismatch)(nil)

// kindPhrase names kind k in a user's terms for an error: "a string",
// "an integer", "a message".
func kindPhrase(k Kind) string {
	switch k {
	case KindNil:
		return "nil"
	case KindFalse, KindTrue:
		return "a bool"
	case KindInt, KindUint:
		return "an integer"
	case KindFloat:
		return "a float"
	case KindString:
		return "a string"
	case KindBytes:
		return "bytes"
	case KindStringMap:
		return "a map[string]string"
	case KindMessage:
		return "a message"
	case KindJSON:
		return "a JSON object or array"
	}
	return "kind " + strconv.Itoa(int(k))
}

// goTypeOf names the Go type a typed peer encodes as k, for KindBytes and
// KindStringMap: "[]byte", "map[string]string"; kindPhrase(k) otherwise.
func goTypeOf(k Kind) string {
	switch k {
	case KindBytes:
		return "[]byte"
	case KindStringMap:
		return "map[string]string"
	}
	return kindPhrase(k)
}

// typeName names t as a Go programmer writes it: []byte, not []uint8;
// any, not interface {}.
func typeName(t reflect.Type) string { return gotype.String(t) }

// targetName names what Decode(v) fills: the type v points to.
func targetName(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return "nil"
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return typeName(t)
}

// base64Bytes decodes s, a string sent for a []byte, as standard base64
// (encoding/json's []byte).
func base64Bytes(s []byte) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(string(s))
	if err != nil {
		return nil, &mismatch{got: "a string (" + short(strconv.Quote(string(s))) + ")", want: "[]byte",
			why: fmt.Sprintf("a []byte is sent as standard base64: %v", err), err: err}
	}
	return b, nil
}
