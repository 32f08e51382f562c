package kernel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// providerOwnedKeys are the kernel keys each provider sets for itself and
// every consumer reads from the provider's URL only (spi.MergeURL keeps the
// provider's): a reference's value, or a method-level form, has no effect.
var providerOwnedKeys = []string{"weight", "warmup", "timestamp"}

// MethodKeyNoEffect returns why a method-level form of kernel key key
// ("methods.Echo.weight", Dubbo's "Echo.heartbeat") has no effect, or ""
// when the kernel reads key per method or does not know it: the
// connection keys are chosen per connection, the provider's identity
// and state keys are per provider, the filter chain is built per
// service. list --explain and Export word it alike from here.
func MethodKeyNoEffect(key string) string {
	switch {
	case key == extension.PointTransport, key == extension.PointHeartbeat, strings.HasPrefix(key, "heartbeat."),
		key == "connect.timeout", key == "reconnect.backoff", key == "connections", key == "payload",
		key == "tls", strings.HasPrefix(key, "tls."):
		return key + " is chosen per connection"
	case slices.Contains(providerOwnedKeys, key), key == spi.AttachmentToken:
		return key + " is per provider, set " + key
	case key == spi.KeyFilter:
		return "the filter chain is built once per service, from service-level keys"
	}
	return ""
}

// providerKeysNoEffect returns, for provider URL u as published (with its
// "methods"), one [key as written, why] per key it publishes that no
// consumer and not the provider reads: the balancer and the cluster
// (loadbalance, cluster, at service or method level: each consumer
// builds them from its own reference URL before it knows a provider;
// the cluster's per-call keys retries, idempotent and forks are read
// from providers, as their consumers' defaults), every key only
// balancers declare
// (hash.nodes, hash.arguments, p2c.decay, shortestresponse.slidePeriod:
// each consumer builds its balancer from its own reference URL, as
// list --explain says) except those a balancer declares it reads from
// provider URLs (spi.KeyDoc.FromProviders), and a method-level weight,
// warmup or timestamp, transport, heartbeat key or other key that cannot
// be set per method (MethodKeyNoEffect: weight is per provider, transport
// per connection), and a key an extension reads from each consumer's
// reference URL at service level only (spi.KeyDoc.ServiceLevelOnly:
// failover's retry.tokens and retry.ratio, at any level). A loadbalance
// or cluster naming no extension of the node's catalogs adds the
// catalog's miss, available names and close match (unknownHere).
// Dubbo 2.7 passes a provider's loadbalance, cluster
// and a method's weight to its consumers; airnode does not, so Export
// says so.
func (n *Node) providerKeysNoEffect(u spi.URL) [][2]string {
	lbKey, clusterKey := n.cat.LoadBalance.Key(), n.cat.Cluster.Key()
	readers, elsewhere := n.pointKeyReaders(extension.PointLoadBalance)
	fromProviders := n.keysFromProviders(extension.PointLoadBalance, "")
	serviceOnly := n.serviceLevelOnlyKeys()
	methods := u.Methods()
	var out [][2]string
	for _, k := range u.Keys() {
		key := baseKey(k, methods)
		v, _ := u.Param(k)
		switch {
		case key == lbKey:
			out = append(out, [2]string{k, fmt.Sprintf("%s=%s is published but has no effect: each consumer chooses its balancer from its own reference URL (call/bench: -p %s=...)%s", k, v, key, unknownHere(n.cat.LoadBalance, v))})
		case key == clusterKey:
			out = append(out, [2]string{k, fmt.Sprintf("%s=%s is published but has no effect: each consumer chooses its cluster from its own reference URL (a reference's %s=..., call/bench: -p %s=...); a provider's retries, idempotent and forks are its consumers' defaults%s", k, v, key, key, unknownHere(n.cat.Cluster, v))})
		case len(readers[key]) > 0 && !elsewhere[key] && !fromProviders[key] && !slices.Contains(providerOwnedKeys, key):
			out = append(out, [2]string{k, fmt.Sprintf("%s=%s is published but has no effect: it is a key of the balancer (%s), which each consumer builds from its own reference URL (call/bench: -p %s=...)", k, v, strings.Join(readers[key], ", "), key)})
		case len(serviceOnly[key]) > 0:
			out = append(out, [2]string{k, fmt.Sprintf("%s=%s is published but has no effect: %s reads it from each consumer's own reference URL, at service level, and a provider's value is not its consumers' default (call/bench: -p %s=...)", k, v, strings.Join(serviceOnly[key], " and "), key)})
		case key != k && MethodKeyNoEffect(key) != "":
			out = append(out, [2]string{k, fmt.Sprintf("%s has no effect: %s", k, MethodKeyNoEffect(key))})
		}
	}
	return out
}

// unknownHere returns, for name, the value of a provider URL's
// loadbalance or cluster key, "" when point p of the node's catalogs has
// an extension of that name, else "; this node has no such extension: "
// and p's miss (`unknown loadbalance "roundrobn" (available: ...); did
// you mean "roundrobin"?`), so that Export's warning shows a misspelling
// as serve -p's refusal does. Export does not refuse it: the value
// selects nothing on this node, and the consumers that read the entry
// (a Dubbo consumer, or one with a balancer plugin this node has not)
// have catalogs of their own.
func unknownHere[T extension.Named](p *extension.Point[T], name string) string {
	if _, err := p.Get(name); err != nil {
		return "; this node has no such extension: " + err.Error()
	}
	return ""
}

