package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/airnode/airnode/spi"
)

// printBizError writes, after a failed call's error line, the business
// error the provider's method returned (spi.BizError), if err has one:
// "business error: code N, reason R" (the reason when set, the
// BizError's own message when the error line's text differs from it),
// then a "detail KEY=VALUE" line each, sorted by key; under --log-format
// json one record "business error" with code, reason, message and the
// object details. Nothing when err has none.
func printBizError(w io.Writer, logFormat string, err error) {
	var be *spi.BizError
	if !errors.As(err, &be) || be == nil {
		return
	}
	if strings.EqualFold(logFormat, "json") {
		details := be.Details
		if details == nil {
			details = map[string]string{}
		}
		stderrLine(w, logFormat, slog.LevelError, "call", "", "business error", "code", be.Code, "reason", be.Reason, "message", be.Message, "details", details)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "business error: code %d", be.Code)
	if be.Reason != "" {
		fmt.Fprintf(&b, ", reason %s", quoteIfNeeded(be.Reason, ","))
	}
	if !strings.HasSuffix(err.Error(), ": "+be.Error()) {
		fmt.Fprintf(&b, ", message %q", be.Message)
	}
	b.WriteByte('\n')
	for _, k := range slices.Sorted(maps.Keys(be.Details)) {
		fmt.Fprintf(&b, "detail %s=%s\n", quoteIfNeeded(k, "="), quoteIfNeeded(be.Details[k], ""))
	}
	fmt.Fprint(w, b.String())
}
