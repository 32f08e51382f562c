package leastactive

import (
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Keys describes the provider keys the balancer weighs providers by
// (spi.KeyDescriber): weight, warmup and timestamp (package warmup).
func (Builder) Keys() []spi.KeyDoc { return warmup.TieBreakKeys() }

var _ spi.KeyDescriber = Builder{}
