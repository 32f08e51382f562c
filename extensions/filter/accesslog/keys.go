package accesslog

import "github.com/airnode/airnode/spi"

// Keys describes the URL keys Build reads (spi.KeyDescriber).
func (*Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: Key, Type: spi.KeyTypeString, Doc: "activates the filter: true or default: the node's logger, in its format; false: off; else a file path, appended to",
			ProviderLocal: true}, // a provider's file path: not published (tester92 #5)
		{Key: KeyArgs, Type: spi.KeyTypeBool, Default: "false", Doc: "also log the arguments (fmt %v, at most 1 KiB)"},
		{Key: KeyAttachments, Type: spi.KeyTypeString, Doc: "comma-separated attachment keys (trace,tenant) whose values each line prints, on both sides, at most 256 bytes each"},
	}
}

var _ spi.KeyDescriber = (*Builder)(nil)
