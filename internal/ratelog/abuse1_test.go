package ratelog

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"
)

// Random bytes from the network made "bad magic 0xeb3a" a class of its
// own each time: the hex letters after "0x" were kept unless a digit came
// before them (tester34 F2: 83 lines for 500 connections). Every magic is
// now one class, and so is every number of the other protocol-error
// reasons.
func TestHexClass_RandomMagicIsOneClass(t *testing.T) {
	for _, tc := range [][2]string{
		{"protocol: bad magic 0xeb3a", "protocol: bad magic #x#"},
		{"protocol: bad magic 0xFFFF", "protocol: bad magic #x#"},
		{"protocol: bad magic 0x0000", "protocol: bad magic #x#"},
		{"request 17: unknown codec id 7", "request #: unknown codec id #"},
		{"protocol: frame too large: body 4294967295 bytes", "protocol: frame too large: body # bytes"},
		{"0x", "#x"},
		{"box 0xg", "box #xg"},
		{"a fix", "a fix"},
	} {
		if got := HexClass(tc[0]); got != tc[1] {
			t.Errorf("HexClass(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
	classes := map[string]bool{}
	b := make([]byte, 2)
	for range 500 {
		rand.Read(b)
		classes[HexClass(fmt.Sprintf("protocol: bad magic 0x%02x%02x", b[0], b[1]))] = true
	}
	if len(classes) != 1 {
		t.Errorf("500 random magics made %d classes, want 1", len(classes))
	}
	// and a limiter fed them logs a burst's lines: 1, 2, 4 ... 256
	var l Limiter
	lines := 0
	now := time.Now()
	for range 500 {
		rand.Read(b)
		if ok, _, _ := l.Allow(HexClass(fmt.Sprintf("protocol: bad magic 0x%02x%02x", b[0], b[1])), now); ok {
			lines++
		}
	}
	if lines != 9 {
		t.Errorf("500 random magics got %d lines, want 9 (1, 2, 4 ... 256)", lines)
	}
}
