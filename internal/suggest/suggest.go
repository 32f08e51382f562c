// Package suggest finds the "did you mean" of a misspelt URL key for code
// that may not import the kernel: extensions import spi and internal/ only
// (DESIGN, import direction), so they cannot use kernel/extension's
// EditDistance. Closest follows the kernel's rule for misspelt URL keys
// (kernel/typo.go likelyTypos): one or two edits away. Pure functions,
// safe for concurrent use.
package suggest

// MaxEdits is how many edits away a key may be to be suggested: more
// suggests unrelated keys ("colour" is four edits from "root").
const MaxEdits = 2

// Closest returns the candidate nearest to name by edit distance when it
// is at most MaxEdits edits away, else "". Ties go to the earlier
// candidate.
func Closest(name string, candidates []string) string {
	best, bestD := "", MaxEdits+1
	for _, c := range candidates {
		if d := EditDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// EditDistance returns the Levenshtein distance of a and b: the fewest
// single-byte insertions, deletions and substitutions turning a into b.
func EditDistance(a, b string) int {
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
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
