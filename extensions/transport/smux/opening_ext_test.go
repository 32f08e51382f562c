package smux_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/kernel/protocol"
)

// RecognizesOpening knows the first 16 bytes a real smux consumer sends
// (read from its connection by a plain TCP listener, as a provider
// serving tcp reads them) and nothing else: an airnode frame header, a
// TLS ClientHello, HTTP, zeros, a server's even stream id.
func TestRecognizesOpening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dialed := make(chan error, 1)
	go func() {
		s, err := build(t).Dial(ctx, ln.Addr().String())
		if err != nil {
			dialed <- err
			return
		}
		defer s.Close()
		st, err := s.Open()
		if err == nil {
			_, err = st.Write(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent}.Append(nil))
		}
		dialed <- err
		<-ctx.Done()
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	first := make([]byte, protocol.HeaderLen)
	if _, err := io.ReadFull(c, first); err != nil {
		t.Fatalf("reading a smux consumer's first %d bytes: %v", protocol.HeaderLen, err)
	}
	if err := <-dialed; err != nil {
		t.Fatal(err)
	}
	cancel()
	b := smux.Builder{}
	if !b.RecognizesOpening(first) || !b.RecognizesOpening(first[:8]) {
		t.Errorf("RecognizesOpening(% x) = false; want true for a smux consumer's opening", first)
	}
	even := append([]byte(nil), first...)
	even[4]++ // stream id 4: a server's
	for name, bs := range map[string][]byte{
		"airnode frame": protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: 1}.Append(nil),
		"TLS":           {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0, 0, 0, 0, 0},
		"HTTP":          []byte("GET / HTTP/1.1\r\n"),
		"zeros":         make([]byte, 16),
		"even id":       even,
		"short":         first[:7],
		"then garbage":  append(append([]byte(nil), first[:8]...), "GET / HT"...),
	} {
		if b.RecognizesOpening(bs) {
			t.Errorf("%s: RecognizesOpening(% x) = true; want false", name, bs)
		}
	}
}
