package spi

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// KeyDoc describes one URL key an extension reads, for listings
// (`airnode list --keys`) and for the kernel's "did you mean" warnings on
// misspelt keys at Refer and Export. It is data only for a bundled
// extension, whose Build stays the one place that validates the value; a
// plugin's declared keys are also checked by the host (CheckValue of each
// value the URL gives, before the plugin's Build is asked), since a
// plugin's Build may not check them. Bounds are the extension's Build's.
type KeyDoc struct {
	// Key is the key as written at service level ("smux.buffer"). Keys an
	// extension also reads per method are written once, plainly; Doc says
	// "method-level allowed".
	Key string
	// Type is one of the KeyType* names below ("duration", "int", ...):
	// the syntax of the value, checked by CheckValue.
	Type string
	// Default is the value used when the key is absent, written so that it
	// parses as Type ("8MiB", "30s", "2"); "" when there is no fixed
	// default: the key is off when absent, or its default derives from
	// another key, which Doc then says ("3 × heartbeat.interval").
	Default string
	// Values lists the accepted values of an enum key; nil otherwise.
	Values []string
	// Doc is one line without a final period: what the key does, its unit
	// and its bounds ("receive buffer per session, bytes, 256KiB..1GiB").
	Doc string
	// Secret says the value is a secret (a password, a credential) that
	// logs, errors and listings must not show. When the extension is
	// registered in a catalog, the key (and a method's "M.key") is marked
	// with MarkSecretKey for the whole process, so URL.Redacted and
	// IsSecretKey hide it like "token". Optional; false by default.
	//
	// It holds only in a process that registered the extension: the value
	// still travels in the URL (a provider publishes it to its registry,
	// as it does "token"), and a process without the extension (a stock
	// airnode's registry ls or call) shows it. A kernel key (timeout,
	// weight, ...) cannot be declared Secret, nor another extension's key
	// ("accesslog"), nor a key whose mark would hide one of those
	// ("choices" would hide "wlr.choices"; "Echo.timeout" is a
	// method-level form): Register refuses it, naming the owner, and
	// refuses the later of two extensions one of whose marks would hide
	// the other's key. Declare keys in the extension's own namespace
	// ("auth.password" for the filter "auth").
	Secret bool
	// FromProviders says a balancer reads the key from each provider's
	// URL (Invoker.URL() of its candidates in Select: a zone, a rack, a
	// capacity that each provider publishes with serve -p key=...), not
	// only from the reference URL it is built from. Export then does not
	// warn that the key, published by a provider, has no effect (it warns
	// of the other keys of balancers: each consumer builds its balancer
	// from its own reference URL). Invoker.URL() is the merged URL
	// (MergeURL): a reference that sets the key too overrides every
	// provider's value, so give the consumer's setting a key of its own
	// ("zone.prefer" beside the providers' "zone"). Optional; false by
	// default.
	FromProviders bool
	// ServiceLevelOnly says the extension reads the key from the
	// reference URL it is built from, at service level only, once per
	// reference: a method-level form ("methods.Echo.key", Dubbo's
	// "Echo.key") has no effect, and neither has a provider's published
	// value (it is not its consumers' default). Refer warns of a
	// method-level form, Export of a published value, and list --explain
	// shows either as not used. For a cluster's per-reference state
	// (failover's retry budget, retry.tokens). Optional; false by
	// default.
	ServiceLevelOnly bool
	// ProviderLocal says the key's value is of the provider's own machine
	// (the accesslog filter's file path), read by the provider's own
	// filters and of no use to anyone else: Export leaves the key out of
	// the entry it publishes to the registry (and of Exporter.URL), as it
	// leaves out the provider's TLS files, while the provider's filter
	// chain is built with it. Optional; false by default.
	ProviderLocal bool
}

// Types of KeyDoc.Type. Each names the syntax CheckValue accepts; bounds
// belong to the extension and are stated in Doc.
const (
	KeyTypeDuration = "duration" // Go syntax ("1.5s") or bare milliseconds, as URL.Duration
	KeyTypeInt      = "int"      // base-10 integer, as URL.Int
	KeyTypeIntList  = "int list" // comma-separated base-10 integers ("0,2")
	KeyTypeBool     = "bool"     // strconv.ParseBool: true, false, 1, 0, ...
	KeyTypeSize     = "size"     // byte size, as URL.Size ("65536", "64KiB", "8MiB")
	KeyTypeString   = "string"   // any text
	KeyTypePath     = "path"     // a file system path, not empty
	KeyTypeHosts    = "hosts"    // comma-separated host:port addresses
	KeyTypeEnum     = "enum"     // one of KeyDoc.Values
)

