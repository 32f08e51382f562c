package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonMaxDepth is encoding/json's nesting limit (its maxNestingDepth):
// a value nested deeper is refused with "exceeded max depth".
const jsonMaxDepth = 10000

// invalidUTF8 returns the byte offset of the first byte of s that is not
// part of valid UTF-8, or -1. encoding/json would replace it with U+FFFD
// silently.
func invalidUTF8(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// loneSurrogate returns the byte offset of the first \uXXXX escape in the
// JSON text s that is half of a UTF-16 surrogate pair without its other
// half ("\ud800"), or -1. encoding/json would replace it with U+FFFD
// silently. In valid JSON a backslash appears only in a string's escape,
// so s is scanned escape by escape without tracking the quotes.
func loneSurrogate(s string) int {
	hex4 := func(i int) (rune, bool) { // the escape \uXXXX at s[i:]
		if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(s[i+2:i+6], 16, 16)
		return rune(v), err == nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // a two-byte escape (\\, \", \n, ...)
			continue
		}
		if utf16.IsSurrogate(r) {
			lo, ok := hex4(i + 6)
			if r >= 0xdc00 || !ok || lo < 0xdc00 || lo > 0xdfff {
				return i
			}
			i += 6 // the low half
		}
		i += 5
	}
	return -1
}

// readArgFile reads an ARG_JSON given as @path: the file, or stdin for
// "-". JSON never starts with "@", so the form is unambiguous. It reads
// at most limit+1 bytes (the payload limit: a larger argument cannot be
// sent) and refuses a longer input then, without reading the rest: a
// 200 MB argument on stdin cost 4 s and 1 GB before it was refused.
func readArgFile(path string, stdin io.Reader, limit int64) ([]byte, error) {
	var r io.Reader
	switch path {
	case "":
		return nil, errors.New("want @PATH (a file holding the JSON value) or @- (standard input)")
	case "-":
		if stdin == nil {
			return nil, errors.New("no standard input")
		}
		r = stdin
	default:
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
			return nil, argTooLarge(st.Size(), limit, false)
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, argTooLarge(int64(len(data)), limit, true)
	}
	return data, nil
}

// argTooLarge is readArgFile's error for an argument over limit bytes;
// stopped says reading stopped at n bytes rather than n being the size.
func argTooLarge(n, limit int64, stopped bool) error {
	size := fmt.Sprintf("%d bytes", n)
	if stopped {
		size = fmt.Sprintf("more than %d bytes (read stopped there)", limit)
	}
	return fmt.Errorf("%s: over the payload limit of %d bytes (URL key payload, default 8MiB): a call cannot carry it; -p payload=SIZE raises the limit (the provider needs as much)", size, limit)
}
