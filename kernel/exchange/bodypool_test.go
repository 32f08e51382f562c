package exchange

import "testing"

func TestBodyPoolClasses(t *testing.T) {
	for _, n := range []int{0, 1, 511, 512, 513, 1024, 1025, 40000, 65535, 65536, 65537, 1 << 20} {
		b := getBody(n)
		if len(b) != n {
			t.Fatalf("getBody(%d): len %d", n, len(b))
		}
		if n <= maxPooledFrame && (cap(b) < n || cap(b)&(cap(b)-1) != 0 || cap(b) < minPooledBody) {
			t.Fatalf("getBody(%d): cap %d, want a power of two ≥ %d", n, cap(b), max(n, minPooledBody))
		}
		putBody(b)
		if c := getBody(n); len(c) != n {
			t.Fatalf("reused getBody(%d): len %d", n, len(c))
		}
	}
}

func BenchmarkBodyPool(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		putBody(getBody(200))
	}
}
