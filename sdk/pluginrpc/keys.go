package pluginrpc

import (
	"slices"

	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

// keysToPB returns the keys b declares (spi.KeyDescriber) for a Describe
// answer; nil when b does not declare any.
func keysToPB(b any) []*pb.KeyDoc {
	d, ok := b.(spi.KeyDescriber)
	if !ok {
		return nil
	}
	var out []*pb.KeyDoc
	for _, k := range d.Keys() {
		out = append(out, &pb.KeyDoc{Key: k.Key, Type: k.Type, Default: k.Default, Values: slices.Clone(k.Values), Doc: k.Doc, Secret: k.Secret, FromProviders: k.FromProviders})
	}
	return out
}

// keysFromPB converts a Describe answer's keys; nil for none.
func keysFromPB(keys []*pb.KeyDoc) []spi.KeyDoc {
	var out []spi.KeyDoc
	for _, k := range keys {
		out = append(out, spi.KeyDoc{Key: k.GetKey(), Type: k.GetType(), Default: k.GetDefault(), Values: slices.Clone(k.GetValues()), Doc: k.GetDoc(), Secret: k.GetSecret(), FromProviders: k.GetFromProviders()})
	}
	return out
}

// declaredKeys is the spi.KeyDescriber answer of the host-side builders:
// the keys the running process declared at its start (src a
// DescribedSource; while the plugin is down, the last process's), so a
// restart or a handover into a build declaring other keys changes what
// Describe (airnode list), --explain and the unknown-key warnings see;
// else keys, what the options say the plugin declared. A copy; nil when
// none are declared.
func declaredKeys(src Source, keys []spi.KeyDoc) []spi.KeyDoc {
	if src != nil {
		if _, _, d, _ := described(src); d != nil {
			return slices.Clone(d.Keys)
		}
	}
	return slices.Clone(keys)
}
