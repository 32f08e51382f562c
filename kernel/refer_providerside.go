package kernel

import (
	"errors"
	"slices"
	"strings"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// providerSideWarned are the provider-side kernel keys (their KeyDoc
// opens with "provider: ") that ReferWarnings words under another kind:
// weight, warmup and timestamp ("provider"), the server's keys
// ("server"), the token ("token"; a direct reference sends its own) and
// methods (a reference's list of the methods it knows).
var providerSideWarned = []string{spi.KeyMethods, "weight", "warmup", "timestamp", spi.AttachmentToken,
	keyDispatcher, keyConnectionConcurrency, keyMinPingInterval}

// providerSideKey is a key of a reference URL that only providers read
// (providerSideKeys).
type providerSideKey struct {
	key, value string // as written: "methods.Echo.executes", "abc"
	base       string // the key it sets: "executes"
	// invalid is why value is malformed for the key ("want an integer
	// from 0 (no limit) to 1048576"); "" when it is well formed.
	invalid string
}

// providerSideKeys returns, in u's key order, each key of reference URL
// u (also a method-level form, "methods.Echo.executes", Dubbo's
// "Echo.threads") that only providers read, and that no other kind of
// ReferWarnings covers: a kernel key whose KeyDoc says provider side
// (executes, accepts, accepts.per.ip, unsent.limit, health.service,
// registry, advertise), and a key declared only by filters activated on
// the provider side alone (threadlimit's threads, a provider filter
// plugin's keys) unless a filter of the consumer's chain, an extension
// of another point or a kernel key of the consumer reads it too. A
// malformed value is named (invalid): the kernel's bounds for a kernel
// key (config.CheckURL), the declared type's syntax for a filter's key
// (spi.KeyDoc.CheckValue), so a typo is caught before the key is moved
// to the provider. A consumer ignores these keys, as Dubbo's does
// (tester85 #6, #7): Refer warns instead of failing, at method level as
// at service level (CheckConsumerKeys leaves them out). cat holds the
// filters and extensions whose keys are looked at.
func providerSideKeys(cat *extension.Catalogs, u spi.URL) []providerSideKey {
	docs := map[string]spi.KeyDoc{}
	for k, d := range kernelKeyDocs {
		if strings.HasPrefix(d.Doc, sideProvider) && !slices.Contains(providerSideWarned, k) {
			d.Key = k
			docs[k] = d
		}
	}
	consumerChain, _ := extension.FilterNames(cat.Filter, u, spi.Consumer, "")
	readElsewhere := map[string]bool{}
	var filterDocs []spi.KeyDoc
	for _, p := range cat.Describe() {
		for _, e := range p.Extensions {
			providerOnly := false
			if p.Name == extension.PointFilter && !slices.Contains(consumerChain, e.Name) {
				if b, err := cat.Filter.Get(e.Name); err == nil {
					sides := b.Activation().Sides
					providerOnly = slices.Contains(sides, spi.Provider) && !slices.Contains(sides, spi.Consumer)
				}
			}
			for _, d := range e.Keys {
				if providerOnly {
					filterDocs = append(filterDocs, d)
				} else {
					readElsewhere[d.Key] = true
				}
			}
		}
	}
	for _, d := range filterDocs {
		if _, kernelKey := kernelKeyDocs[d.Key]; !kernelKey && !readElsewhere[d.Key] {
			docs[d.Key] = d
		}
	}
	methods := u.Methods()
	var out []providerSideKey
	for _, k := range u.Keys() {
		base := baseKey(k, methods)
		d, ok := docs[base]
		if !ok {
			continue
		}
		v, _ := u.Param(k)
		p := providerSideKey{key: k, value: v, base: base}
		err := d.CheckValue(v)
		if _, kernelKey := kernelKeyDocs[base]; kernelKey {
			err = config.CheckParams(map[string]string{k: v})
		}
		if pe, ok := errors.AsType[*spi.ParamError](err); ok {
			p.invalid = "want " + pe.Want
		} else if err != nil {
			p.invalid = err.Error()
		}
		out = append(out, p)
	}
	return out
}

// providerSideWhy is ReferWarnings' Why for a providerSideKey, worded
// to follow "executes is ": "a provider key: it has no effect on a call;
// set it on the provider (serve URL: serve -p executes=..., or the
// export's params)", and for a malformed value "; its value abc is
// malformed too: want an integer ...".
func providerSideWhy(p providerSideKey) string {
	why := "a provider key: it has no effect on a call; set it on the provider (serve URL: serve -p " + p.base + "=..., or the export's params)"
	if p.invalid != "" {
		why += "; its value " + p.value + " is malformed too: " + p.invalid
	}
	return why
}
