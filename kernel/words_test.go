package kernel

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// wordsSvc has parameters whose types reflect prints otherwise than a Go
// programmer writes them ([]uint8, interface {}).
type wordsSvc struct{}

func (wordsSvc) Bytes(_ context.Context, b []byte) ([]byte, error) { return b, nil }

func (wordsSvc) Files(_ context.Context, m map[string][]byte) (int, error) { return len(m), nil }

func (wordsSvc) Many(_ context.Context, parts ...[]byte) error { return nil }

func (wordsSvc) Generic(_ context.Context, m map[string]any, x [16]byte) error { return nil }

// The provider's errors name parameter types as the method declares them:
// "cannot decode into []byte", not reflect's []uint8; a skipped method's
// signature says any, not interface {}. Over real loopback, both codecs
// that refuse a map for a []byte.
func TestWordsArgumentErrorsWriteGoTypes(t *testing.T) {
	for _, codec := range []string{"msgpack", "json"} {
		p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
		t.Cleanup(func() { _ = p.Close() })
		e, err := p.Export(ctxT(t), wordsSvc{}, spi.MustParse("airnode://127.0.0.1:0/words.Svc?codec="+codec))
		if err != nil {
			t.Fatal(err)
		}
		addr := e.URL().Address()
		r := refer(t, consumer(t), "airnode://"+addr+"/words.Svc?codec="+codec)
		cases := []struct {
			method string
			args   []any
			want   string
		}{
			{"Bytes", []any{map[string]any{"a": 1}}, "words.Svc.Bytes argument 0 ([]byte): "},
			{"Files", []any{7}, "words.Svc.Files argument 0 (map[string][]byte): "},
			{"Generic", []any{map[string]any{}, map[string]any{"a": 1}}, "words.Svc.Generic argument 1 ([16]byte): "},
		}
		for _, c := range cases {
			_, err := r.Invoke(ctxT(t), c.method, c.args...)
			var se *spi.Error
			if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || !strings.HasPrefix(se.Message, c.want) {
				t.Errorf("%s: %s%v: %v, want BAD_REQUEST starting %q", codec, c.method, c.args, err, c.want)
			}
			if err != nil && (strings.Contains(err.Error(), "uint8") || strings.Contains(err.Error(), "interface {}")) {
				t.Errorf("%s: %s: %q names reflect's spelling of a type", codec, c.method, err)
			}
		}
		_, err = r.Invoke(ctxT(t), "Many", []byte("x"))
		var se *spi.Error
		if want := "Many(context.Context, ...[]byte) error: variadic"; !errors.As(err, &se) || se.Status != spi.StatusServiceNotFound || !strings.Contains(se.Message, want) {
			t.Errorf("%s: Many: %v, want SERVICE_NOT_FOUND containing %q", codec, err, want)
		}
	}
}
