package extension

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/airnode/airnode/spi"
)

// A secret mark (spi.MarkSecretKey) is process-wide and never removed,
// so which extension may mark a key is decided process-wide too: keyDecls
// records, for every catalogs of the process, each key every registered
// extension declares (spi.KeyDescriber, and a filter's activation key),
// with its Secret mark. The rule (Point.Register, checkKeyMarks):
//
//	A key an extension declares Secret must not hide a key that the
//	kernel or another extension declares without Secret. Of two such
//	extensions, the one registered later is refused.
//
// So an extension registered first with "accesslog" Secret makes the
// bundled accesslog filter's registration fail afterwards (bundle.Register
// and every command then fail loudly) instead of hiding its value. Keys
// shared on purpose stay allowed: declared by both without Secret, or by
// both with Secret.
//
// "Hide" is spi.IsSecretKey's: a mark m hides key k (in any of k's forms,
// "k", a method's "M.k" and "methods.M.k") when
//
//   - m == k;
//   - k ends in "."+m: "choices" Secret would hide "wlr.choices";
//   - m is a method-level form of k, "methods.<M>.k" or "<M>.k" for an
//     exported Go method name M (upper case first, no dot): "Echo.timeout"
//     Secret would hide method Echo's "timeout". "evil.timeout" is not
//     one (extension names and their keys are lower case): it is the
//     suggested key of the extension "evil"'s own. A lower-case method
//     of a Dubbo-style "methods" list is not recognised.
//
// An extension is known by its point, name and origin: registering the
// same one in many catalogs (each command, each node, each test) is one
// declaration. "token" is secret already and never conflicts.
var (
	keyDeclsMu  sync.Mutex
	keyDecls    = map[string][]keyDecl{} // key -> its declarations
	secretDecls []keyDecl                // the declarations with Secret, in the order registered
)

// keyDecl is one extension's declaration of a URL key.
type keyDecl struct {
	point, name string
	origin      Origin
	key         string
	secret      bool
}

func (d keyDecl) same(o keyDecl) bool {
	return d.point == o.point && d.name == o.name && d.origin == o.origin
}

// owner names the declaring extension: `filter "accesslog" (bundled)`.
func (d keyDecl) owner() string {
	return fmt.Sprintf("%s %q (%s)", d.point, d.name, d.origin)
}

// declaredKeys returns the keys ext declares: its spi.KeyDescriber keys,
// then a filter's activation key (spi.Activation.Key) unless it is among
// them, not secret.
func declaredKeys(point, name string, origin Origin, ext any) []keyDecl {
	var keys []spi.KeyDoc
	if kd, ok := ext.(spi.KeyDescriber); ok {
		keys = kd.Keys()
	}
	var act string
	if fb, ok := ext.(spi.FilterBuilder); ok {
		act = fb.Activation().Key
	}
	return keyDeclsOf(point, name, origin, keys, act)
}

// keyDeclsOf returns the declarations of keys, then of the activation key
// act ("": none) unless it is among them, not secret, by the extension
// name on point; empty and repeated keys are skipped.
func keyDeclsOf(point, name string, origin Origin, keys []spi.KeyDoc, act string) []keyDecl {
	var out []keyDecl
	seen := map[string]bool{}
	for _, d := range keys {
		if d.Key == "" || seen[d.Key] {
			continue
		}
		seen[d.Key] = true
		out = append(out, keyDecl{point: point, name: name, origin: origin, key: d.Key, secret: d.Secret})
	}
	if act != "" && !seen[act] {
		out = append(out, keyDecl{point: point, name: name, origin: origin, key: act})
	}
	return out
}

// hides reports whether mark m hides key k, and how when m is not k:
// "" for m == k, else a parenthesis for the error.
func hides(m, k string) (how string, ok bool) {
	switch {
	case m == k:
		return "", true
	case strings.HasSuffix(k, "."+m):
		return fmt.Sprintf(" (a secret mark hides every key ending in %q, so it would also hide %q)", "."+m, k), true
	}
	if rest, ok := strings.CutSuffix(m, "."+k); ok {
		if method, ok := strings.CutPrefix(rest, "methods."); ok || exportedMethod(rest) {
			if !ok {
				method = rest
			}
			return fmt.Sprintf(" (%q is its method-level form for the method %q)", m, method), true
		}
	}
	return "", false
}

// exportedMethod reports whether s can be an exported Go method name:
// an upper-case ASCII letter first, no dot.
func exportedMethod(s string) bool {
	return s != "" && s[0] >= 'A' && s[0] <= 'Z' && !strings.Contains(s, ".")
}

