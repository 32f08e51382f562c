package protobuf_test

import (
	"testing"

	"github.com/airnode/airnode/extensions/codec/protobuf"
	"github.com/airnode/airnode/spi/spitest"
)

func BenchmarkRequest(b *testing.B) { spitest.BenchmarkCodec(b, protobuf.Codec{}) }
