package smux

import (
	"encoding/binary"
	"errors"
	"io"

	xsmux "github.com/xtaci/smux"
)

// The session's primary stream — the first stream a consumer opens, which
// is the first its provider accepts: the exchange's long-lived stream of
// small frames — writes its data frames straight to the socket, as smux
// PSH frames built here, instead of through smux's Stream.Write. That
// passes each write through two goroutines of smux (its shaper, then its
// sender, which writes and answers back on a channel): three goroutine
// hand-offs per write, each a likely futex wake-up of an idle thread. On
// the wire nothing changes: the peer's smux reads the same frames, and a
// peer that writes through smux is read as before.
//
// The primary stream keeps smux's per-stream send window (a quarter of
// the peer's smux.buffer) itself: window.go. Every other stream — the
// large frames that get a stream of their own — writes through smux, so
// their bytes interleave with the primary stream's at smux's frame size
// (32 KiB).
//
// One frame at a time goes on the socket: smux's sender (WriteBuffers) and
// the primary stream's writes take the connection's wmu for whole frames.
// A TryWrite that the socket takes only part of a frame of copies that
// frame's unwritten tail to owed, which the next writer writes before
// anything else, and starts a goroutine that writes it once the socket
// has room, should no other writer come.

// Frame layout of smux protocol version 2 (github.com/xtaci/smux frame.go):
// version, command, data length (uint16, little-endian), stream id
// (uint32, little-endian), then the data.
const (
	frameHeaderLen = 8
	smuxVersion    = 2 // Transport's Config.Version
	cmdPSH         = 2 // a data frame
)

// primaryStream is a session's primary stream (see above): Write sends
// its data frames straight to the socket.
type primaryStream struct{ *stream }

// Write writes b as data frames of up to frameSize bytes, no more at a
// time than the peer's window allows (window.go), waiting for its updates
// and while the socket's send buffer is full. It fails with
// io.ErrClosedPipe once the stream or session is closed, as smux's Write
// does, and with the connection's error (which kills the session) when
// the socket fails.
func (p primaryStream) Write(b []byte) (int, error) {
	win := &p.s.conn.win
	n := 0
	for len(b) > 0 {
		if p.closed() {
			return n, io.ErrClosedPipe
		}
		room := win.room()
		if room == 0 {
			p.s.conn.busyBegin() // the updates come over the socket
			err := win.wait(p)
			p.s.conn.busyEnd()
			if err != nil {
				return n, err
			}
			continue
		}
		k := min(room, len(b))
		win.written.Add(uint32(k)) // before the peer can answer it
		if _, err := p.s.conn.writeFrames(p.ID(), b[:k]); err != nil {
			return n, err
		}
		n += k
		b = b[k:]
	}
	return n, nil
}

// Read reads the primary stream: on a plain socket from the socket itself
// (demux.go), else through smux. A protocol error kills the session and
// is returned as a *ProtocolError.
func (p primaryStream) Read(b []byte) (int, error) {
	c := p.s.conn
	if c.dm == nil {
		return p.stream.Read(b)
	}
	n, err := c.readPrimary(b, p.GetDieCh())
	if err != nil && errors.Is(err, xsmux.ErrInvalidProtocol) {
		p.s.kill()
		if pe := p.s.protocolError(err); pe != nil {
			err = pe
		}
	}
	return n, err
}