// claimKeys checks the keys ext, about to be registered as name on
// point, declares against the kernel's keys and every key registered
// extensions of the process declare (the rule above), and when none
// conflicts records them and marks the Secret ones (spi.MarkSecretKey).
// Nothing is recorded or marked on error. The error names point, name,
// the key and the extension (or the kernel) that owns it.
func claimKeys(point, name string, origin Origin, ext any) error {
	if errs := claim(declaredKeys(point, name, origin, ext), true); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// ClaimRedeclaredKeys applies the rule Register applies (above) to the
// URL keys a running out-of-process plugin declares anew: keys (its
// spi.KeyDescriber keys) and, for a filter, its activation's key, as the
// new process of the extension name on point, registered from origin (the
// plugin's binary path), described them after a restart or a handover
// into another build. A new Secret key is marked secret process-wide
// (spi.MarkSecretKey), so logs and printed URLs hide its value from then
// on; a key declared Secret now and not before is marked too.
//
// Register refuses a whole extension whose key conflicts; a running
// plugin is not refused: each conflicting key is ignored (not recorded
// as the plugin's, and its Secret mark not made, so it hides no value of
// the kernel or of the extension that owns the key), and the others are
// recorded and marked. It returns one error per ignored key, naming the
// point, the plugin, the key and its owner (the kernel or another
// extension), as Register's would; the host logs them at warn and keeps
// the plugin running. Keys the new process no longer declares stay
// recorded and marked: a secret mark is never removed.
func ClaimRedeclaredKeys(point, name string, origin Origin, keys []spi.KeyDoc, activation spi.Activation) []error {
	return claim(keyDeclsOf(point, name, origin, keys, activation.Key), false)
}

// claim checks decls against the rule (checkKeyMarks), then records and
// marks them. all: the first conflict refuses them all (nothing recorded
// or marked) and is the only error; else each conflicting declaration is
// left out, with its error, and the others are recorded and marked.
func claim(decls []keyDecl, all bool) []error {
	if len(decls) == 0 {
		return nil
	}
	keyDeclsMu.Lock()
	defer keyDeclsMu.Unlock()
	var errs []error
	ok := make([]keyDecl, 0, len(decls))
	for _, d := range decls {
		if d.key != spi.AttachmentToken {
			if err := checkKeyMarks(d); err != nil {
				if all {
					return []error{err}
				}
				errs = append(errs, err)
				continue
			}
		}
		ok = append(ok, d)
	}
	for _, d := range ok {
		record(d)
		if d.secret {
			spi.MarkSecretKey(d.key)
		}
	}
	return errs
}

// record adds d to keyDecls (and secretDecls when Secret), unless d's
// extension declared d.key already; a key it declared without Secret and
// now declares Secret turns secret there too (a mark is never taken back,
// so the converse changes nothing). keyDeclsMu is held.
func record(d keyDecl) {
	for i, o := range keyDecls[d.key] {
		if o.same(d) {
			if d.secret && !o.secret {
				keyDecls[d.key][i].secret = true
				secretDecls = append(secretDecls, keyDecls[d.key][i])
			}
			return
		}
	}
	keyDecls[d.key] = append(keyDecls[d.key], d)
	if d.secret {
		secretDecls = append(secretDecls, d)
	}
}

// checkKeyMarks applies the rule to one declaration d. keyDeclsMu is
// held.
func checkKeyMarks(d keyDecl) error {
	const why = "a secret mark is process-wide and never removed, so every log, error and listing of the process would hide"
	if d.secret {
		if d.key != spi.AttachmentToken && slices.Contains(kernelKeys, d.key) {
			return fmt.Errorf("%s: %q declares the kernel's URL key %q secret: the kernel reads that key, and %s its value; declare a key of the extension's own (such as %q) secret instead",
				d.point, d.name, d.key, why, d.name+"."+d.key)
		}
		for _, k := range kernelKeys {
			how, ok := hides(d.key, k)
			if !ok || k == spi.AttachmentToken {
				continue
			}
			return fmt.Errorf("%s: %q declares %q secret, which would hide the kernel's URL key %q%s: %s the kernel's value; declare a key of the extension's own (such as %q) secret instead",
				d.point, d.name, d.key, k, how, why, ownKey(d))
		}
	}
	if d.secret {
		// d's mark against every key declared without Secret: the same
		// key first, then the others in sorted order, so the error is
		// always about the same one
		keys := slices.Sorted(maps.Keys(keyDecls))
		if i := slices.Index(keys, d.key); i > 0 {
			keys = append([]string{d.key}, slices.Delete(keys, i, i+1)...)
		}
		for _, k := range keys {
			for _, o := range keyDecls[k] {
				if o.same(d) || o.secret || o.key == spi.AttachmentToken {
					continue
				}
				how, ok := hides(d.key, o.key)
				if !ok {
					continue
				}
				if how == "" {
					return fmt.Errorf("%s: %q declares %q secret, a key of %s: %s that extension's value; declare a key of its own (such as %q) secret instead",
						d.point, d.name, d.key, o.owner(), why, ownKey(d))
				}
				return fmt.Errorf("%s: %q declares %q secret, which would hide %q, a key of %s%s: %s that extension's value; declare a key of its own (such as %q) secret instead",
					d.point, d.name, d.key, o.key, o.owner(), how, why, ownKey(d))
			}
		}
		return nil
	}
	// every mark already made against d's key, which d shows
	for _, o := range secretDecls {
		if o.same(d) {
			continue
		}
		how, ok := hides(o.key, d.key)
		if !ok {
			continue
		}
		if how == "" {
			return fmt.Errorf("%s: %q declares %q, which %s declared secret: %s this extension's value; the later of the two is refused: rename one key, or declare it Secret in both",
				d.point, d.name, d.key, o.owner(), why)
		}
		return fmt.Errorf("%s: %q declares %q, which the key %q declared secret by %s hides%s: %s this extension's value; the later of the two is refused: rename one key, or declare it Secret in both",
			d.point, d.name, d.key, o.key, o.owner(), how, why)
	}
	return nil
}

// ownKey suggests a key in d's extension's own namespace: "evil.accesslog".
func ownKey(d keyDecl) string {
	if strings.HasPrefix(d.key, d.name+".") {
		return d.key
	}
	return d.name + "." + d.key
}
