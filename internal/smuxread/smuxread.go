// Package smuxread reads a smux stream without losing the data the peer
// sent just before its session ended.
package smuxread

import (
	"errors"
	"io"

	"github.com/xtaci/smux"
)

// Read is st.Read, except that data the peer sent before the session
// ended is read before the error. smux's Read, woken in its wait by the
// socket's read error (the peer's close right after its last frame) or by
// the stream's death, returns that error without looking at the data its
// receive loop had just buffered (smux v1.5.58 stream.waitRead looks for
// buffered data after a FIN, not after those): a consumer failed the
// answer its provider wrote just before closing ("closed by peer", about
// once in a loaded CI run's thousands of
// TestLastResponsesBeforeSessionCloseAreRead calls). On such an error one
// more Read takes what is buffered, or returns an error at once (both
// wake-ups are closed channels, so it does not block). io.EOF, a deadline
// (smux.ErrTimeout) and a protocol error are returned as they are.
func Read(st *smux.Stream, b []byte) (int, error) {
	n, err := st.Read(b)
	if n != 0 || err == nil || err == io.EOF || errors.Is(err, smux.ErrTimeout) || errors.Is(err, smux.ErrInvalidProtocol) {
		return n, err
	}
	if n2, err2 := st.Read(b); n2 > 0 {
		return n2, nil
	} else if err2 != nil {
		err = err2
	}
	return 0, err
}
