package msgpack_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func BenchmarkRequest(b *testing.B) { spitest.BenchmarkCodec(b, msgpack.Codec{}) }

// BenchmarkEncoder prices NewEncoder, one Encode of a 100-byte string into a
// reused buffer, and Release ("released", pooled) against the same without
// Release ("unreleased": a new encoder per body, as before pooling).
//
//	go test -run '^$' -bench 'Encoder|Decoder' -benchmem -count 6 ./extensions/codec/msgpack
func BenchmarkEncoder(b *testing.B) {
	var arg any = strings.Repeat("a", 100) // boxed once: the caller's cost, not the codec's
	for _, release := range []bool{true, false} {
		b.Run(variant(release), func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				enc := msgpack.Codec{}.NewEncoder(&buf)
				if err := enc.Encode(arg); err != nil {
					b.Fatal(err)
				}
				if release {
					spi.Release(enc)
				}
			}
		})
	}
}

// BenchmarkDecoder prices NewDecoder over a *bytes.Reader, one Decode of a
// 100-byte string into a *string and into a *any, and Release, against the
// same without Release.
func BenchmarkDecoder(b *testing.B) {
	var body bytes.Buffer
	if err := (msgpack.Codec{}).NewEncoder(&body).Encode(strings.Repeat("a", 100)); err != nil {
		b.Fatal(err)
	}
	for _, target := range []string{"string", "any"} {
		for _, release := range []bool{true, false} {
			b.Run(target+"/"+variant(release), func(b *testing.B) {
				var (
					r bytes.Reader
					s string
					v any
				)
				p := any(&s)
				if target == "any" {
					p = &v
				}
				b.ReportAllocs()
				for b.Loop() {
					r.Reset(body.Bytes())
					dec := msgpack.Codec{}.NewDecoder(&r)
					if err := dec.Decode(p); err != nil {
						b.Fatal(err)
					}
					if release {
						spi.Release(dec)
					}
				}
			})
		}
	}
}

func variant(release bool) string {
	if release {
		return "released"
	}
	return "unreleased"
}
