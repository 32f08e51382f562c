package msgpack_test

import (
	"testing"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi/spitest"
)

func BenchmarkRequest(b *testing.B) { spitest.BenchmarkCodec(b, msgpack.Codec{}) }
