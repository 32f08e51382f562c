package logbuf

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// countsRe finds a rate-bounded line's counts (internal/ratelog.Attrs).
var countsRe = regexp.MustCompile(`suppressed=(\d+) in_burst=(\d+)`)

// Burst returns the lines of text (slog text) that contain marker, the
// lines of one rate-bounded burst (internal/ratelog), and the in_burst of
// the last: 1 for a lone first line. It checks what a reader relies on:
// the first line has no counts, every later one has suppressed= and
// in_burst=, and the lines plus their suppressed add up to the last
// in_burst. The lines are taken in the order of their in_burst (a line
// without counts first), not of the text: the limiter decides under its
// lock, but callers on two goroutines write their lines after it, so the
// line of in_burst=2 can reach the text before the first (seen in a CI
// run). Errors: no line, or a check failed (naming the line).
func Burst(text, marker string) (lines []string, inBurst int64, err error) {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, marker) {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil, 0, fmt.Errorf("no line contains %q", marker)
	}
	slices.SortStableFunc(lines, func(a, b string) int { return cmp.Compare(burstOf(a), burstOf(b)) })
	if strings.Contains(lines[0], "suppressed=") {
		return lines, 0, fmt.Errorf("the burst's first line has counts: %q", lines[0])
	}
	sum, inBurst := int64(len(lines)), int64(1)
	for i, l := range lines[1:] {
		m := countsRe.FindStringSubmatch(l)
		if m == nil {
			return lines, 0, fmt.Errorf("line %d lacks suppressed= and in_burst=: %q", i+2, l)
		}
		s, _ := strconv.ParseInt(m[1], 10, 64)
		inBurst, _ = strconv.ParseInt(m[2], 10, 64)
		sum += s
	}
	if sum != inBurst {
		return lines, inBurst, fmt.Errorf("%d lines + suppressed = %d, but the last in_burst is %d", len(lines), sum, inBurst)
	}
	return lines, inBurst, nil
}

// burstOf returns a line's in_burst: 1 for a line without counts (the
// burst's first).
func burstOf(l string) int64 {
	m := countsRe.FindStringSubmatch(l)
	if m == nil {
		return 1
	}
	n, _ := strconv.ParseInt(m[2], 10, 64)
	return n
}
