package smux

import (
	"github.com/airnode/airnode/spi"
)

// URL keys read by Build.
const (
	// KeyBuffer is the receive buffer per session (smux MaxReceiveBuffer), a
	// byte size such as "8MiB". Each stream's flow-control window
	// (smux MaxStreamBuffer) is a quarter of it, so one large transfer never
	// takes the whole session's buffer from the small calls beside it (the
	// primary stream, whose writes bypass smux, keeps the window itself:
	// window.go).
	KeyBuffer = "smux.buffer"
)

// Defaults and bounds of the URL keys.
const (
	DefaultBuffer = 8 << 20   // 8 MiB
	MinBuffer     = 256 << 10 // 256 KiB: a stream window of 64 KiB
	MaxBuffer     = 1 << 30   // 1 GiB: smux caps buffers at 2^31-1

	// frameSize is the largest smux data frame: 32 KiB keeps small frames of
	// other streams interleaved with a large transfer without making a
	// 4 MiB response cost more than 128 frames.
	frameSize = 32 << 10
)

// config is the validated configuration of a Transport.
type config struct {
	buffer int // bytes, MinBuffer..MaxBuffer
}

// parseConfig reads and validates the smux keys of u.
func parseConfig(u spi.URL) (config, error) {
	buf, err := u.Size(KeyBuffer, DefaultBuffer)
	if err != nil {
		return config{}, err
	}
	if buf < MinBuffer || buf > MaxBuffer {
		v, _ := u.Param(KeyBuffer)
		return config{}, &spi.ParamError{Key: KeyBuffer, Value: v, Want: "a byte size from 256KiB to 1GiB"}
	}
	return config{buffer: int(buf)}, nil
}
