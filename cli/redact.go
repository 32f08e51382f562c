package cli

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/airnode/airnode/spi"
)

// secretParam matches a secret URL parameter in free text, as
// spi.URL.Redacted and spi.IsSecretKey define them: "token=" or a method's
// "Echo.token=" after '?', '&', a space, a quote or the start, up to the
// end of the value ('&', a space, a quote or a backslash). The key in any
// case: TOKEN= is no secret key of a URL, but an -a TOKEN=x that call
// refuses names the value the user meant as one (tester49 finding 5).
var secretParam = regexp.MustCompile(`(^|[?&\s"'(,;])((?:[\w$-]+\.)*(?i:token)=)[^&\s"'\\]+`)

// secretPassword matches the password of a URL's userinfo
// ("zookeeper://user:pass@host").
var secretPassword = regexp.MustCompile(`(://[^/@:\s"']+:)[^/@\s"']+@`)

// markedParam is secretParam for the keys marked secret with
// spi.MarkSecretKey (an extension's spi.KeyDoc.Secret), with the list it
// was built from; nil until a key is marked.
type markedParam struct {
	keys []string
	re   *regexp.Regexp
}

var marked atomic.Pointer[markedParam]

// markedSecretParam returns the pattern of a "key=" or "M.key=" parameter
// for every key spi.SecretKeys holds now, built again when the list grew
// (marks are never removed); nil when no key is marked.
func markedSecretParam() *regexp.Regexp {
	keys := spi.SecretKeys()
	if len(keys) == 0 {
		return nil
	}
	if m := marked.Load(); m != nil && slices.Equal(m.keys, keys) {
		return m.re
	}
	alts := make([]string, len(keys))
	for i, k := range keys {
		alts[i] = regexp.QuoteMeta(k)
	}
	re := regexp.MustCompile(`(^|[?&\s"'(,;])((?:[\w$-]+\.)*(?i:` + strings.Join(alts, "|") + `)=)[^&\s"'\\]+`)
	marked.Store(&markedParam{keys: keys, re: re})
	return re
}

// redactSecrets returns s with every secret of a URL in it replaced by
// "***" (the token's value, a userinfo password, the value of a key an
// extension declared secret and the process registered), as
// spi.URL.Redacted writes a URL. It is the one place serve, call and
// bench hide secrets in free text: every line they write to stderr (logs,
// the kernel's and the registries', and errors) goes through
// redactingWriter, and bench's report names its SERVICE_URL through it.
func redactSecrets(s string) string {
	s = secretParam.ReplaceAllString(s, "${1}${2}***")
	if re := markedSecretParam(); re != nil {
		s = re.ReplaceAllString(s, "${1}${2}***")
	}
	return secretPassword.ReplaceAllString(s, "${1}***@")
}

// hasSecret reports whether p may hold a secret redactSecrets hides.
func hasSecret(p []byte) bool {
	if secretParam.Match(p) || secretPassword.Match(p) {
		return true
	}
	re := markedSecretParam()
	return re != nil && re.Match(p)
}

// programNameWriter writes through w with "airnode: " at the start of
// each line replaced by name + ": " (WithName): the command line's own
// messages then name the program. Like redactingWriter, each Write must
// hold whole lines.
type programNameWriter struct {
	w    io.Writer
	name string
}

// programPrefix is "airnode: " at the start of a line.
var programPrefix = regexp.MustCompile(`(?m)^airnode: `)

// Unwrap returns the writer p writes to (see redactingWriter.Unwrap).
func (p programNameWriter) Unwrap() io.Writer { return p.w }

func (p programNameWriter) Write(b []byte) (int, error) {
	if !programPrefix.Match(b) {
		return p.w.Write(b)
	}
	if _, err := io.WriteString(p.w, programPrefix.ReplaceAllLiteralString(string(b), p.name+": ")); err != nil {
		return 0, err
	}
	return len(b), nil
}

// redactingWriter writes through redactSecrets. Each Write must hold whole
// lines (slog handlers and fmt.Fprint* write one record or message per
// call), so that no secret is split between two writes. It reports len(p)
// written when the redacted text was written whole.
type redactingWriter struct{ w io.Writer }

// Unwrap returns the writer r writes to, so that a check of what stderr
// is (a terminal: bench's progress bar, terminalWriter) sees through r;
// writes must still go through r.
func (r redactingWriter) Unwrap() io.Writer { return r.w }

func (r redactingWriter) Write(p []byte) (int, error) {
	if !hasSecret(p) {
		return r.w.Write(p)
	}
	if _, err := io.WriteString(r.w, redactSecrets(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
