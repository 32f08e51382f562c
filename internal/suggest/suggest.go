// Package suggest finds the "did you mean" of a misspelt or shortened name
// or URL key (Closest: a few edits away, else Stem's one word lengthened:
// "retry" for "retries")
// for code that may not import the kernel: extensions import spi and
// internal/ only (the import rules internal/archtest enforces), so they cannot use
// kernel/extension. Every "did you mean" of airnode follows Closest's
// rule: unknown extension names (kernel/extension.Closest), misspelt URL
// keys (kernel/typo.go UnreadKeys, list --explain), registry URL keys,
// plugins.yaml keys. Pure functions, safe for concurrent use.
package suggest

import "strings"

// MaxEdits is the most edits a suggestion may be away from any name: more
// suggests unrelated keys ("colour" is four edits from "root").
const MaxEdits = 2

// MaxDistance returns how many edits name may be from a suggestion: a
// third of its length in bytes, at least 1 and at most MaxEdits. A short
// name allows one edit ("tokn", "tpc"), so that "nope" (3 edits from
// "token") gets none; from six bytes on two ("sesion.timeout" would allow
// more, but two edits away is already a different word). The bound follows
// cobra's SuggestionsMinimumDistance (2) for long names and is stricter for
// short ones, where two edits change half the word.
func MaxDistance(name string) int { return min(MaxEdits, max(1, len(name)/3)) }

// Closest returns the candidate nearest to name by Distance when it is at
// most MaxDistance(name) edits away; else the candidate Stem finds ("retries"
// for "retry", three edits away); else "". Ties go to the earlier
// candidate. A candidate equal to name is returned (distance 0); else one
// equal to it but for case ("idle" for "IDLE") comes first.
func Closest(name string, candidates []string) string {
	for _, c := range candidates { // "IDLE" is "idle" in another case: the likeliest
		if c != name && strings.EqualFold(c, name) {
			return c
		}
	}
	best, bestD := "", MaxDistance(name)+1
	for _, c := range candidates {
		if d := Distance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		best = Stem(name, candidates)
	}
	return best
}

// MinStem is the fewest bytes the shorter of two names keeps after its
// ending is dropped for Stem to match them: "time" matches "timeout", "ret"
// matches nothing.
const MinStem = 4

// Stem returns the candidate that is name lengthened or shortened within
// one word, else "": after dropping a plural or -y ending from both
// ("ies", else "s", else "y"; ignoring case), one is a prefix of the
// other, the shorter keeps at least MinStem bytes and the rest of the
// longer has no "." (another key of a namespace: "heartbeat" never
// suggests "heartbeat.interval"). So "retry" gives "retries" (both
// "retr"), "time" "timeout", "Order" "OrderID", "timeouts" "timeout". The
// candidate with the shortest rest wins ("timeout" over "timestamp" for
// "time"), then the earlier one. Closest tries it when no candidate is
// within MaxDistance edits.
func Stem(name string, candidates []string) string {
	n := stem(name)
	if len(n) < MinStem {
		return ""
	}
	best, bestRest := "", -1
	for _, c := range candidates {
		s := stem(c)
		short, long := n, s
		if len(short) > len(long) {
			short, long = long, short
		}
		if len(short) < MinStem || !strings.HasPrefix(long, short) || strings.Contains(long[len(short):], ".") {
			continue
		}
		if rest := len(long) - len(short); bestRest < 0 || rest < bestRest {
			best, bestRest = c, rest
		}
	}
	return best
}

// stem returns s in lower case without its plural or -y ending: "ies",
// else "s", else "y" ("retries" and "retry" are both "retr").
func stem(s string) string {
	s = strings.ToLower(s)
	for _, end := range []string{"ies", "s", "y"} {
		if t, ok := strings.CutSuffix(s, end); ok {
			return t
		}
	}
	return s
}

// Qualified returns the one candidate that is name qualified by a
// namespace, ending in "." + name ("acme.p2c" for "p2c": a plugin's
// binary calls itself p2c while plugins.yaml names it acme.p2c), else "":
// none does, or several do and none is likelier. Unknown names try it
// when Closest finds nothing.
func Qualified(name string, candidates []string) string {
	found := ""
	for _, c := range candidates {
		if len(c) > len(name)+1 && c[len(c)-len(name)-1] == '.' && c[len(c)-len(name):] == name {
			if found != "" {
				return ""
			}
			found = c
		}
	}
	return found
}

// Distance returns the optimal string alignment distance of a and b: the
// fewest single-byte insertions, deletions, substitutions and swaps of two
// adjacent bytes turning a into b, no byte being edited twice (Damerau's
// rule as most spelling checkers apply it, Wagner-Fischer's table with the
// swap case). A swap is the commonest typo ("tpc", "retires"): it counts
// one edit here, two in EditDistance.
func Distance(a, b string) int {
	// three rows of the table: i-2, i-1, i
	pp := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}
