package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// Greeter takes and returns protobuf messages, as a service exported with
// codec=protobuf does.
type Greeter struct{}

// Greet returns "hello " and in's value.
func (Greeter) Greet(_ context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	return wrapperspb.String("hello " + in.GetValue()), nil
}

// Info returns in's "name" as "fullname".
func (Greeter) Info(_ context.Context, in *structpb.Struct) (*structpb.Struct, error) {
	return structpb.NewStruct(map[string]any{"fullname": in.AsMap()["name"]})
}

// Echo returns in.
func (Greeter) Echo(_ context.Context, in []byte) ([]byte, error) { return in, nil }

// Version returns 2 as a well-known type.
func (Greeter) Version(context.Context) (*wrapperspb.Int64Value, error) {
	return wrapperspb.Int64(2), nil
}

// Seconds returns t's Unix seconds.
func (Greeter) Seconds(_ context.Context, t *timestamppb.Timestamp) (int64, error) {
	return t.GetSeconds(), nil
}

// Secret returns a message of a type that only this process knows (built
// from a descriptor, registered nowhere): a consumer cannot read it into
// *any.
func (Greeter) Secret(context.Context) (proto.Message, error) {
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name:    proto.String("proto2secret.proto"),
		Package: proto.String("proto2test"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Secret"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("word"), Number: proto.Int32(1), JsonName: proto.String("word"),
				Type:  descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			}},
		}},
	}, nil)
	if err != nil {
		return nil, err
	}
	md := fd.Messages().Get(0)
	m := dynamicpb.NewMessage(md)
	m.Set(md.Fields().Get(0), protoreflect.ValueOfString("psst"))
	return m, nil
}

// A generic caller under codec=protobuf (Reference.Invoke with maps and
// scalars, marked generic as `airnode call` sends them): a scalar for a message is read by
// protojson and a base64 string fills a []byte; errors name the types as
// users write them. A JSON object or array is refused before it is sent
// (a provider of an earlier build cannot read its form) with the way out:
// codec=json, with which the same provider reads it.
func TestProto2_GenericArgumentsUnderProtobuf(t *testing.T) {
	r := exportAs(t, Greeter{}, "proto2.Greeter", "protobuf")
	ok := []struct {
		method string
		arg    any
		want   any
	}{
		{"Greet", "ann", wrapperspb.String("hello ann")}, // protojson's form
		{"Echo", "aGVsbG8=", []byte("hello")},
		{"Seconds", "2026-12-01T10:00:00Z", int64(1796119200)},
	}
	generic := spi.WithAttachments(ctxT(t), spi.AttachmentGeneric, spi.GenericTrue)
	for _, c := range ok {
		got, err := r.Invoke(generic, c.method, c.arg)
		if err != nil {
			t.Errorf("Invoke(%s, %#v): %v", c.method, c.arg, err)
			continue
		}
		if m, isMsg := c.want.(proto.Message); isMsg {
			if gm, _ := got.(proto.Message); gm == nil || !proto.Equal(gm, m) {
				t.Errorf("Invoke(%s, %#v) = %v, want %v", c.method, c.arg, got, m)
			}
		} else if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Invoke(%s, %#v) = %#v, want %#v", c.method, c.arg, got, c.want)
		}
	}
	bad := []struct {
		method string
		arg    any
		want   []string
	}{
		{"Greet", 5, []string{"got a number (5), want message google.protobuf.StringValue (protojson: "}},
		{"Echo", "not base64!", []string{`got a string ("not base64!"), want []byte (a []byte is sent as standard base64`}},
	}
	for _, c := range bad {
		_, err := r.Invoke(generic, c.method, c.arg)
		var e *spi.Error
		if !errors.As(err, &e) || e.Status != spi.StatusBadRequest {
			t.Errorf("Invoke(%s, %#v): %v, want BAD_REQUEST", c.method, c.arg, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Invoke(%s, %#v): %q lacks %q", c.method, c.arg, err, w)
			}
		}
		if strings.Contains(err.Error(), "**") || strings.Contains(err.Error(), "a int") {
			t.Errorf("Invoke(%s, %#v): %q names an internal type", c.method, c.arg, err)
		}
	}
	for _, arg := range []any{map[string]any{"value": "bob"}, []any{1}} {
		_, err := r.Invoke(ctxT(t), "Greet", arg)
		var e *spi.Error
		if !errors.As(err, &e) || e.Status != spi.StatusSerializationError || !strings.Contains(err.Error(), "-p codec=json") ||
			strings.Contains(err.Error(), "the provider may have run it") {
			t.Errorf("Invoke(Greet, %#v) under protobuf: %v, want SERIALIZATION_ERROR before sending, pointing to -p codec=json", arg, err)
		}
	}
	j := referAs(t, r, "proto2.Greeter", "json")
	for _, c := range []struct {
		method string
		arg    any
		want   map[string]any
	}{
		{"Greet", map[string]any{"value": "bob"}, map[string]any{"value": "hello bob"}},
		{"Info", map[string]any{"name": "cy"}, map[string]any{"fullname": "cy"}},
	} {
		got, err := j.Invoke(ctxT(t), c.method, c.arg)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("codec=json Invoke(%s, %#v) = %#v, %v; want %#v", c.method, c.arg, got, err, c.want)
		}
	}
}

