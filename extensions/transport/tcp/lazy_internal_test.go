package tcp

import (
	"net"
	"testing"
	"time"
)

// TestReadLazy_FallsBackWithoutSocket: on a connection that is no socket
// (as under TLS) ReadLazy takes its buffer first and reads as Read does.
func TestReadLazy_FallsBackWithoutSocket(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	s := newSession(a, true)
	defer s.Close()
	if s.raw != nil {
		t.Fatal("a net.Pipe end has a raw socket")
	}
	st := s.newStream().(*stream)
	go func() { _, _ = b.Write([]byte("hi")) }()
	gets, puts := 0, 0
	buf, n, err := st.ReadLazy(func() []byte { gets++; return make([]byte, 8) }, func([]byte) { puts++ })
	if err != nil || string(buf[:n]) != "hi" || gets != 1 || puts != 0 {
		t.Fatalf("ReadLazy = %q, %v with %d gets, %d puts; want \"hi\", nil, 1, 0", buf[:n], err, gets, puts)
	}
	b.Close()
	done := make(chan error, 1)
	go func() {
		_, _, err := st.ReadLazy(func() []byte { return make([]byte, 8) }, func([]byte) {})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("ReadLazy on a closed pipe returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadLazy on a closed pipe did not return")
	}
}
