package bench_test

import (
	"bytes"
	"sync"
	"testing"

	vm "github.com/vmihailenco/msgpack/v5"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
)

// BenchmarkRequestCodec prices the per-call codec work of one 100-byte Echo
// request through the msgpack codec: "new-encoder"/"new-decoder" never
// release theirs (a new one per frame, as before issue 9), "released" hand
// them back with spi.Release after the frame as the exchange does (the codec
// pools them). vmihailenco/msgpack's own encoder and decoder, new and from a
// sync.Pool, without airnode's wrapper and length pre-walk, are the floor.
// Through the codec API the five decode targets escape (5 allocations) and
// the payload is boxed for Encode (1): the caller's, not the codec's.
//
//	go test -run '^$' -bench RequestCodec -benchmem ./bench
func BenchmarkRequestCodec(b *testing.B) {
	payload := bytes.Repeat([]byte{'p'}, 100)
	att := map[string]string{"timeout": "1000"}
	encode := func(buf *bytes.Buffer) spi.Encoder {
		enc := msgpack.Codec{}.NewEncoder(buf)
		_ = enc.Encode("demo.Echo")
		_ = enc.Encode("Echo")
		_ = enc.Encode(att)
		_ = enc.Encode(1)
		_ = enc.Encode(payload)
		return enc
	}
	var body bytes.Buffer
	encode(&body)
	frame := body.Bytes()

	b.Run("encode/new-encoder", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			encode(&buf)
		}
	})
	b.Run("encode/released", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			spi.Release(encode(&buf))
		}
	})
	b.Run("encode/pooled-vm-encoder", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			enc := encoders.Get().(*vm.Encoder)
			enc.Reset(&buf)
			_ = enc.EncodeString("demo.Echo")
			_ = enc.EncodeString("Echo")
			_ = enc.Encode(att)
			_ = enc.EncodeInt(1)
			_ = enc.EncodeBytes(payload)
			enc.Reset(nil)
			encoders.Put(enc)
		}
	})
	decode := func(r *bytes.Reader) spi.Decoder {
		dec := msgpack.Codec{}.NewDecoder(r)
		var service, method string
		var a map[string]string
		var n int
		var arg any
		_ = dec.Decode(&service)
		_ = dec.Decode(&method)
		_ = dec.Decode(&a)
		_ = dec.Decode(&n)
		_ = dec.Decode(&arg)
		return dec
	}
	b.Run("decode/new-decoder", func(b *testing.B) {
		b.ReportAllocs()
		var rd bytes.Reader
		for b.Loop() {
			rd.Reset(frame)
			decode(&rd)
		}
	})
	b.Run("decode/released", func(b *testing.B) {
		b.ReportAllocs()
		var rd bytes.Reader
		for b.Loop() {
			rd.Reset(frame)
			spi.Release(decode(&rd))
		}
	})
	// vmihailenco's decoder without airnode's wrapper and length pre-walk
	// (isolates them), then the same decoder from a pool.
	plain := func(dec *vm.Decoder) {
		service, _ := dec.DecodeString()
		method, _ := dec.DecodeString()
		var a map[string]string
		_ = dec.Decode(&a)
		n, _ := dec.DecodeInt()
		arg, _ := dec.DecodeBytes()
		_, _, _, _ = service, method, n, arg
	}
	b.Run("decode/new-vm-decoder", func(b *testing.B) {
		b.ReportAllocs()
		var rd bytes.Reader
		for b.Loop() {
			rd.Reset(frame)
			plain(vm.NewDecoder(&rd))
		}
	})
	b.Run("decode/pooled-vm-decoder", func(b *testing.B) {
		b.ReportAllocs()
		var rd bytes.Reader
		for b.Loop() {
			rd.Reset(frame)
			dec := decoders.Get().(*vm.Decoder)
			dec.Reset(&rd)
			plain(dec)
			dec.Reset(nil)
			decoders.Put(dec)
		}
	})
}

var (
	encoders = sync.Pool{New: func() any {
		e := vm.NewEncoder(nil)
		e.SetCustomStructTag("json")
		e.UseCompactInts(true)
		return e
	}}
	decoders = sync.Pool{New: func() any { return vm.NewDecoder(nil) }}
)
