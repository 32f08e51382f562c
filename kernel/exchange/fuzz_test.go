package exchange

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// FuzzProviderInput writes arbitrary bytes to a provider channel and checks
// that it never panics, answers or closes, and always shuts down cleanly.
func FuzzProviderInput(f *testing.F) {
	req := getFrame()
	if err := encodeRequest(req, mpCodec{}, echoInv("Echo", "x"), time.Second); err != nil {
		f.Fatal(err)
	}
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: 1, Length: uint32(len(req.b) - protocol.HeaderLen)}.Put(req.b)
	f.Add(append([]byte(nil), req.b...))
	f.Add(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: 2}.Append(nil))
	f.Add(append(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: 3, Length: 3}.Append(nil), 0xc1, 0xc1, 0xc1))
	f.Add(append(protocol.Header{Flags: 1, Status: spi.StatusOK, ID: 99, Length: 1}.Append(nil), 0xc0))
	f.Add(append(protocol.Header{Flags: protocol.FlagRequest | 2, ID: 4, Length: 2}.Append(nil), '{', '}'))
	f.Add([]byte("\xa1\x7e"))
	f.Add([]byte("garbage"))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, in []byte) {
		a, b := net.Pipe()
		ch := NewChannel(newConnSession(a, true), Options{Side: spi.Provider, Codec: codecByID, Handler: &echoService{}, Logger: quiet})
		go io.Copy(io.Discard, b)
		b.SetWriteDeadline(time.Now().Add(2 * time.Second))
		b.Write(in)
		time.Sleep(time.Millisecond)
		b.Close()
		ch.Close("fuzz done")
		ch.Wait()
	})
}
