package kernel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/airnode/airnode/spi"
)

// Two versions of one service's struct, as two releases of a team's API
// package: v2 added Email to the user and Zip to its nested address.
type evoAddrV1 struct{ City string }

type evoUserV1 struct {
	ID   int64
	Name string
	Age  int
	Addr evoAddrV1
}

type evoAddrV2 struct{ City, Zip string }

type evoUserV2 struct {
	ID    int64
	Name  string
	Email string `json:",omitempty" msgpack:",omitempty"` // added in v2, optional
	Age   int
	Addr  evoAddrV2
}

// evoUsersV1 and evoUsersV2 are the provider's two releases. Put answers
// what it read, so the test sees which fields arrived.
type evoUsersV1 struct{}

func (evoUsersV1) Put(ctx context.Context, u evoUserV1) (string, error) {
	return fmt.Sprintf("v1 %d %s %d %s", u.ID, u.Name, u.Age, u.Addr.City), nil
}

func (evoUsersV1) PutPtr(ctx context.Context, u *evoUserV1, note string) (string, error) {
	return fmt.Sprintf("v1 %s %s", u.Name, note), nil
}

func (evoUsersV1) Get(ctx context.Context, id int64) (evoUserV1, error) {
	return evoUserV1{ID: id, Name: "ann", Age: 30, Addr: evoAddrV1{City: "Oslo"}}, nil
}

type evoUsersV2 struct{}

func (evoUsersV2) Put(ctx context.Context, u evoUserV2) (string, error) {
	return fmt.Sprintf("v2 %d %s %s %d %s %s", u.ID, u.Name, u.Email, u.Age, u.Addr.City, u.Addr.Zip), nil
}

func (evoUsersV2) PutPtr(ctx context.Context, u *evoUserV2, note string) (string, error) {
	return fmt.Sprintf("v2 %s %s %s", u.Name, u.Email, note), nil
}

func (evoUsersV2) Get(ctx context.Context, id int64) (evoUserV2, error) {
	return evoUserV2{ID: id, Name: "ann", Email: "a@x", Age: 30, Addr: evoAddrV2{City: "Oslo", Zip: "0150"}}, nil
}