// KeyTypes lists every KeyDoc.Type, sorted.
func KeyTypes() []string {
	return []string{KeyTypeBool, KeyTypeDuration, KeyTypeEnum, KeyTypeHosts, KeyTypeInt, KeyTypeIntList, KeyTypePath, KeyTypeSize, KeyTypeString}
}

// KeyDescriber is the optional interface of an extension builder (any
// point's: TransportBuilder, RegistryBuilder, LoadBalanceBuilder, ...)
// that reads URL keys of its own. The kernel's catalogs report the keys
// (extension.ExtensionInfo.Keys), `airnode list --keys` prints them, and
// Refer and Export count them as known when they look for misspelt keys.
// A builder that reads no key of its own need not implement it.
type KeyDescriber interface {
	// Keys returns the keys the builder's extensions read, each once, in
	// the order the extension's doc.go lists them. It is pure, cheap and
	// safe for concurrent use; the caller must not modify the result.
	Keys() []KeyDoc
}

// CheckValue reports whether v has the syntax of d.Type: a
// *ParamError naming d.Key and v when it does not, an error for an
// unknown Type. It checks syntax only; the extension's bounds are its
// Build's to check.
func (d KeyDoc) CheckValue(v string) error {
	bad := func(want string) error { return &ParamError{Key: d.Key, Value: v, Want: want} }
	switch d.Type {
	case KeyTypeDuration:
		if _, err := ParseDuration(v); err != nil {
			return bad("a duration such as 1.5s, 200ms or 3000 (milliseconds)")
		}
	case KeyTypeInt:
		if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
			return bad("an integer")
		}
	case KeyTypeIntList:
		for _, f := range strings.Split(v, ",") {
			if _, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64); err != nil {
				return bad("a comma list of integers such as 0 or 0,2")
			}
		}
	case KeyTypeBool:
		if _, err := strconv.ParseBool(v); err != nil {
			return bad("true or false")
		}
	case KeyTypeSize:
		if _, err := ParseSize(v); err != nil {
			return bad("a byte size such as 65536, 64KiB or 8MiB")
		}
	case KeyTypeString:
	case KeyTypePath:
		if strings.TrimSpace(v) == "" {
			return bad("a file path")
		}
	case KeyTypeHosts:
		for _, a := range strings.Split(v, ",") {
			if h, p, err := net.SplitHostPort(strings.TrimSpace(a)); err != nil || h == "" || p == "" {
				return bad("comma-separated host:port addresses")
			}
		}
	case KeyTypeEnum:
		if !slices.Contains(d.Values, v) {
			return bad("one of " + strings.Join(d.Values, ", "))
		}
	default:
		return fmt.Errorf("spi: key %q has unknown type %q (known: %s)", d.Key, d.Type, strings.Join(KeyTypes(), ", "))
	}
	return nil
}

// Validate checks d itself, for an extension's tests and for the catalogs
// of plugin extensions: Key not empty and without '=', '&' or spaces;
// Type one of KeyTypes; Values given exactly for an enum; Default "" or a
// value CheckValue accepts; Doc one non-empty line. The error names the
// key and what is wrong.
func (d KeyDoc) Validate() error {
	var errs []error
	if d.Key == "" || strings.ContainsAny(d.Key, "=& \t\n") {
		errs = append(errs, fmt.Errorf("spi: key %q: want a non-empty URL key without '=', '&' or spaces", d.Key))
	}
	if !slices.Contains(KeyTypes(), d.Type) {
		errs = append(errs, fmt.Errorf("spi: key %q has unknown type %q (known: %s)", d.Key, d.Type, strings.Join(KeyTypes(), ", ")))
	} else if (d.Type == KeyTypeEnum) != (len(d.Values) > 0) {
		errs = append(errs, fmt.Errorf("spi: key %q of type %s: Values is for enum keys, and an enum needs them", d.Key, d.Type))
	} else if d.Default != "" {
		if err := d.CheckValue(d.Default); err != nil {
			errs = append(errs, fmt.Errorf("spi: default of key %q: %w", d.Key, err))
		}
	}
	if strings.TrimSpace(d.Doc) == "" || strings.Contains(d.Doc, "\n") {
		errs = append(errs, fmt.Errorf("spi: key %q: Doc must be one non-empty line", d.Key))
	}
	return errors.Join(errs...)
}

// ValidateKeys checks every KeyDoc of keys (Validate) and that no key is
// declared twice.
func ValidateKeys(keys []KeyDoc) error {
	var errs []error
	seen := map[string]bool{}
	for _, d := range keys {
		if err := d.Validate(); err != nil {
			errs = append(errs, err)
		}
		if seen[d.Key] {
			errs = append(errs, fmt.Errorf("spi: key %q declared twice", d.Key))
		}
		seen[d.Key] = true
	}
	return errors.Join(errs...)
}
