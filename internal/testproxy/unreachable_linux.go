package testproxy

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// Unreachable, while on, makes the path to the target go dark without a
// word, as a firewall dropping every packet does (nft drop: no FIN, no
// RST, no SYN-ACK): the forwarded connections are paused (Pause: nothing
// crosses, nothing is closed) and new dials time out. For the dials the
// proxy's listener is replaced by a socket at the same address whose
// accept queue is full (listen backlog 0, one connection never
// accepted), so the kernel drops the SYNs: the dialer gets "i/o
// timeout", not "connection refused". Off listens and forwards again
// (new connections), and resumes the paused ones. Linux only.
func (p *Proxy) Unreachable(on bool) {
	if !on {
		p.mu.Lock()
		if p.unreach != nil {
			p.unreach.Close()
			p.unreach = nil
		}
		closed := p.closed
		p.mu.Unlock()
		if !closed {
			p.listen(p.Addr())
		}
		p.Pause(false)
		return
	}
	p.Pause(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.unreach != nil {
		return
	}
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	f, err := fullListener(p.addr)
	if err != nil {
		p.t.Fatalf("testproxy: Unreachable %s: %v", p.addr, err)
	}
	p.unreach = f
}

// full is a listening socket with a full accept queue, and the
// connection that fills it.
type full struct {
	fd     int
	filler net.Conn
}

func (f *full) Close() error {
	return errors.Join(f.filler.Close(), syscall.Close(f.fd))
}

// fullListener listens on addr (an IPv4 host:port) with backlog 0 and
// fills the queue with one connection it never accepts: the kernel then
// drops every further SYN (the accept queue's overflow).
func fullListener(addr string) (*full, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	sa := &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if err := syscall.Listen(fd, 0); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &full{fd: fd, filler: c}, nil
}
