package bench_test

import (
	"bytes"
	"sync"
	"testing"

	vm "github.com/vmihailenco/msgpack/v5"

	"github.com/airnode/airnode/extensions/codec/msgpack"
)

// BenchmarkRequestCodec prices the per-call codec work of one 100-byte Echo
// request as the exchange does it (a new encoder per frame on the consumer,
// a new decoder per frame on the provider, service and method decoded into
// fresh strings), against the two changes suggested in bench/README.md:
// encoders and decoders reused from a sync.Pool (vmihailenco/msgpack's
// Reset), and service/method names looked up without allocating.
//
//	go test -run '^$' -bench RequestCodec -benchmem ./bench
func BenchmarkRequestCodec(b *testing.B) {
	payload := bytes.Repeat([]byte{'p'}, 100)
	att := map[string]string{"timeout": "1000"}
	encode := func(buf *bytes.Buffer) {
		enc := msgpack.Codec{}.NewEncoder(buf)
		_ = enc.Encode("demo.Echo")
		_ = enc.Encode("Echo")
		_ = enc.Encode(att)
		_ = enc.Encode(1)
		_ = enc.Encode(payload)
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
	b.Run("encode/pooled-encoder", func(b *testing.B) {
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
	b.Run("decode/new-decoder", func(b *testing.B) {
		b.ReportAllocs()
		var rd bytes.Reader
		for b.Loop() {
			rd.Reset(frame)
			dec := msgpack.Codec{}.NewDecoder(&rd)
			var service, method string
			var a map[string]string
			var n int
			var arg any
			_ = dec.Decode(&service)
			_ = dec.Decode(&method)
			_ = dec.Decode(&a)
			_ = dec.Decode(&n)
			_ = dec.Decode(&arg)
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
