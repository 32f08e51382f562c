package pluginrpc

import (
	"errors"
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

// checkDeclared checks the value u gives each of keys, the keys the
// plugin declared (declaredKeys), at service level and in a method-level
// form ("methods.M.key", Dubbo's "M.key": spi.MethodLevelKey), with
// spi.KeyDoc.CheckValue: the *spi.ParamError of the first value that
// does not have its key's declared type (an enum's value that is none of
// its Values), naming the key as written, the value and what is allowed;
// nil when every value does. A bundled extension's Build refuses such a
// value itself; a plugin's Build may not, so the host-side builders check
// what the plugin declared before building, at Refer, Export and in
// `airnode list --explain` alike.
func checkDeclared(keys []spi.KeyDoc, u spi.URL) error {
	if len(keys) == 0 {
		return nil
	}
	methods := u.Methods()
	for _, k := range u.Keys() {
		i := slices.IndexFunc(keys, func(d spi.KeyDoc) bool { return d.Key == k })
		if _, key, ok := spi.MethodLevelKey(k, methods); i < 0 && ok {
			i = slices.IndexFunc(keys, func(d spi.KeyDoc) bool { return d.Key == key })
		}
		if i < 0 {
			continue
		}
		d := keys[i]
		d.Key = k // as written
		v, _ := u.Param(k)
		var pe *spi.ParamError
		if err := d.CheckValue(v); errors.As(err, &pe) { // another error: a Type Describe let through, not the URL's fault
			return pe
		}
	}
	return nil
}
