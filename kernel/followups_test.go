package kernel

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// Reference.Invoke marks a call generic (spi.AttachmentGeneric=true, as
// Dubbo's GenericService marks $invoke) when an argument is a generic
// value, a map[string]any or an []any — what a Go gateway relaying JSON
// passes — and only then: typed values (structs, scalars, typed maps and
// slices) and Call leave the call unmarked, and a mark the caller set
// itself, "false" included, is kept. A generic provider that answers the
// attachment it received shows what was sent.
func TestFollowups2_InvokeMarksGenericArgumentsOnly(t *testing.T) {
	ctx := ctxT(t)
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.ExportInvoker(ctx, spi.MustParse("airnode://127.0.0.1:0/gen.Mark"),
		spi.InvokerFunc(func(_ context.Context, inv *spi.Invocation) spi.Result {
			v, ok := inv.Attachments[spi.AttachmentGeneric]
			if !ok {
				v = "(none)"
			}
			return spi.Result{Value: v}
		}))
	if err != nil {
		t.Fatal(err)
	}
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/gen.Mark")
	for _, c := range []struct {
		name string
		ctx  context.Context
		args []any
		want string
	}{
		{"a map[string]any", ctx, []any{map[string]any{"ID": 1}}, "true"},
		{"an []any after a scalar", ctx, []any{"x", []any{1, 2}}, "true"},
		{"a struct", ctx, []any{evoUserV1{ID: 1}}, "(none)"},
		{"a pointer to a struct", ctx, []any{&evoUserV1{ID: 1}}, "(none)"},
		{"scalars", ctx, []any{1, "x", 2.5}, "(none)"},
		{"no argument", ctx, nil, "(none)"},
		{"a typed map and slice", ctx, []any{map[string]int{"a": 1}, []string{"b"}}, "(none)"},
		{"a map with the caller's false", spi.WithAttachments(ctx, spi.AttachmentGeneric, "false"), []any{map[string]any{"ID": 1}}, "false"},
		{"a map with the caller's bean", spi.WithAttachments(ctx, spi.AttachmentGeneric, "bean"), []any{map[string]any{"ID": 1}}, "bean"},
		{"a struct with the caller's true", spi.WithAttachments(ctx, spi.AttachmentGeneric, "true", "tenant", "x"), []any{evoUserV1{}}, "true"},
	} {
		v, err := r.Invoke(c.ctx, "M", c.args...)
		if err != nil || v != c.want {
			t.Errorf("Invoke with %s: generic=%v, %v; want %s", c.name, v, err, c.want)
		}
	}
	var s string
	if err := r.Call(ctx, "M", []any{map[string]any{"ID": 1}}, &s); err != nil || s != "(none)" {
		t.Errorf("Call with a map[string]any: generic=%s, %v; want (none): Call is not marked", s, err)
	}
	// the caller's context is not changed by the mark
	if spi.OutgoingAttachments(ctx) != nil {
		t.Errorf("ctx got attachments: %v", spi.OutgoingAttachments(ctx))
	}
}

// What the mark does end to end: a gateway relaying JSON through
// Reference.Invoke gets the typo check (BAD_REQUEST naming the key and
// listing the fields, both codecs), while a typed Go consumer newer than
// its provider, through Invoke as through Call, has its extra field
// ignored.
func TestFollowups2_InvokeWithJSONArgumentsGetsTheTypoCheck(t *testing.T) {
	for _, codec := range []string{"msgpack", "json"} {
		t.Run(codec, func(t *testing.T) {
			e, logs := evoProvider(t, evoUsersV1{})
			r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/evo.Users?codec="+codec)
			relayed := map[string]any{"ID": int64(1), "Nmae": "x", "Addr": map[string]any{"City": "Oslo"}}
			_, err := r.Invoke(ctxT(t), "Put", relayed)
			want := `evo.Users.Put argument 0 (kernel.evoUserV1): got a map with unknown field "Nmae" in evoUserV1 (fields: ID, Name, Age, Addr); did you mean "Name"?`
			var se *spi.Error
			if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || se.Message != want {
				t.Errorf("Invoke Put(%v): %v, want BAD_REQUEST %q", relayed, err, want)
			}
			v, err := r.Invoke(ctxT(t), "Put", map[string]any{"ID": int64(2), "name": "cy", "Addr": map[string]any{"City": "Bern"}})
			if err != nil || v != "v1 2 cy 0 Bern" {
				t.Errorf("Invoke Put with known keys = %v, %v", v, err)
			}
			newer := evoUserV2{ID: 7, Name: "bob", Email: "b@x", Age: 3, Addr: evoAddrV2{City: "Rome", Zip: "00100"}}
			v, err = r.Invoke(ctxT(t), "Put", newer)
			if err != nil || v != "v1 7 bob 3 Rome" {
				t.Errorf("Invoke Put(%+v) = %v, %v; want the newer fields ignored", newer, v, err)
			}
			if strings.Contains(logs(), "Nmae") {
				t.Errorf("the refused generic call was logged as a newer consumer's:\n%s", logs())
			}
		})
	}
}
