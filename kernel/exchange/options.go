package exchange

import (
	"context"
	"log/slog"

	"github.com/airnode/airnode/spi"
)

// Request is one decoded request header on the provider; the arguments are
// still in Args. A Request and its Args are valid only until Serve returns.
type Request struct {
	Service     string            // service key "group/interface:version"
	Method      string            // method name ("Echo")
	Attachments map[string]string // nil when none; includes "timeout" (ms) when the consumer set a deadline
	NumArgs     int               // number of arguments that follow in Args
	Args        spi.Decoder       // positioned at the first argument; decode NumArgs values into the parameter types
	Codec       spi.Codec         // the consumer's codec; the response is encoded with it
	Remote      string            // consumer "host:port"
}

// Handler serves requests on the provider side. Serve is called in its own
// goroutine per request, with ctx cancelled when the consumer's deadline
// (attachment "timeout", ms) passes or the channel dies. A Result.Err that is
// an *spi.Error keeps its Status on the wire; any other error becomes
// SERVICE_ERROR with its message. A panic in Serve is recovered by the
// exchange and answered SERVER_ERROR.
type Handler interface {
	Serve(ctx context.Context, req *Request) spi.Result
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) spi.Result

// Serve calls f.
func (f HandlerFunc) Serve(ctx context.Context, req *Request) spi.Result { return f(ctx, req) }

// Options configure a Channel or a Server. Codec is required wherever
// requests arrive (the provider side; a consumer decodes responses with the
// codec it called with); the other fields have usable zero values. Server
// forces Side to spi.Provider.
type Options struct {
	Side      spi.Side                          // spi.Consumer for dialed sessions, spi.Provider for accepted ones
	Payload   int64                             // max frame body in bytes; 0 means 8 MiB (protocol.DefaultPayload)
	Codec     func(id uint8) (spi.Codec, error) // resolves a frame's codec id (catalogs.CodecByID)
	Handler   Handler                           // provider side: serves requests; nil on a pure consumer
	Heartbeat spi.Heartbeat                     // optional: Watch(ch) is called in NewChannel (must not block), stop() after the channel died
	Logger    *slog.Logger                      // nil: slog.Default(); protocol violations are logged at Warn, ordinary closes at Info/Debug
	OnClose   func(ch *Channel, reason string)  // optional: called once after the channel died and its goroutines exited
}
