package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/airnode/airnode/spi"
)

// Node is tester10's cyclic value: a linked node, as an ORM's parent/child
// graph.
type Node struct {
	Name string
	Next *Node
}

// Graph is a service handing out and taking linked nodes.
type Graph struct{}

// Loop returns a node whose Next is itself.
func (Graph) Loop(context.Context) (*Node, error) {
	n := &Node{Name: "loop"}
	n.Next = n
	return n, nil
}

// SelfMap returns a map holding itself.
func (Graph) SelfMap(context.Context) (map[string]any, error) {
	m := map[string]any{"name": "m"}
	m["self"] = m
	return m, nil
}

// Len counts the nodes of a list.
func (Graph) Len(_ context.Context, n *Node) (int, error) {
	c := 0
	for ; n != nil; n = n.Next {
		c++
	}
	return c, nil
}

// Chain returns a list of n nodes.
func (Graph) Chain(_ context.Context, n int) (*Node, error) {
	var head *Node
	for range n {
		head = &Node{Name: "n", Next: head}
	}
	return head, nil
}

// isSerialization reports whether err is a SERIALIZATION_ERROR saying all
// of want.
func isSerialization(err error, want ...string) bool {
	var se *spi.Error
	if !errors.As(err, &se) || se.Status != spi.StatusSerializationError {
		return false
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			return false
		}
	}
	return true
}

// tester10's finding 2: with msgpack a cyclic result killed the provider
// process (fatal stack overflow encoding the response) and a cyclic
// argument the consumer's. Now the provider answers SERIALIZATION_ERROR
// naming the type and keeps serving, and a cyclic argument fails the call
// at the consumer, before anything is sent, while the consumer keeps
// working; json behaves the same (encoding/json's own check).
func TestCyclicValuesEndToEnd(t *testing.T) {
	for _, codec := range []string{"msgpack", "json"} {
		t.Run(codec, func(t *testing.T) {
			r := exportAs(t, Graph{}, "acme.Graph", codec)

			var n *Node
			err := r.Call(ctxT(t), "Loop", nil, &n)
			if !isSerialization(err, "encountered a cycle via *integration.Node") {
				t.Errorf("cyclic result: %v, want a SERIALIZATION_ERROR naming *integration.Node", err)
			}
			var m map[string]any
			err = r.Call(ctxT(t), "SelfMap", nil, &m)
			if !isSerialization(err, "encountered a cycle via map[string]interface {}") {
				t.Errorf("map holding itself: %v, want a SERIALIZATION_ERROR naming the map", err)
			}

			loop := &Node{Name: "arg"}
			loop.Next = loop
			var c int
			err = r.Call(ctxT(t), "Len", []any{loop}, &c)
			if !isSerialization(err, "argument 0", "encountered a cycle via *integration.Node") {
				t.Errorf("cyclic argument: %v, want a SERIALIZATION_ERROR naming argument 0 and *integration.Node", err)
			}

			// Both nodes keep working, on the same connection.
			if err := r.Call(ctxT(t), "Len", []any{&Node{Name: "a", Next: &Node{Name: "b"}}}, &c); err != nil || c != 2 {
				t.Fatalf("Len after the refusals: %d, %v", c, err)
			}
			if err := r.Call(ctxT(t), "Chain", []any{3}, &n); err != nil || n == nil || n.Next == nil || n.Next.Next == nil {
				t.Fatalf("Chain(3) after the refusals: %+v, %v", n, err)
			}
		})
	}
}

// A deep acyclic value still travels: a 10,000-long list (MaxDepth
// levels of nesting, the decoders' bound) as a result and as an argument.
// With msgpack one node more is refused at the encoder with a depth error
// (json's decoder refuses it at the peer: "exceeded max depth").
func TestDeepListEndToEnd(t *testing.T) {
	const depth = 10000
	r := exportAs(t, Graph{}, "acme.Graph", "msgpack")
	var n *Node
	if err := r.Call(ctxT(t), "Chain", []any{depth}, &n); err != nil {
		t.Fatalf("Chain(%d): %v", depth, err)
	}
	var c int
	if err := r.Call(ctxT(t), "Len", []any{n}, &c); err != nil || c != depth {
		t.Fatalf("Len of the %d-long list: %d, %v", depth, c, err)
	}
	err := r.Call(ctxT(t), "Chain", []any{depth + 1}, &n)
	if !isSerialization(err, "nesting deeper than 10000") {
		t.Errorf("Chain(%d): %v, want a SERIALIZATION_ERROR for the depth", depth+1, err)
	}
	if err := r.Call(ctxT(t), "Len", []any{&Node{Name: "a"}}, &c); err != nil || c != 1 {
		t.Fatalf("Len after the refusal: %d, %v", c, err)
	}
}

// Messages is a service of protocol buffer messages.
type Messages struct{}

// Loop returns a google.protobuf.Struct holding itself.
func (Messages) Loop(context.Context) (*structpb.Struct, error) {
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	s.Fields["self"] = structpb.NewStructValue(s)
	return s, nil
}

// Size returns the number of fields of s.
func (Messages) Size(_ context.Context, s *structpb.Struct) (*structpb.Value, error) {
	return structpb.NewNumberValue(float64(len(s.GetFields()))), nil
}

// With codec=protobuf a cyclic message (proto.Marshal has no cycle check:
// a fatal stack overflow too) is a SERIALIZATION_ERROR at the provider as
// a result and at the consumer as an argument; both keep working.
func TestCyclicProtoMessageEndToEnd(t *testing.T) {
	r := exportAs(t, Messages{}, "acme.Messages", "protobuf")
	var s structpb.Struct
	err := r.Call(ctxT(t), "Loop", nil, &s)
	if !isSerialization(err, "encountered a cycle via google.protobuf.") {
		t.Errorf("cyclic result: %v, want a SERIALIZATION_ERROR naming the message", err)
	}
	loop := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	loop.Fields["self"] = structpb.NewStructValue(loop)
	var v structpb.Value
	err = r.Call(ctxT(t), "Size", []any{loop}, &v)
	if !isSerialization(err, "argument 0", "encountered a cycle via google.protobuf.") {
		t.Errorf("cyclic argument: %v, want a SERIALIZATION_ERROR naming argument 0", err)
	}
	ok, _ := structpb.NewStruct(map[string]any{"a": 1, "b": "x"})
	if err := r.Call(ctxT(t), "Size", []any{ok}, &v); err != nil || v.GetNumberValue() != 2 {
		t.Fatalf("Size after the refusals: %v, %v", v.GetNumberValue(), err)
	}
}
