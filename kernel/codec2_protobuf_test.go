package kernel

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// c2Level is a named int with its own JSON form: protobuf carries no
// named type.
type c2Level int

func (l c2Level) MarshalJSON() ([]byte, error) { return []byte(`"high"`), nil }

// c2Money has a text form: protobuf carries no Go struct.
type c2Money struct{ Cents int64 }

func (m c2Money) MarshalText() ([]byte, error) { return []byte("0.00 EUR"), nil }

// c2Picky refuses its own empty value: a codec's failure to encode that
// says nothing of real values, so Export keeps its method under json.
type c2Picky struct{ N int }

func (p c2Picky) MarshalJSON() ([]byte, error) {
	if p.N == 0 {
		return nil, errors.New("no zero")
	}
	return []byte(`{"N":1}`), nil
}

type c2Svc struct{ ran *atomic.Int64 }

func (s c2Svc) Lvl(ctx context.Context, l c2Level) (c2Level, error) { s.ran.Add(1); return l, nil }
func (s c2Svc) Up(ctx context.Context, n int64) (c2Level, error) {
	s.ran.Add(1)
	return c2Level(n), nil
}
func (s c2Svc) Money(ctx context.Context, m c2Money) (string, error) {
	s.ran.Add(1)
	return "x", nil
}
func (s c2Svc) Time(ctx context.Context, t time.Time) (string, error) {
	s.ran.Add(1)
	return t.String(), nil
}
func (s c2Svc) Obj(ctx context.Context) (any, error) {
	s.ran.Add(1)
	return map[string]any{"a": []any{int64(1)}}, nil
}
func (s c2Svc) Count(ctx context.Context, p string) (int64, error) { return int64(len(p)), nil }
func (s c2Svc) Picky(ctx context.Context) (c2Picky, error)         { return c2Picky{N: 1}, nil }