// referAs refers to the provider r calls, as service, with another codec.
func referAs(t *testing.T, r *kernel.Reference, service, codec string) *kernel.Reference {
	t.Helper()
	addr := r.URL().Address() // a direct reference: the provider's address
	c := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = c.Close() })
	j, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/"+service+"?timeout=5s&codec="+codec), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The stock binary is the consumer: it links no service's generated
// package, yet reads the well-known types (they come with the protobuf
// codec), and for a type it does not link it says how to get the result. A
// JSON object for a message goes with -p codec=json; under protobuf it is
// refused before sending, saying so.
func TestProto2_AirnodeCallUnderProtobuf(t *testing.T) {
	bin := buildAirnode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctx, Greeter{}, spi.MustParse("airnode://127.0.0.1:0/proto2.Greeter?codec=protobuf"))
	if err != nil {
		t.Fatal(err)
	}
	url := "airnode://" + e.URL().Address() + "/proto2.Greeter?codec=protobuf"
	plain := "airnode://" + e.URL().Address() + "/proto2.Greeter" // for -p codec=json
	callURL := func(u string, args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, append([]string{"call", u}, args...)...)
		cmd.Dir, cmd.Env = t.TempDir(), append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir())
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return strings.TrimSpace(out.String()), errOut.String(), err
	}
	call := func(args ...string) (string, string, error) {
		if len(args) > 2 && args[len(args)-1] == "codec=json" {
			return callURL(plain, args...)
		}
		return callURL(url, args...)
	}
	for _, c := range [][]string{
		{"Version", `{"value":2}`},
		{"Greet", `"bob"`, `{"value":"hello bob"}`},
		{"Greet", `{"value":"bob"}`, "-p", "codec=json", `{"value":"hello bob"}`},
		{"Info", `{"name":"ann"}`, "-p", "codec=json", `{"fullname":"ann"}`},
		{"Echo", `"aGVsbG8="`, `"aGVsbG8="`},
	} {
		args, want := c[:len(c)-1], c[len(c)-1]
		out, stderr, err := call(args...)
		if err != nil || out != want {
			t.Errorf("call %v: %q (stderr %q), %v; want %s", args, out, stderr, err, want)
		}
	}
	out, stderr, err := call("Greet", `{"value":"bob"}`)
	if err == nil || !strings.Contains(stderr, "SERIALIZATION_ERROR") || !strings.Contains(stderr, "-p codec=json") {
		t.Errorf("call Greet with a JSON object under protobuf: %q, stderr %q, %v; want SERIALIZATION_ERROR pointing to -p codec=json", out, stderr, err)
	}
	out, stderr, err = call("Secret")
	if err == nil || !strings.Contains(stderr, "BAD_RESPONSE") ||
		!strings.Contains(stderr, "message type proto2test.Secret is not linked into this program") ||
		!strings.Contains(stderr, "-p codec=json") {
		t.Errorf("call Secret: %q, stderr %q, %v; want BAD_RESPONSE saying the type is not linked and to use -p codec=json", out, stderr, err)
	}
}

// buildAirnode builds cmd/airnode into the test's temporary directory.
func buildAirnode(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "airnode")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/airnode/airnode/cmd/airnode").CombinedOutput(); err != nil {
		t.Fatal(fmt.Errorf("go build: %v\n%s", err, out))
	}
	return bin
}