// WriteTo writes what Read reads to w until the stream ends (io.EOF is
// not an error) or w fails; smux's own WriteTo reads smux's buffers,
// which a primary stream that reads for itself leaves empty.
func (p primaryStream) WriteTo(w io.Writer) (int64, error) {
	if p.s.conn.dm == nil {
		return p.stream.WriteTo(w)
	}
	var n int64
	buf := make([]byte, frameSize)
	for {
		k, err := p.Read(buf)
		if k > 0 {
			m, werr := w.Write(buf[:k])
			n += int64(m)
			if werr != nil {
				return n, werr
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// Close closes the stream; its reader stops.
func (p primaryStream) Close() error {
	if p.s.conn.dm != nil {
		p.s.conn.closePrimary()
	}
	return p.stream.Close()
}

// closed reports whether the stream has been closed.
func (p primaryStream) closed() bool {
	select {
	case <-p.GetDieCh():
		return true
	default:
		return false
	}
}

// tryPrimaryStream is a primary stream on a plain socket: it also
// implements spi.TryWriter.
type tryPrimaryStream struct{ primaryStream }

// TryWrite writes what the socket's send buffer and the peer's window
// (window.go) take of b at once, as data frames, without waiting: n bytes
// of b (0 when either is full, or another writer holds the connection). A
// frame the socket takes only part of counts as written: its tail goes
// out before any other frame (owed). Any error but a full buffer kills the
// session, as with Write.
func (t tryPrimaryStream) TryWrite(b []byte) (int, error) {
	if t.closed() {
		return 0, io.ErrClosedPipe
	}
	win := &t.s.conn.win
	room := win.room()
	if room == 0 {
		return 0, nil
	}
	n, err := t.s.conn.tryWriteFrames(t.ID(), b[:min(room, len(b))])
	win.written.Add(uint32(n))
	return n, err
}

// frames sets c.vec to b as data frames of stream sid, each a header from
// c.hdrs and up to frameSize bytes of b. On wmu.
func (c *watchedConn) frames(sid uint32, b []byte) {
	n := (len(b) + frameSize - 1) / frameSize
	if cap(c.hdrs) < n {
		c.hdrs = make([][frameHeaderLen]byte, n)
	}
	v := c.vec[:0]
	for i := range n {
		size := min(len(b), frameSize)
		h := &c.hdrs[i]
		h[0], h[1] = smuxVersion, cmdPSH
		binary.LittleEndian.PutUint16(h[2:], uint16(size))
		binary.LittleEndian.PutUint32(h[4:], sid)
		v = append(v, h[:], b[:size])
		b = b[size:]
	}
	c.vec = v
}

// writeFrames writes b as data frames of stream sid, after what is owed,
// waiting for room in the send buffer.
func (c *watchedConn) writeFrames(sid uint32, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if len(c.owed) > 0 {
		if err := c.payOwed(); err != nil {
			return 0, err
		}
	}
	c.frames(sid, b)
	_, err := c.writev(c.vec, true)
	c.clearVec()
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// tryWriteFrames is TryWrite of b as data frames of stream sid.
func (c *watchedConn) tryWriteFrames(sid uint32, b []byte) (int, error) {
	if len(b) == 0 || !c.wmu.TryLock() {
		return 0, nil
	}
	defer c.wmu.Unlock()
	if len(c.owed) > 0 {
		m, err := c.writev([][]byte{c.owed}, false)
		if err != nil {
			return 0, err
		}
		if c.owed = c.owed[m:]; len(c.owed) > 0 {
			return 0, nil // the goroutine that owes it writes it once there is room
		}
		c.owed = nil
	}
	c.frames(sid, b)
	defer c.clearVec() // after the count below, which reads c.hdrs
	wire, err := c.writev(c.vec, false)
	if err != nil {
		return 0, err
	}
	// Count the frames the socket took, whole or in part.
	n := 0
	for i := 0; wire > 0; i++ {
		h, data := c.hdrs[i][:], b[n:n+min(len(b)-n, frameSize)]
		if wire < len(h)+len(data) {
			c.owe(h, data, wire)
		}
		n += len(data)
		wire -= len(h) + len(data)
	}
	return n, nil
}

// owe keeps the unwritten tail of the frame h+data, of which the socket
// took the first done bytes, and starts the goroutine that writes it once
// the socket has room (unless a writer does so first). On wmu.
func (c *watchedConn) owe(h, data []byte, done int) {
	owed := make([]byte, 0, len(h)+len(data)-done)
	if done < len(h) {
		owed = append(owed, h[done:]...)
		done = len(h)
	}
	c.owed = append(owed, data[done-len(h):]...)
	go func() {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		if len(c.owed) > 0 {
			_ = c.payOwed() // an error has killed the session
		}
	}()
}

// payOwed writes what is owed, waiting for room. On wmu.
//
//go:noinline
func (c *watchedConn) payOwed() error {
	_, err := c.writev([][]byte{c.owed}, true)
	c.owed = nil
	return err
}

// keptFrames bounds the headers and vector a connection keeps between
// writes: a batch of more frames (over 256 KiB) gets them for itself, so
// an idle connection does not hold a large one's.
const keptFrames = 8

// clearVec drops c.vec's references to the written bytes, and the vector
// and headers themselves after a write of over keptFrames frames. On wmu.
func (c *watchedConn) clearVec() {
	if cap(c.hdrs) > keptFrames {
		c.hdrs, c.vec = nil, nil
		return
	}
	clear(c.vec[:cap(c.vec)])
	c.vec = c.vec[:0]
}
