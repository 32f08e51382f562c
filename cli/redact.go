package cli

import (
	"io"
	"regexp"
)

// secretParam matches a secret URL parameter in free text, as
// spi.URL.Redacted and spi.IsSecretKey define them: "token=" or a method's
// "Echo.token=" after '?', '&', a space, a quote or the start, up to the
// end of the value ('&', a space, a quote or a backslash).
var secretParam = regexp.MustCompile(`(^|[?&\s"'(,;])((?:[\w$-]+\.)*token=)[^&\s"'\\]+`)

// secretPassword matches the password of a URL's userinfo
// ("zookeeper://user:pass@host").
var secretPassword = regexp.MustCompile(`(://[^/@:\s"']+:)[^/@\s"']+@`)

// redactSecrets returns s with every secret of a URL in it replaced by
// "***" (the token's value, a userinfo password), as spi.URL.Redacted
// writes a URL. It is the one place serve, call and bench hide secrets:
// every line they write to stderr (logs, the kernel's and the
// registries', and errors) goes through redactingWriter.
func redactSecrets(s string) string {
	s = secretParam.ReplaceAllString(s, "${1}${2}***")
	return secretPassword.ReplaceAllString(s, "${1}***@")
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
	if !secretParam.Match(p) && !secretPassword.Match(p) {
		return r.w.Write(p)
	}
	if _, err := io.WriteString(r.w, redactSecrets(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
