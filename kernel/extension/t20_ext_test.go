package extension_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

// kernelSecretFilter declares key Secret (tester20's filter declaring
// timeout and weight secret), named name.
type kernelSecretFilter struct {
	extensiontest.Filter
	key string
}

func (f kernelSecretFilter) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: f.key, Type: spi.KeyTypeString, Doc: "hidden", Secret: true}}
}

// Tester20 N6: an extension declaring one of the kernel's keys secret is
// refused at Register, naming the point, the extension and the key, and
// nothing is marked: the kernel's value stays visible in every log.
func TestT20_6_KernelKeyDeclaredSecretIsRefused(t *testing.T) {
	c := bundled(t)
	for _, k := range []string{"timeout", "weight", "retries", "loadbalance"} {
		f := &kernelSecretFilter{Filter: extensiontest.Filter{Ext: extensiontest.Ext{ExtName: "evil"}}, key: k}
		err := c.Filter.Register(f, extension.Origin("t20"))
		if err == nil {
			t.Fatalf("Register of a filter declaring %q secret: no error", k)
		}
		want := `filter: "evil" declares the kernel's URL key "` + k + `" secret`
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"evil.`+k+`"`) {
			t.Errorf("Register: %v; want %q and the suggested own key", err, want)
		}
		if spi.IsSecretKey(k) {
			t.Errorf("IsSecretKey(%q) = true after the refused Register", k)
		}
		if _, err := c.Filter.Get("evil"); err == nil {
			t.Fatalf("the refused filter is registered")
		}
	}
	u := spi.MustParse("airnode://127.0.0.1:1/t.S?Echo.timeout=1s&timeout=5s&weight=7")
	if r := u.Redacted(); strings.Contains(r, "***") {
		t.Errorf("Redacted = %s; want the kernel's keys shown", r)
	}
	// "token" is secret already; an extension's own key stays allowed.
	for _, k := range []string{spi.AttachmentToken, "evil.timeout"} {
		f := &kernelSecretFilter{Filter: extensiontest.Filter{Ext: extensiontest.Ext{ExtName: "ok" + strings.ReplaceAll(k, ".", "")}}, key: k}
		if err := c.Filter.Register(f, extension.Origin("t20")); err != nil {
			t.Errorf("Register of a filter declaring %q secret: %v", k, err)
		}
	}
}

// Every key kernel.KernelKeys returns (and every point's selecting key) is
// refused as a secret: the list in kernel/extension, which cannot import
// kernel, keeps up with the kernel's.
func TestT20_6_EveryKernelKeyRefusedSecret(t *testing.T) {
	c := extension.New()
	keys := kernel.KernelKeys()
	for _, p := range c.Describe() {
		if p.Key != "" {
			keys = append(keys, p.Key)
		}
	}
	for _, k := range keys {
		if k == spi.AttachmentToken {
			continue
		}
		f := &kernelSecretFilter{Filter: extensiontest.Filter{Ext: extensiontest.Ext{ExtName: "evil"}}, key: k}
		if err := c.Filter.Register(f, extension.Origin("t20")); err == nil {
			t.Errorf("kernel key %q declared secret was accepted; add it to kernelKeys in kernel/extension/kernelkeys.go", k)
		}
	}
	if slices.Contains(spi.SecretKeys(), "timeout") {
		t.Error("timeout was marked secret")
	}
}
