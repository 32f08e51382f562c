package smux

import (
	"encoding/binary"
	"io"
	"sync/atomic"
)

// The primary stream's send window. Its writes bypass smux's Stream.Write
// (direct.go), which is what keeps a stream to the window its peer grants
// (smux v2 flow control: the receiver sends a window update, cmdUPD, with
// the bytes it has consumed and its window, on its first read and each
// time half a window more is read). The window is kept here the same way:
// updWatch follows the frames read from the connection and takes the
// primary stream's updates, and the primary stream writes no more than
// the window allows.
//
// Without it a consumer that pipelined requests faster than its provider
// ran them filled the provider's whole session buffer (smux.buffer),
// whose smux then stopped reading the connection; the consumer's write
// blocked holding the connection's write lock, so the window updates its
// own reads must send could not go out, it stopped reading answers, and
// neither side moved again (tester56: -c 1000 --req 60KiB, every call
// CLIENT_TIMEOUT).

// Frame commands and sizes of smux v2 beside cmdPSH (github.com/xtaci/smux
// frame.go).
const (
	cmdUPD            = 4       // a window update: consumed, window (uint32 each, little-endian)
	updLen            = 8       // its data
	initialPeerWindow = 1 << 18 // smux's guess until the first update: 256 KiB
)

// sendWindow is the primary stream's send window: written and consumed
// count its data bytes modulo 2^32, as smux does.
type sendWindow struct {
	sid      atomic.Uint32 // the primary stream; 0 until it exists
	written  atomic.Uint32 // written on it
	consumed atomic.Uint32 // what the peer's last update says it consumed
	window   atomic.Uint32 // the peer's window (initialPeerWindow before an update)
	updated  chan struct{} // 1-buffered: an update came
}

func (w *sendWindow) init() {
	w.window.Store(initialPeerWindow)
	w.updated = make(chan struct{}, 1)
}

// room returns how many more bytes the window allows now (0 or more).
func (w *sendWindow) room() int {
	inflight := int64(int32(w.written.Load() - w.consumed.Load()))
	return int(max(int64(w.window.Load())-max(inflight, 0), 0))
}

// wait blocks until an update comes or the stream or session ends.
func (w *sendWindow) wait(p primaryStream) error {
	select {
	case <-w.updated:
		return nil
	case <-p.GetDieCh():
		return io.ErrClosedPipe
	case <-p.s.done:
		return io.ErrClosedPipe
	}
}

// update applies a window update of the primary stream.
func (w *sendWindow) update(consumed, window uint32) {
	w.consumed.Store(consumed)
	w.window.Store(window)
	select {
	case w.updated <- struct{}{}:
	default:
	}
}

// updWatch follows the frames of the bytes the connection reads, in
// order, and hands the primary stream's window updates to win, and the
// window updates and FINs of the other streams this side opened to credit
// (credit.go). On a plain socket it also tells, for each byte, whether it
// is the primary stream's data or smux's (demux.go). Only the one reading
// the socket uses it: smux's receiver under TLS, the demux's token holder
// on a plain socket.
type updWatch struct {
	win    *sendWindow
	credit *streamCredit
	dm     *demux // nil under TLS: every byte is smux's
	hdr    [frameHeaderLen]byte
	hn     int          // header bytes seen
	left   int          // data bytes of the current frame still to come
	upd    bool         // the current frame is the primary stream's window update
	mine   bool         // its data is the primary stream's (demux)
	psh    bool         // it is a data frame of another stream
	data   [updLen]byte // the current update's data
}

// feed takes the next bytes smux's receiver read (under TLS, where smux
// reads every byte).
//
//go:noinline
func (u *updWatch) feed(p []byte) {
	for len(p) > 0 {
		k, _, _ := u.step(p)
		p = p[k:]
	}
}

// step takes the first k bytes of p (k > 0 when p is not empty): the
// rest of a frame's data, or (part of) a frame header. It returns the
// bytes that go to smux's receiver (s: data, or a whole header once it
// is complete, which is u.hdr and must be copied at once) or to the
// primary stream's reader (d: its data, whose frame header goes nowhere).
func (u *updWatch) step(p []byte) (k int, s, d []byte) {
	if u.left > 0 {
		k = min(len(p), u.left)
		if u.upd {
			copy(u.data[updLen-u.left:], p[:k])
		}
		u.left -= k
		if u.left == 0 && u.upd {
			u.win.update(binary.LittleEndian.Uint32(u.data[:4]), binary.LittleEndian.Uint32(u.data[4:]))
		}
		if u.mine {
			return k, nil, p[:k]
		}
		return k, p[:k], nil
	}
	k = copy(u.hdr[u.hn:], p)
	u.hn += k
	if u.hn < frameHeaderLen {
		return k, nil, nil
	}
	u.hn = 0
	u.left = int(binary.LittleEndian.Uint16(u.hdr[2:]))
	cmd, sid := u.hdr[1], binary.LittleEndian.Uint32(u.hdr[4:])
	if u.dm != nil && u.dm.header(u.hdr[0], cmd, sid, u.win) {
		u.mine, u.upd, u.psh = true, false, false
		return k, nil, nil
	}
	u.mine, u.psh = false, cmd == cmdPSH
	primary := sid != 0 && sid == u.win.sid.Load()
	u.upd = cmd == cmdUPD && u.left == updLen && primary
	if (cmd == cmdUPD || cmd == cmdFIN) && !primary && u.credit.mine(sid) {
		u.credit.start(sid) // the peer began to read it, or closed it
	}
	return k, u.hdr[:], nil
}
