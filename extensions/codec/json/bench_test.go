package json_test

import (
	"testing"

	"github.com/airnode/airnode/extensions/codec/json"
	"github.com/airnode/airnode/spi/spitest"
)

func BenchmarkRequest(b *testing.B) { spitest.BenchmarkCodec(b, json.Codec{}) }
