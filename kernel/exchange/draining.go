package exchange

import "github.com/airnode/airnode/kernel/protocol"

// drainingEvent is the body of the one-way event a provider sends each
// consumer when its node shuts down: it unregisters and waits
// shutdown.wait before closing (Server.AnnounceDraining): "D". It still serves every
// request, so a consumer that has no other provider keeps calling it; a
// consumer that has others may stop picking it (the kernel's directory
// no longer keeps it by empty protection or removal damping). Peers that
// predate it drop it unread, as any unknown one-way event (read.go), and
// a provider that receives one ignores it.
const drainingEvent = "D"

// sendDraining queues the draining event (provider side).
func (c *Channel) sendDraining() {
	var fb [protocol.HeaderLen + len(drainingEvent)]byte
	f := append(fb[:protocol.HeaderLen], drainingEvent...)
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagEvent, ID: c.nextID.Add(1), Length: uint32(len(drainingEvent))}.Put(f)
	c.w.enqueue(f)
}

// Draining reports whether the provider said it is draining (its
// draining event, Server.AnnounceDraining): it will shut down after its
// node's shutdown.wait. The event says nothing of its registry entry:
// the node sends it before it unregisters, and an unregister may fail. Unlike ReadOnly it does not
// stop a load balancer from picking the channel: the provider still
// serves, and the registry's consumers leave it when the registry drops
// it. Always false on the provider side.
func (c *Channel) Draining() bool { return c.draining.Load() }

// AnnounceDraining sends every consumer connected now, and each one that
// connects later, the draining event (Channel.Draining): the node
// unregisters the provider and will shut the server down after its
// shutdown.wait. It changes nothing else: requests are served as
// before. Idempotent; it never blocks (the event joins each channel's
// write queue).
func (s *Server) AnnounceDraining() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return
	}
	s.draining = true
	for ch := range s.chans {
		ch.sendDraining()
	}
}
