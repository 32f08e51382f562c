package failover

import "github.com/airnode/airnode/spi"

// Keys describes the URL keys Build reads (spi.KeyDescriber).
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: KeyRetries, Type: spi.KeyTypeInt, Default: "2", Doc: "extra attempts on another provider after a failure that left the request unprocessed, 0..100; a provider's value is its consumers' default; method-level allowed"},
		{Key: KeyIdempotent, Type: spi.KeyTypeBool, Default: "false", Doc: "the method may run twice, so SERVER_TIMEOUT, SERVER_ERROR and CHANNEL_INACTIVE after sending are retried too; a provider's value is its consumers' default; method-level allowed"},
		{Key: KeyRetryTokens, Type: spi.KeyTypeInt, Default: "0", Doc: "retry budget of the reference, shared by its methods (gRPC's retryThrottling maxTokens): a failed attempt takes a token, a successful call gives retry.ratio back, and failover retries only while more than half are left, so an overload is not multiplied by retries+1; 0..1000, 0: off; read from the reference's URL only, service level (a method-level form or a provider's value has no effect: Refer and Export warn)", ServiceLevelOnly: true},
		{Key: KeyRetryRatio, Type: spi.KeyTypeString, Default: "0.1", Doc: "retry budget: tokens a successful call gives back (gRPC's tokenRatio), a decimal from 0.001 to 1; read with retry.tokens, from the reference's URL only, service level", ServiceLevelOnly: true},
	}
}

var _ spi.KeyDescriber = Builder{}