// serviceLevelOnlyKeys returns, for each key an extension declares it
// reads from the reference URL at service level only
// (spi.KeyDoc.ServiceLevelOnly: failover's retry.tokens), the extensions
// that declare it, each as "POINT NAME" ("cluster failover").
func (n *Node) serviceLevelOnlyKeys() map[string][]string {
	out := map[string][]string{}
	for _, p := range n.cat.Describe() {
		for _, e := range p.Extensions {
			for _, k := range e.Keys {
				if k.ServiceLevelOnly {
					out[k.Key] = append(out[k.Key], p.Name+" "+e.Name)
				}
			}
		}
	}
	return out
}

// ServiceLevelOnlyWhy returns why a method-level form of key has no
// effect when an extension reads key at service level only
// (spi.KeyDoc.ServiceLevelOnly), or "" when none does: "retry.tokens
// is read at service level only: cluster failover reads it once per
// reference, from the reference URL's service-level keys (-p
// retry.tokens=...)". Refer warns in these words and list --explain
// shows them.
func (n *Node) ServiceLevelOnlyWhy(key string) string {
	return serviceLevelOnlyWhy(key, n.serviceLevelOnlyKeys()[key])
}

// serviceLevelOnlyWhy is ServiceLevelOnlyWhy's text for key read by
// readers ("cluster failover"); "" when there are none.
func serviceLevelOnlyWhy(key string, readers []string) string {
	if len(readers) == 0 {
		return ""
	}
	return fmt.Sprintf("%s is read at service level only: %s reads it once per reference, from the reference URL's service-level keys (-p %s=...)", key, strings.Join(readers, " and "), key)
}

// keysFromProviders returns the keys an extension of point (the
// extension named ext; "": any) declares it reads from provider URLs
// (spi.KeyDoc.FromProviders).
func (n *Node) keysFromProviders(point, ext string) map[string]bool {
	out := map[string]bool{}
	for _, p := range n.cat.Describe() {
		if p.Name != point {
			continue
		}
		for _, e := range p.Extensions {
			if ext != "" && e.Name != ext {
				continue
			}
			for _, k := range e.Keys {
				if k.FromProviders {
					out[k.Key] = true
				}
			}
		}
	}
	return out
}

// providerLocalKeys returns the keys of provider URL u that some
// extension declares of the provider's own machine
// (spi.KeyDoc.ProviderLocal: the accesslog filter's file path), which
// Export leaves out of the entry it publishes; nil when u has none.
func (n *Node) providerLocalKeys(u spi.URL) []string {
	var out []string
	for _, p := range n.cat.Describe() {
		for _, e := range p.Extensions {
			for _, k := range e.Keys {
				if _, ok := u.Param(k.Key); ok && k.ProviderLocal && !slices.Contains(out, k.Key) {
					out = append(out, k.Key)
				}
			}
		}
	}
	return out
}

// warnProviderKeysNoEffect logs one warning per key of provider URL u
// that has no effect (providerKeysNoEffect). Export calls it.
func (n *Node) warnProviderKeysNoEffect(u spi.URL, service string) {
	for _, t := range n.providerKeysNoEffect(u) {
		n.logger.Warn(fmt.Sprintf("export %s: %s", service, t[1]), "service", service, "key", t[0])
	}
}

// KeyNoEffect is a key of a URL that has no effect there, as Refer or
// Export warns of it: the key as written ("weight", "methods.Echo.weight"),
// its value, and why it has no effect.
type KeyNoEffect struct {
	Key   string // the key as written: "weight", "methods.Echo.weight"
	Value string // its value as written, unparsed ("" for an empty one)
	Why   string // "each provider sets its own ..."
}

// ProviderKeysOnReference returns the weight, warmup and timestamp keys
// (providerOwnedKeys, at service or method level) of reference URL u,
// each with why it has no effect there: each provider sets its own and
// consumers read it from the provider's URL. A malformed one is an error
// instead, list --explain's (config.CheckParams: `invalid value "abc"
// for URL key "warmup": want ...`). Refer refuses with that error and
// logs one warning per key; list --explain warns of the same keys.
func ProviderKeysOnReference(u spi.URL) ([]KeyNoEffect, error) {
	methods := u.Methods()
	set := map[string]string{}
	for _, k := range u.Keys() {
		if slices.Contains(providerOwnedKeys, baseKey(k, methods)) {
			set[k], _ = u.Param(k)
		}
	}
	if len(set) == 0 {
		return nil, nil
	}
	if len(methods) > 0 {
		set[spi.KeyMethods] = u.ParamOr(spi.KeyMethods, "")
	}
	if err := config.CheckParams(set); err != nil {
		return nil, err
	}
	var out []KeyNoEffect
	for _, k := range u.Keys() {
		if v, ok := set[k]; ok && k != spi.KeyMethods {
			out = append(out, KeyNoEffect{Key: k, Value: v,
				Why: "each provider sets its own and consumers read it from the provider's URL (serve -p " + baseKey(k, methods) + "=...)"})
		}
	}
	return out, nil
}
