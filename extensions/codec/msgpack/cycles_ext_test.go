package msgpack_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	vm "github.com/vmihailenco/msgpack/v5"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
)

// Node2 is tester10's cyclic value: a linked node, as an ORM's
// parent/child graph.
type Node2 struct {
	Name string
	Next *Node2
}

// encode encodes v with the codec into a fresh buffer.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.Codec{}.NewEncoder(&buf)
	defer spi.Release(enc)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// wantRefused checks that err is a SERIALIZATION_ERROR whose text holds
// every one of want, and that nothing was written.
func wantRefused(t *testing.T, what string, b []byte, err error, want ...string) {
	t.Helper()
	var se *spi.Error
	if !errors.As(err, &se) || se.Status != spi.StatusSerializationError {
		t.Fatalf("%s: error %v, want a SERIALIZATION_ERROR", what, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not say %q", what, err, w)
		}
	}
	if len(b) != 0 {
		t.Errorf("%s: %d bytes written before the refusal", what, len(b))
	}
}

// tester10's finding 2: a cyclic value killed the process with a fatal
// stack overflow in msgpack's encoder. Encode now refuses it, in
// encoding/json's words, naming the type, and the encoder still works.
func TestCyclicValueIsRefused(t *testing.T) {
	n := &Node2{Name: "a"}
	n.Next = n
	b, err := encode(n)
	wantRefused(t, "n.Next = n", b, err, "msgpack: encode *msgpack_test.Node2: encountered a cycle via *msgpack_test.Node2")

	// A longer loop, a value (not a pointer) at the top, a slice of them.
	a, c := &Node2{Name: "a"}, &Node2{Name: "c"}
	a.Next, c.Next = c, a
	b, err = encode(*a)
	wantRefused(t, "a → c → a", b, err, "encountered a cycle via *msgpack_test.Node2")
	b, err = encode([]*Node2{{Name: "ok"}, a})
	wantRefused(t, "[]*Node2 holding a loop", b, err, "encountered a cycle via")

	// The pooled encoders keep working, for the same type acyclic.
	ok := &Node2{Name: "x", Next: &Node2{Name: "y"}}
	b, err = encode(ok)
	if err != nil {
		t.Fatal(err)
	}
	var back Node2
	if err := (msgpack.Codec{}).NewDecoder(bytes.NewReader(b)).Decode(&back); err != nil || back.Next == nil || back.Next.Name != "y" {
		t.Fatalf("acyclic after a refusal: %+v, %v", back, err)
	}
}

// A generic value holding itself: a map[string]any as its own value, a
// []any as its own element, an any pointing at itself.
func TestGenericValueHoldingItselfIsRefused(t *testing.T) {
	m := map[string]any{"name": "m"}
	m["self"] = m
	b, err := encode(m)
	wantRefused(t, "map holding itself", b, err, "encountered a cycle via map[string]interface {}")

	deep := map[string]any{"l": []any{1, map[string]any{"k": m}}}
	b, err = encode(deep)
	wantRefused(t, "map holding a map holding itself", b, err, "encountered a cycle via map[string]interface {}")

	s := []any{"x", nil}
	s[1] = s
	b, err = encode(s)
	wantRefused(t, "slice holding itself", b, err, "encountered a cycle via []interface {}")

	var x any
	x = &x
	b, err = encode(x)
	wantRefused(t, "any pointing at itself", b, err, "encountered a cycle via *interface {}")

	type Holder struct {
		Meta map[string]any
	}
	h := Holder{Meta: map[string]any{}}
	h.Meta["h"] = &h
	b, err = encode(h)
	wantRefused(t, "struct whose map holds it", b, err, "encountered a cycle via")
}

// A field msgpack does not encode (a json:"-" or msgpack:"-" back-pointer,
// the usual way to break an ORM cycle, or an unexported one) is not
// walked: such a value encodes.
func TestSkippedBackPointerEncodes(t *testing.T) {
	type Child struct {
		Name   string
		Parent any `json:"-"`
		Up     any `msgpack:"-"`
		up     any
	}
	type Parent struct {
		Name     string
		Children []*Child
	}
	p := &Parent{Name: "p"}
	c := &Child{Name: "c", Parent: p, Up: p, up: p}
	p.Children = []*Child{c}
	b, err := encode(p)
	if err != nil {
		t.Fatalf("back-pointer json:\"-\": %v", err)
	}
	var back map[string]any
	if err := (msgpack.Codec{}).NewDecoder(bytes.NewReader(b)).Decode(&back); err != nil {
		t.Fatal(err)
	}
	if got := back["Children"].([]any)[0].(map[string]any); len(got) != 1 || got["Name"] != "c" {
		t.Errorf("child = %v, want only its Name", got)
	}

	// The same value, cyclic through a field that is encoded, is refused.
	type Loop struct {
		Name   string
		Parent any `json:"parent"`
	}
	l := &Loop{Name: "l"}
	l.Parent = l
	b, err = encode(l)
	wantRefused(t, "through a tagged field", b, err, "encountered a cycle via *msgpack_test.Loop")
}

// A value that shares a part without reaching itself (a diamond: two
// fields pointing at one node) is no cycle: it encodes, the part twice,
// as encoding/json does.
func TestSharedValueIsNoCycle(t *testing.T) {
	type Pair struct{ A, B *Node2 }
	shared := &Node2{Name: "s"}
	if _, err := encode(Pair{A: shared, B: shared}); err != nil {
		t.Fatalf("diamond: %v", err)
	}
	m := map[string]any{"k": 1}
	if _, err := encode([]any{m, m, map[string]any{"again": m}}); err != nil {
		t.Fatalf("shared map: %v", err)
	}
}