// evoProvider exports impl on a free loopback port of a node of its own
// whose log the test reads.
func evoProvider(t *testing.T, impl any) (*Exporter, func() string) {
	t.Helper()
	var mu sync.Mutex
	var logs bytes.Buffer
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.Export(ctxT(t), impl, spi.MustParse("airnode://127.0.0.1:0/evo.Users"))
	if err != nil {
		t.Fatal(err)
	}
	return e, func() string {
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
}

// tester14 finding 1: a consumer upgraded before its provider sent a new
// optional field, set, and got BAD_REQUEST "unknown field" on every such
// call. Now a rolling upgrade works in either order, with both codecs: a
// newer consumer's fields (top level and nested, by value and by pointer)
// are ignored by the older provider, which logs each once at warn level
// naming the consumer; an older consumer's struct lacks the provider's
// new fields, which arrive as zero values.
func TestT14_1_RollingUpgradeEitherOrder(t *testing.T) {
	for _, codec := range []string{"msgpack", "json"} {
		t.Run(codec, func(t *testing.T) {
			ctx := ctxT(t)
			// Consumer first: the newer consumer calls the older provider.
			old, logs := evoProvider(t, evoUsersV1{})
			r := refer(t, consumer(t), "airnode://"+old.URL().Address()+"/evo.Users?codec="+codec)
			newer := evoUserV2{ID: 7, Name: "bob", Email: "b@x", Age: 3, Addr: evoAddrV2{City: "Rome", Zip: "00100"}}
			for range 3 {
				var s string
				if err := r.Call(ctx, "Put", []any{newer}, &s); err != nil || s != "v1 7 bob 3 Rome" {
					t.Fatalf("newer consumer Put to older provider = %q, %v; want \"v1 7 bob 3 Rome\"", s, err)
				}
				if err := r.Call(ctx, "PutPtr", []any{&newer, "n"}, &s); err != nil || s != "v1 bob n" {
					t.Fatalf("newer consumer PutPtr to older provider = %q, %v; want \"v1 bob n\"", s, err)
				}
			}
			var got evoUserV2
			if err := r.Call(ctx, "Get", []any{int64(1)}, &got); err != nil || got.Name != "ann" || got.Email != "" || got.Addr.City != "Oslo" {
				t.Errorf("newer consumer Get from older provider = %+v, %v", got, err)
			}
			out := logs()
			for _, method := range []string{"Put", "PutPtr"} {
				want := fmt.Sprintf(`evo.Users.%s: consumer 127.0.0.1:`, method)
				if n := strings.Count(out, want); n != 1 {
					t.Errorf("%s: the provider logged %d warnings naming the consumer, want 1 (once per method and field):\n%s", method, n, out)
				}
			}
			if !strings.Contains(out, `level=WARN`) || !strings.Contains(out, `unknown field \"Email\" in evoUserV1 (fields: ID, Name, Age, Addr)`) ||
				!strings.Contains(out, "a consumer newer than this provider?") || !strings.Contains(out, "consumer=127.0.0.1:") {
				t.Errorf("the provider's warning does not name the field, the struct's fields and the consumer:\n%s", out)
			}

			// Provider first: the older consumer calls the newer provider.
			nw, logs2 := evoProvider(t, evoUsersV2{})
			r2 := refer(t, consumer(t), "airnode://"+nw.URL().Address()+"/evo.Users?codec="+codec)
			var s string
			if err := r2.Call(ctx, "Put", []any{evoUserV1{ID: 8, Name: "cy", Age: 4, Addr: evoAddrV1{City: "Bern"}}}, &s); err != nil || s != "v2 8 cy  4 Bern " {
				t.Errorf("older consumer Put to newer provider = %q, %v; want \"v2 8 cy  4 Bern \"", s, err)
			}
			var v1 evoUserV1
			if err := r2.Call(ctx, "Get", []any{int64(2)}, &v1); err != nil || v1.Name != "ann" || v1.Addr.City != "Oslo" {
				t.Errorf("older consumer Get from newer provider = %+v, %v", v1, err)
			}
			if strings.Contains(logs2(), "unknown field") {
				t.Errorf("the newer provider logged an unknown field for an older consumer:\n%s", logs2())
			}
		})
	}
}

// A generic call — marked with the "generic" attachment, as `airnode
// call` marks its calls (Dubbo's rule) — keeps the typo check: a map key
// naming no field is BAD_REQUEST naming it, the struct's fields and the
// nearest one. The same map sent without the mark is a typed consumer's
// request: the key is ignored. Both codecs.
func TestT14_1_GenericCallKeepsTheTypoCheck(t *testing.T) {
	for _, codec := range []string{"msgpack", "json"} {
		t.Run(codec, func(t *testing.T) {
			e, logs := evoProvider(t, evoUsersV1{})
			r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/evo.Users?codec="+codec)
			arg := map[string]any{"ID": 1, "Nmae": "x", "Addr": map[string]any{"City": "Oslo"}}
			generic := spi.WithAttachments(ctxT(t), spi.AttachmentGeneric, spi.GenericTrue)
			_, err := r.Invoke(generic, "Put", arg)
			want := `evo.Users.Put argument 0 (kernel.evoUserV1): got a map with unknown field "Nmae" in evoUserV1 (fields: ID, Name, Age, Addr); did you mean "Name"?`
			var se *spi.Error
			if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || se.Message != want {
				t.Errorf("generic Put(%v): %v, want BAD_REQUEST %q", arg, err, want)
			}
			nested := map[string]any{"Name": "x", "Addr": map[string]any{"Ctiy": "Oslo"}}
			_, err = r.Invoke(spi.WithAttachments(ctxT(t), spi.AttachmentGeneric, "TRUE"), "Put", nested)
			if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || !strings.Contains(se.Message, `unknown field "Ctiy" in evoAddrV1 at .Addr (fields: City); did you mean "City"?`) {
				t.Errorf("generic Put(%v): %v, want BAD_REQUEST naming Ctiy at .Addr", nested, err)
			}
			if strings.Contains(logs(), "unknown field") {
				t.Errorf("a refused generic call was logged as a newer consumer's:\n%s", logs())
			}
			// generic=false, or no mark at all (Call; Invoke marks a map
			// argument itself): a typed consumer's rule
			v, err := r.Invoke(spi.WithAttachments(ctxT(t), spi.AttachmentGeneric, "false"), "Put", arg)
			if err != nil || v != "v1 1  0 Oslo" {
				t.Errorf("Put(%v) marked generic=false = %v, %v; want the key ignored", arg, v, err)
			}
			var s string
			if err := r.Call(ctxT(t), "Put", []any{arg}, &s); err != nil || s != "v1 1  0 Oslo" {
				t.Errorf("unmarked Put(%v) = %v, %v; want the key ignored", arg, s, err)
			}
			// a type mismatch is refused for every caller, as before
			_, err = r.Invoke(ctxT(t), "Put", map[string]any{"ID": "seven"})
			if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || !strings.Contains(se.Message, "evo.Users.Put argument 0") {
				t.Errorf("Put({ID: \"seven\"}): %v, want BAD_REQUEST", err)
			}
		})
	}
}

// Two keys naming one field ("Name" and "name") stay a BAD_REQUEST for
// every caller: which one wins is not the consumer's choice to make by
// accident, and no version of a struct sends both.
func TestT14_1_TwoKeysForOneFieldStayRefused(t *testing.T) {
	e, _ := evoProvider(t, evoUsersV1{})
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/evo.Users")
	_, err := r.Invoke(ctxT(t), "Put", map[string]any{"Name": "a", "name": "b"})
	if spi.StatusOf(err) != spi.StatusBadRequest || !strings.Contains(err.Error(), "both name Name") {
		t.Errorf("Put({Name, name}): %v, want BAD_REQUEST naming both keys", err)
	}
}

// The unknown fields an export logs are bounded: consumers choose the
// keys. The last one remembered says so.
func TestT14_1_UnknownFieldsLogBounded(t *testing.T) {
	var u unknownFields
	for i := range maxUnknownFields {
		log, last := u.First("Put", fmt.Sprint("f", i))
		if !log || last != (i == maxUnknownFields-1) {
			t.Fatalf("field %d: log %v, last %v", i, log, last)
		}
	}
	if log, _ := u.First("Put", "f0"); log {
		t.Error("a field already logged is logged again")
	}
	if log, _ := u.First("Put", "one more"); log {
		t.Error("a field past the bound is logged")
	}
}

// unknownField recognises only the codecs' unknown-field mismatch.
func TestT14_1_UnknownFieldOnlyForUnknownKeys(t *testing.T) {
	if got := spi.UnknownField(errors.New("unknown field \"x\"")); got != "" {
		t.Errorf("a plain error: %q, want \"\"", got)
	}
	if got := spi.UnknownField(argError("s", "m", 0, "T", mismatch("a map with unknown field \"x\" in T (fields: A)"))); got != `unknown field "x" in T (fields: A)` {
		t.Errorf("an unknown field: %q", got)
	}
	if got := spi.UnknownField(argError("s", "m", 0, "T", mismatch("an integer (1)"))); got != "" {
		t.Errorf("a type mismatch: %q, want \"\"", got)
	}
	// inside a codec's own mismatch that says where, or joined
	inner := fmt.Errorf("decode: %w", mismatch("a map with unknown field \"x\" in T (fields: A)"))
	for _, err := range []error{wrapped{"T.a: got a map", inner}, errors.Join(errors.New("other"), inner)} {
		if got := spi.UnknownField(argError("s", "m", 0, "T", err)); got != `unknown field "x" in T (fields: A)` {
			t.Errorf("%v: %q", err, got)
		}
	}
}

// wrapped is a codec's mismatch around another error.
type wrapped struct {
	got   string
	cause error
}

func (w wrapped) Error() string { return w.got + ": " + w.cause.Error() }
func (w wrapped) Got() string   { return w.got }
func (w wrapped) Unwrap() error { return w.cause }

type mismatch string

func (m mismatch) Error() string { return string(m) }
func (m mismatch) Got() string   { return string(m) }
