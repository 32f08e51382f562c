package tcp_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// RecognizesOpening knows the first 16 bytes a real tcp consumer (a
// kernel node's reference with transport=tcp) sends, read by a plain TCP
// listener as a provider serving smux reads them, and nothing else: a
// smux consumer's opening, a response header, a header declaring 4 GiB,
// TLS, HTTP, zeros, fewer than 16 bytes.
func TestRecognizesOpening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cat := extension.New()
	if err := bundle.Register(cat); err != nil {
		t.Fatal(err)
	}
	n := kernel.NewNode(cat)
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := n.Refer(ctx, spi.MustParse("airnode://"+ln.Addr().String()+"/demo.Echo?transport=tcp&connect.timeout=2s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	first := make([]byte, protocol.HeaderLen)
	_, err = io.ReadFull(c, first)
	c.Close()
	if err != nil {
		t.Fatalf("reading a tcp consumer's first %d bytes: %v", protocol.HeaderLen, err)
	}
	b := tcp.Builder{}
	if !b.RecognizesOpening(first) {
		t.Errorf("RecognizesOpening(% x) = false; want true for a tcp consumer's opening", first)
	}
	smuxSYN := []byte{2, 0, 0, 0, 3, 0, 0, 0, 2, 2, 16, 0, 3, 0, 0, 0}
	for name, bs := range map[string][]byte{
		"smux":     smuxSYN,
		"response": protocol.Header{Flags: protocol.FlagEvent, Status: spi.StatusOK, ID: 1}.Append(nil),
		"4 GiB":    protocol.Header{Flags: protocol.FlagRequest | 1, ID: 1, Length: 1<<32 - 1}.Append(nil),
		"id 0":     protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent}.Append(nil),
		"TLS":      {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0, 0, 0, 0, 0},
		"HTTP":     []byte("GET / HTTP/1.1\r\n"),
		"zeros":    make([]byte, 16),
		"short":    first[:15],
	} {
		if b.RecognizesOpening(bs) {
			t.Errorf("%s: RecognizesOpening(% x) = true; want false", name, bs)
		}
	}
}