// list returns a linked list of n nodes.
func list(n int) *Node2 {
	var head *Node2
	for range n {
		head = &Node2{Name: "n", Next: head}
	}
	return head
}

// A deep acyclic value encodes up to MaxDepth (10,000) levels of nesting,
// the bound every airnode decoder and encoding/json's decoder put on a
// body, and decodes back; one level more is refused at the encoder with a
// depth error (no peer would read it, and a million-long list would
// exhaust msgpack's stack as a cycle does).
func TestDeepAcyclicValue(t *testing.T) {
	b, err := encode(list(msgpack.MaxDepth))
	if err != nil {
		t.Fatalf("a %d-long list: %v", msgpack.MaxDepth, err)
	}
	var back *Node2
	if err := (msgpack.Codec{}).NewDecoder(bytes.NewReader(b)).Decode(&back); err != nil {
		t.Fatalf("decoding the %d-long list: %v", msgpack.MaxDepth, err)
	}
	n := 0
	for p := back; p != nil; p = p.Next {
		n++
	}
	if n != msgpack.MaxDepth {
		t.Errorf("decoded %d nodes, want %d", n, msgpack.MaxDepth)
	}

	b, err = encode(list(msgpack.MaxDepth + 1))
	wantRefused(t, "one level more", b, err, "nesting deeper than 10000 maps and arrays")
	b, err = encode(list(1_000_000))
	wantRefused(t, "a million-long list", b, err, "nesting deeper than 10000")

	// The generic form: 10,000 nested arrays encode, 10,001 do not.
	var deep any = "leaf"
	for range msgpack.MaxDepth {
		deep = []any{deep}
	}
	if _, err := encode(deep); err != nil {
		t.Fatalf("%d nested arrays: %v", msgpack.MaxDepth, err)
	}
	b, err = encode([]any{deep})
	wantRefused(t, "10,001 nested arrays", b, err, "nesting deeper than 10000")
}

// A chain of pointers with no map or array in it (type P *P) cannot take
// the stack either.
func TestPointerChainIsBounded(t *testing.T) {
	type P *P
	var x P
	x = &x
	b, err := encode(x)
	wantRefused(t, "x = &x", b, err, "encountered a cycle via msgpack_test.P")
}

// selfish encodes itself: what it writes is its own, and the walk does not
// look inside.
type selfish struct{ Self *selfish }

func (s *selfish) EncodeMsgpack(e *vm.Encoder) error { return e.EncodeString("me") }

// A type that encodes itself (EncodeMsgpack, time.Time) is a leaf even when
// its fields would cycle; the common values are not walked at all.
func TestLeavesAndCommonValues(t *testing.T) {
	s := &selfish{}
	s.Self = s
	if _, err := encode(s); err != nil {
		t.Fatalf("EncodeMsgpack: %v", err)
	}
	for _, v := range []any{nil, "s", []byte("b"), 1, int64(2), 2.5, true, time.Now(), map[string]string{"a": "b"},
		[]string{"x"}, struct{ A, B int }{1, 2}, []struct{ X string }{{"x"}}, map[string][]int{"k": {1}}} {
		if _, err := encode(v); err != nil {
			t.Errorf("%T: %v", v, err)
		}
	}
}

// CheckCycles with no fallback tag is msgpack.Marshal's view: a json:"-"
// field is encoded there, so a cycle through it is refused.
func TestCheckCyclesFallbackTag(t *testing.T) {
	type Child struct {
		Name   string
		Parent *Child `json:"-"`
	}
	c := &Child{Name: "c"}
	c.Parent = c
	if err := msgpack.CheckCycles(c, "json"); err != nil {
		t.Errorf(`CheckCycles(c, "json"): %v, want nil (the field is skipped)`, err)
	}
	err := msgpack.CheckCycles(c, "")
	if err == nil || !strings.Contains(err.Error(), "encountered a cycle via *msgpack_test.Child") {
		t.Errorf(`CheckCycles(c, ""): %v, want a cycle`, err)
	}
}

// Cycle checks of one type from many goroutines share its shape.
func TestCheckCyclesConcurrent(t *testing.T) {
	n := &Node2{Name: "a"}
	n.Next = n
	done := make(chan error, 8)
	for range 8 {
		go func() {
			for range 100 {
				if _, err := encode(n); err == nil {
					done <- errors.New("a cycle encoded")
					return
				}
				if _, err := encode(list(3)); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// A value decoded generically is acyclic and no deeper than the decoder's
// bound, so the cycle check must never refuse it: every body that decodes
// encodes again.
//
//	go test -run '^$' -fuzz FuzzEncodeDecodedValue -fuzztime 15s ./extensions/codec/msgpack
func FuzzEncodeDecodedValue(f *testing.F) {
	for _, v := range []any{"s", int64(-3), []any{1, "x", []any{}}, map[string]any{"a": map[string]any{"b": []any{nil, 2.5}}}} {
		b, err := encode(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v any
		dec := msgpack.Codec{}.NewDecoder(bytes.NewReader(body))
		defer spi.Release(dec)
		if dec.Decode(&v) != nil {
			return
		}
		if _, err := encode(v); err != nil {
			t.Fatalf("decoded %T does not encode: %v", v, err)
		}
	})
}
