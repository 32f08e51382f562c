package protobuf_test

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/airnode/airnode/extensions/codec/protobuf"
	"github.com/airnode/airnode/spi"
)

// FuzzDecode: any body decodes into the exchange's targets with an error or
// a value, never a panic, a hang or a huge allocation; the released decoder
// then comes back from the pool reading a valid body right.
//
//	go test -fuzz=FuzzDecode -fuzztime=60s ./extensions/codec/protobuf
func FuzzDecode(f *testing.F) {
	var body bytes.Buffer
	enc := protobuf.Codec{}.NewEncoder(&body)
	for _, v := range []any{"demo.Echo", "Echo", map[string]string{"timeout": "1000"}, 1, wrapperspb.String("x"), timestamppb.Now()} {
		if err := enc.Encode(v); err != nil {
			f.Fatal(err)
		}
	}
	valid := body.Bytes()
	f.Add(valid)
	f.Add([]byte{byte(protobuf.KindString), 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{byte(protobuf.KindMessage), 3, 'a', '.', 'b', 0})
	f.Add(append([]byte{byte(protobuf.KindJSON), 13}, `{"v":[1,"x"]}`...))
	f.Fuzz(func(t *testing.T, in []byte) {
		dec := protobuf.Codec{}.NewDecoder(bytes.NewReader(in))
		var (
			s  string
			m  map[string]string
			n  int
			v  any
			b  []byte
			i8 int8
			ts *timestamppb.Timestamp
			sv wrapperspb.StringValue
		)
		for _, p := range []any{&s, &m, &n, &v, &b, &i8, &ts, &sv} {
			_ = dec.Decode(p)
		}
		spi.Release(dec)
		dec = protobuf.Codec{}.NewDecoder(bytes.NewReader(valid))
		if err := dec.Decode(&s); err != nil || s != "demo.Echo" {
			t.Fatalf("after a released decoder read % x: %q, %v", in, s, err)
		}
		spi.Release(dec)
	})
}
