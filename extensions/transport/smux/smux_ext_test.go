package smux_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) { spitest.TestTransport(t, smux.Builder{}) }
