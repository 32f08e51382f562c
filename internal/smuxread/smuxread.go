// Package smuxread reads a smux stream without losing the data the peer
// sent just before its session ended.
package smuxread

import (
	"errors"

	"github.com/xtaci/smux"
)

// Read is st.Read, except that data the peer sent before the session
// ended is read before the error. smux's Read, woken in its wait by the
// socket's read error (io.EOF: the peer's close right after its last
// frame) or by the stream's death, returns that error without looking at
// the data its receive loop had just buffered (smux v1.5.58
// stream.waitRead looks for buffered data after a FIN, not after those):
// a consumer failed the answer its provider wrote just before closing
// ("closed by peer": 4 of 100 runs of
// TestLastResponsesBeforeSessionCloseAreRead, 40 calls each, with three
// busy loops on the machine's two cores). On such an error one more Read
// takes what is buffered, or returns an error at once (every wake-up that
// ends a wait for good is a closed channel, so it does not block). A
// deadline (smux.ErrTimeout) and a protocol error are returned as they
// are.
func Read(st *smux.Stream, b []byte) (int, error) {
	n, err := st.Read(b)
	if n != 0 || err == nil || errors.Is(err, smux.ErrTimeout) || errors.Is(err, smux.ErrInvalidProtocol) {
		return n, err
	}
	if n2, err2 := st.Read(b); n2 > 0 {
		return n2, nil
	} else if err2 != nil {
		err = err2
	}
	return 0, err
}
