package consistenthash

import (
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Keys describes the URL keys the balancer reads (spi.KeyDescriber):
// hash.nodes and hash.arguments of the reference, and the providers'
// weight (0 leaves a provider out of the ring; warm-up does not apply).
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: KeyNodes, Type: spi.KeyTypeInt, Default: "160", Doc: "virtual nodes per provider on the ring, 1..65536; method-level allowed"},
		{Key: KeyArguments, Type: spi.KeyTypeIntList, Default: DefaultArguments, Doc: "indexes of the arguments hashed, each >= 0 and given once (0,2); method-level allowed"},
		weightKey(),
	}
}

// weightKey is warmup.WeightKey saying what this balancer does with the
// weight: only 0 counts (tester62: the shared line read as if weights
// shared out the keys).
func weightKey() spi.KeyDoc {
	k := warmup.WeightKey()
	k.Doc += "; otherwise not used: every provider gets hash.nodes points on the ring, and warm-up does not apply"
	return k
}

var _ spi.KeyDescriber = Builder{}
