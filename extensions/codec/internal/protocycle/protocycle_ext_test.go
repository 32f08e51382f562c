package protocycle_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/airnode/airnode/extensions/codec/internal/protocycle"
)

// nested returns n messages nested: google.protobuf.Values and
// ListValues alternating, a string at the bottom, and an empty message of
// the top one's type to unmarshal it into.
func nested(n int) (top, empty proto.Message) {
	v := structpb.NewStringValue("leaf")
	for k := 3; k <= n; k += 2 {
		v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{v}})
	}
	if n%2 == 0 {
		return &structpb.ListValue{Values: []*structpb.Value{v}}, &structpb.ListValue{}
	}
	return v, &structpb.Value{}
}

// proto.Marshal has no cycle check: a google.protobuf.Struct holding
// itself was a fatal stack overflow. Check refuses it, and a ListValue
// holding itself, naming the message.
func TestCyclicMessagesAreRefused(t *testing.T) {
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	s.Fields["self"] = structpb.NewStructValue(s)
	var ce *protocycle.CycleError
	if err := protocycle.Check(s); !errors.As(err, &ce) || !strings.Contains(err.Error(), "encountered a cycle via google.protobuf.") {
		t.Errorf("Struct holding itself: %v, want a *CycleError", err)
	}
	l := &structpb.ListValue{}
	l.Values = []*structpb.Value{structpb.NewStringValue("x"), structpb.NewListValue(l)}
	if err := protocycle.Check(structpb.NewListValue(l)); !errors.As(err, &ce) {
		t.Errorf("ListValue holding itself: %v, want a *CycleError", err)
	}
}

// A deep acyclic message passes as deep as proto.Unmarshal reads it, and
// one nesting more is refused with the depth error.
func TestDepthMatchesUnmarshal(t *testing.T) {
	for _, n := range []int{protocycle.MaxDepth - 1, protocycle.MaxDepth, protocycle.MaxDepth + 1, protocycle.MaxDepth + 2} {
		v, empty := nested(n)
		checkErr := protocycle.Check(v)
		b, err := proto.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		uerr := proto.Unmarshal(b, empty)
		if (checkErr == nil) != (uerr == nil) {
			t.Errorf("%d messages: Check says %v, Unmarshal says %v", n, checkErr, uerr)
		}
		if (checkErr == nil) != (n <= protocycle.MaxDepth) {
			t.Errorf("%d messages: Check says %v, want an error only beyond %d", n, checkErr, protocycle.MaxDepth)
		}
		if checkErr != nil && !strings.Contains(checkErr.Error(), "messages nested deeper than 10000") {
			t.Errorf("%d messages: %v, want the depth error", n, checkErr)
		}
	}
}

// Messages whose type cannot nest itself, shared sub-messages and a nil
// message pass.
func TestAcyclicMessagesPass(t *testing.T) {
	shared := structpb.NewStringValue("s")
	deep, _ := nested(50)
	for _, m := range []proto.Message{
		wrapperspb.String("x"),
		(*structpb.Struct)(nil),
		&structpb.ListValue{Values: []*structpb.Value{shared, shared}},
		deep,
	} {
		if err := protocycle.Check(m); err != nil {
			t.Errorf("%T: %v", m, err)
		}
	}
}