// nu45 finding 1: under codec=protobuf, Export refuses (WARN, not in
// methods, SERVICE_NOT_FOUND unrun) the methods whose types protobuf
// cannot encode or decode, as the codec itself says for their empty
// values: a named int with MarshalJSON, a struct with MarshalText and
// time.Time, which it let through because they have their own encodings.
// A provider of another codec serves them; a consumer calling it with
// codec=protobuf gets BAD_REQUEST before the method runs, and a result
// protobuf cannot encode at run time (an any holding a JSON object) fails
// in words for the provider's side (finding 6).
func TestCodec2_ProtobufExportRefusesWhatItCannotCarry(t *testing.T) {
	ran := new(atomic.Int64)
	cat := testCatalogs(t)
	var log jsonLog
	p := NewNode(cat, WithLogger(log.logger()), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), c2Svc{ran}, spi.MustParse("airnode://127.0.0.1:0/c2.Svc?codec=protobuf"))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.URL().ParamOr("methods", ""); got != "Count,Obj" { // Picky too: protobuf's failure is its own, not MarshalJSON's
		t.Errorf("methods=%s, want Count,Obj", got)
	}
	lines := log.lines(t)
	for m, want := range map[string]string{
		"Lvl":   "codec protobuf cannot encode argument 0 (kernel.c2Level): protobuf: cannot encode Go type kernel.c2Level: want a proto.Message, or nil, bool, string, []byte, an integer, a float or map[string]string (a named type is none of them, whatever its methods: convert it to int",
		"Up":    "codec protobuf cannot encode the result (kernel.c2Level)",
		"Money": "codec protobuf cannot encode argument 0 (kernel.c2Money): protobuf: cannot encode Go type kernel.c2Money: want a proto.Message, or nil, bool, string, []byte, an integer, a float or map[string]string (a Go struct is no proto.Message",
		"Time":  "codec protobuf cannot encode argument 0 (time.Time): protobuf: cannot encode Go type time.Time: want a proto.Message, or nil, bool, string, []byte, an integer, a float or map[string]string: use timestamppb.Timestamp",
		"Picky": "codec protobuf cannot encode the result (kernel.c2Picky)", // its MarshalJSON refuses the empty value, but protobuf never calls it
	} {
		l := find(lines, "export c2.Svc: not serving method "+m, map[string]string{"level": "WARN"})
		if l == nil || !strings.Contains(l["msg"].(string), want) {
			t.Errorf("%s: no WARN containing %q:\n%v", m, want, lines)
		}
	}
	c := NewNode(cat, WithLogger(quiet))
	t.Cleanup(func() { _ = c.Close() })
	addr := e.URL().Address()
	r := refer(t, c, "airnode://"+addr+"/c2.Svc?codec=protobuf")
	var lv c2Level
	if err := r.Call(ctxT(t), "Up", []any{int64(2)}, &lv); spi.StatusOf(err) != spi.StatusServiceNotFound ||
		!strings.Contains(err.Error(), "codec protobuf cannot encode the result (kernel.c2Level)") {
		t.Errorf("Up: %v; want SERVICE_NOT_FOUND naming the codec and the result", err)
	}
	var n int64
	if err := r.Call(ctxT(t), "Count", []any{"abc"}, &n); err != nil || n != 3 {
		t.Errorf("Count = %d, %v", n, err)
	}

	// The same service under msgpack serves every method; a protobuf
	// caller of one whose types protobuf cannot carry is refused unrun.
	e2, err := p.Export(ctxT(t), c2Svc{ran}, spi.MustParse("airnode://127.0.0.1:0/c2.Svc2"))
	if err != nil {
		t.Fatal(err)
	}
	if got := e2.URL().ParamOr("methods", ""); got != "Count,Lvl,Money,Obj,Picky,Time,Up" {
		t.Errorf("msgpack: methods=%s, want every method", got)
	}
	r2 := refer(t, c, "airnode://"+e2.URL().Address()+"/c2.Svc2?codec=protobuf")
	if err := r2.Call(ctxT(t), "Up", []any{int64(2)}, &lv); spi.StatusOf(err) != spi.StatusBadRequest ||
		!strings.Contains(err.Error(), "c2.Svc2.Up: codec protobuf cannot encode the result (kernel.c2Level)") ||
		!strings.Contains(err.Error(), "not run: leave the codec key out of the reference URL (airnode call: no -p codec=...) to call in the provider's own codec") {
		t.Errorf("Up under protobuf from a msgpack provider: %v; want BAD_REQUEST, not run, naming the result", err)
	}
	if err := r2.Call(ctxT(t), "Up", []any{int64(3)}, &lv); spi.StatusOf(err) != spi.StatusBadRequest { // the kept verdict
		t.Errorf("Up again: %v", err)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("%d calls of methods protobuf cannot carry ran", n)
	}
	var out any
	err = r2.Call(ctxT(t), "Obj", nil, &out)
	if spi.StatusOf(err) != spi.StatusSerializationError ||
		!strings.Contains(err.Error(), "the method ran, but its result could not be encoded in the call's codec protobuf: protobuf: the method returned a JSON object or array (map[string]any)") ||
		strings.Contains(err.Error(), "airnode call") {
		t.Errorf("Obj under protobuf: %v; want SERIALIZATION_ERROR in the provider's words", err)
	}
	if n := ran.Load(); n != 1 {
		t.Errorf("Obj ran %d times, want 1", n)
	}
	// msgpack callers get every method
	r3 := refer(t, c, "airnode://"+e2.URL().Address()+"/c2.Svc2")
	if err := r3.Call(ctxT(t), "Up", []any{int64(2)}, &lv); err != nil || lv != 2 {
		t.Errorf("Up under msgpack = %d, %v", lv, err)
	}

	// Under json a type whose own MarshalJSON refuses the empty value is
	// not refused: Export cannot tell the codec's failure from the type's.
	e3, err := p.Export(ctxT(t), c2Svc{ran}, spi.MustParse("airnode://127.0.0.1:0/c2.Svc3?codec=json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := e3.URL().ParamOr("methods", ""); got != "Count,Lvl,Money,Obj,Picky,Time,Up" {
		t.Errorf("json: methods=%s, want every method", got)
	}
}
