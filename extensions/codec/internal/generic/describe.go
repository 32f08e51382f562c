package generic

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// previewLen bounds TypeError.Value, in bytes before the ellipsis.
const previewLen = 40

// Preview renders a generic value in a few words: numbers and bools as Go
// prints them, strings quoted, binary by its length, maps and arrays as
// JSON; cut at previewLen bytes with an ellipsis.
func Preview(v any) string {
	var s string
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		if len(v) > previewLen {
			return strconv.Quote(cut(v)) + "…"
		}
		return strconv.Quote(v)
	case []byte:
		return strconv.Itoa(len(v)) + " " + plural(len(v))
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	default:
		s = fmt.Sprint(v)
	}
	if len(s) > previewLen {
		return cut(s) + "…"
	}
	return s
}

// cut returns s's first previewLen bytes (s is longer), shortened to end
// before a rune that would be cut.
func cut(s string) string {
	i := previewLen
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// Describe returns the kind of a generic value (a codec's: bool, int64,
// uint64, float64, string, []byte, []any, map[string]any, time.Time,
// another for an ext), with its article ("nil", "a bool", "an integer",
// "a float", "a string", "binary", "an array", "a map", "a timestamp",
// "an ext"), and its Preview: spi.Mismatch's Kind and Value.
func Describe(x any) (kind, value string) {
	switch x.(type) {
	case nil:
		return "nil", ""
	case bool:
		kind = "a bool"
	case int64, uint64:
		kind = "an integer"
	case float64, float32:
		kind = "a float"
	case string:
		kind = "a string"
	case []byte:
		kind = "binary"
	case []any:
		kind = "an array"
	case map[string]any:
		kind = "a map"
	case time.Time:
		kind = "a timestamp"
	default:
		kind = "an ext"
	}
	return kind, Preview(x)
}

// plural returns "byte", with an "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return "byte"
	}
	return "bytes"
}
