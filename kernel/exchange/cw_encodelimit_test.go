package exchange

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/airnode/airnode/extensions/codec/json"
	"github.com/airnode/airnode/extensions/codec/protobuf"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// BenchmarkEncodeRequest is sendCall's encoding of a small request (a
// 100-byte argument) into a frame under the default payload limit, per
// bundled codec: the per-call cost of stopping at the limit
// (frameBuf.limit, spi.Reserver).
//
//	go test -run='^$' -bench='^BenchmarkEncodeRequest$' -count=10 ./kernel/exchange
func BenchmarkEncodeRequest(b *testing.B) {
	payload := make([]byte, 100)
	for _, tc := range []struct {
		name  string
		codec spi.Codec
		arg   any
	}{
		{"msgpack", mpCodec{}, payload},
		{"json", json.Codec{}, payload},
		{"protobuf-bytes", protobuf.Codec{}, payload},
		{"protobuf-message", protobuf.Codec{}, wrapperspb.Bytes(payload)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{tc.arg}}
			b.ReportAllocs()
			for b.Loop() {
				f := getFrame()
				f.limit = protocol.HeaderLen + int(protocol.DefaultPayload)
				if err := encodeRequest(f, tc.codec, inv, time.Second); err != nil {
					b.Fatal(err)
				}
				putFrame(f)
			}
		})
	}
}
