package tcp_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) { spitest.TestTransport(t, tcp.Builder{}) }

func BenchmarkStream100B(b *testing.B) { spitest.BenchmarkTransport(b, tcp.Builder{}) }
