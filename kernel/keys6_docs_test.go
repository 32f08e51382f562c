package kernel

import (
	"slices"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// Every key KernelKeys returns has a doc (and no doc names another key),
// valid as an extension's would be, opening with the side that reads it;
// the types and defaults agree with config.KernelKeys, which checks the
// values, and the defaults with the constants the code applies.
func TestKernelKeyDocs(t *testing.T) {
	docs := KernelKeyDocs()
	if err := spi.ValidateKeys(docs); err != nil {
		t.Fatal(err)
	}
	var names []string
	byKey := map[string]spi.KeyDoc{}
	for _, d := range docs {
		names = append(names, d.Key)
		byKey[d.Key] = d
		if !strings.HasPrefix(d.Doc, sideProvider) && !strings.HasPrefix(d.Doc, sideConsumer) && !strings.HasPrefix(d.Doc, sideBoth) && !strings.HasPrefix(d.Doc, sideNode) {
			t.Errorf("%s: doc %q does not open with its side", d.Key, d.Doc)
		}
	}
	if keys := KernelKeys(); !slices.Equal(names, keys) {
		t.Fatalf("KernelKeyDocs keys\n %v\nwant KernelKeys\n %v", names, keys)
	}
	if len(kernelKeyDocs) != len(docs) {
		t.Errorf("kernelKeyDocs documents %d keys, KernelKeys has %d", len(kernelKeyDocs), len(docs))
	}

	types := map[config.KeyKind]string{config.KindDuration: spi.KeyTypeDuration, config.KindInt: spi.KeyTypeInt,
		config.KindSize: spi.KeyTypeSize, config.KindIntList: spi.KeyTypeIntList, config.KindBool: spi.KeyTypeBool}
	for _, spec := range config.KernelKeys {
		d := byKey[spec.Key]
		if d.Type != types[spec.Kind] {
			t.Errorf("%s: type %q, config.KernelKeys checks it as %q", spec.Key, d.Type, types[spec.Kind])
		}
		if (spi.KeyDoc{Key: spec.Key, Type: d.Type}).CheckValue(spec.Default) == nil && d.Default != spec.Default {
			t.Errorf("%s: default %q, config.KernelKeys says %q", spec.Key, d.Default, spec.Default)
		}
	}

	u := spi.MustParse("airnode://h:1/x")
	for key, want := range map[string]any{
		"timeout": DefaultTimeout, "connect.timeout": DefaultConnectTimeout, "reconnect.backoff": DefaultReconnectBackoff,
		"warmup": DefaultWarmup, "shutdown.timeout": DefaultShutdownTimeout, "shutdown.wait": DefaultShutdownWait,
		keyMinPingInterval: exchange.DefaultMinPingInterval,
	} {
		if got, err := u.With(key, byKey[key].Default).Duration(key, 0); err != nil || got != want {
			t.Errorf("%s: default %q is %v (%v), the code applies %v", key, byKey[key].Default, got, err, want)
		}
	}
	for key, want := range map[string]int64{"weight": DefaultWeight, keyConnectionConcurrency: exchange.DefaultMaxConcurrent, "connections": 1} {
		if got, err := u.With(key, byKey[key].Default).Int(key, 0); err != nil || got != want {
			t.Errorf("%s: default %q is %d (%v), the code applies %d", key, byKey[key].Default, got, err, want)
		}
	}
	if got, err := u.With("payload", byKey["payload"].Default).Size("payload", 0); err != nil || got != protocol.DefaultPayload {
		t.Errorf("payload: default %q is %d (%v), the code applies %d", byKey["payload"].Default, got, err, protocol.DefaultPayload)
	}
	if d := byKey[keyDispatcher]; d.Default != dispatchers[0] || !slices.Equal(d.Values, dispatchers) {
		t.Errorf("dispatcher: default %q values %v, want %q %v", d.Default, d.Values, dispatchers[0], dispatchers)
	}

	// The result is the caller's.
	docs[0].Key = "changed"
	if KernelKeyDocs()[0].Key == "changed" {
		t.Error("KernelKeyDocs shares its slice")
	}
}
