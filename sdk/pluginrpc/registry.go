package pluginrpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/metadata"

	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

// ---------------------------------------------------------------- plugin side

type registryServer struct {
	pb.UnimplementedRegistryServer
	b spi.RegistryBuilder
	h handles[spi.Registry]
}

func newRegistryServer(b spi.RegistryBuilder) *registryServer { return &registryServer{b: b} }

func (s *registryServer) Describe(context.Context, *pb.Empty) (*pb.Describe, error) {
	ro, _ := s.b.(spi.ReadOnlyRegistry)
	return &pb.Describe{Name: s.b.Name(), Keys: keysToPB(s.b), ReadOnly: ro != nil && ro.ReadOnly(), Reach: reachToPB(s.b)}, nil
}

func (s *registryServer) Build(_ context.Context, req *pb.BuildRequest) (rep *pb.BuildReply, _ error) {
	defer func() {
		if r := recover(); r != nil {
			rep = &pb.BuildReply{Error: recovered("registry Build", r)}
		}
	}()
	u, err := spi.Parse(req.Url)
	if err != nil {
		return &pb.BuildReply{Error: toPB(err)}, nil
	}
	r, err := s.b.Build(u)
	if err != nil {
		return &pb.BuildReply{Error: toPB(err)}, nil
	}
	return &pb.BuildReply{Handle: s.h.add(r, "")}, nil
}

// withURL resolves the handle and parses the URL of req.
func (s *registryServer) withURL(req *pb.RegistryRequest) (spi.Registry, spi.URL, error) {
	r, err := s.h.get(req.Handle)
	if err != nil {
		return nil, spi.URL{}, err
	}
	u, err := spi.Parse(req.Url)
	return r, u, err
}

func (s *registryServer) Register(ctx context.Context, req *pb.RegistryRequest) (rep *pb.ErrorReply, _ error) {
	defer func() {
		if r := recover(); r != nil {
			rep = &pb.ErrorReply{Error: recovered("registry Register", r)}
		}
	}()
	r, u, err := s.withURL(req)
	if err == nil {
		err = r.Register(ctx, u)
	}
	return &pb.ErrorReply{Error: toPB(err)}, nil
}

func (s *registryServer) Unregister(ctx context.Context, req *pb.RegistryRequest) (rep *pb.ErrorReply, _ error) {
	defer func() {
		if r := recover(); r != nil {
			rep = &pb.ErrorReply{Error: recovered("registry Unregister", r)}
		}
	}()
	r, u, err := s.withURL(req)
	if err == nil {
		err = r.Unregister(ctx, u)
	}
	return &pb.ErrorReply{Error: toPB(err)}, nil
}

func urlStrings(l []spi.URL) []string {
	out := make([]string, len(l))
	for i, u := range l {
		out[i] = u.String()
	}
	return out
}

func (s *registryServer) Lookup(ctx context.Context, req *pb.RegistryRequest) (rep *pb.URLList, _ error) {
	defer func() {
		if r := recover(); r != nil {
			rep = &pb.URLList{Error: recovered("registry Lookup", r)}
		}
	}()
	r, u, err := s.withURL(req)
	if err != nil {
		return &pb.URLList{Error: toPB(err)}, nil
	}
	l, err := r.Lookup(ctx, u)
	if err != nil {
		return &pb.URLList{Error: toPB(err)}, nil
	}
	return &pb.URLList{Urls: urlStrings(l)}, nil
}

// subscribedHeader is the header key the plugin sends once the registry's
// Subscribe returned a subscription, before any list: the host's
// Subscribe waits for it or for the error that comes instead, so that a
// Subscribe that fails fails there, with its status (tester73 #1). A
// plugin built before it sends no such header; the host then reads the
// stream's first message (a list or the error).
const subscribedHeader = "airnode-subscribed"

// Subscribe forwards every notify to the stream, in order, until the host
// cancels. notify must not block for long, so lists go through a one-slot
// mailbox that keeps only the newest list (each list is complete). The
// registry's answer comes first: the subscribedHeader header when it
// returned a subscription, else its error as the stream's only message.
func (s *registryServer) Subscribe(req *pb.RegistryRequest, stream pb.Registry_SubscribeServer) (err error) {
	r, u, err := s.withURL(req)
	if err != nil {
		return stream.Send(&pb.URLList{Error: toPB(err)})
	}
	var sub spi.Subscription
	defer func() {
		if p := recover(); p != nil {
			if sub != nil {
				sub.Stop()
			}
			err = stream.Send(&pb.URLList{Error: recovered("registry Subscribe", p)})
		}
	}()
	var (
		mu     sync.Mutex
		latest []string
		have   bool
	)
	wake := make(chan struct{}, 1)
	sub, err = r.Subscribe(stream.Context(), u, func(providers []spi.URL) {
		l := urlStrings(providers)
		mu.Lock()
		latest, have = l, true
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return stream.Send(&pb.URLList{Error: toPB(err)})
	}
	if sub == nil {
		return stream.Send(&pb.URLList{Error: toPB(spi.Errorf(spi.StatusServerError,
			"pluginrpc: registry %q: Subscribe returned neither a subscription nor an error", s.b.Name()))})
	}
	defer sub.Stop()
	if err := stream.SendHeader(metadata.Pairs(subscribedHeader, "1")); err != nil {
		return err
	}
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case <-wake:
		}
		mu.Lock()
		l, ok := latest, have
		have = false
		mu.Unlock()
		if !ok {
			continue
		}
		if l == nil {
			l = []string{}
		}
		if err := stream.Send(&pb.URLList{Urls: l}); err != nil {
			return err
		}
	}
}

func (s *registryServer) Services(ctx context.Context, req *pb.Handle) (rep *pb.ServiceList, _ error) {
	defer func() {
		if r := recover(); r != nil {
			rep = &pb.ServiceList{Error: recovered("registry Services", r)}
		}
	}()
	r, err := s.h.get(req.Id)
	if err != nil {
		return &pb.ServiceList{Error: toPB(err)}, nil
	}
	l, err := r.Services(ctx)
	return &pb.ServiceList{Services: l, Error: toPB(err)}, nil
}

func (s *registryServer) Close(_ context.Context, req *pb.Handle) (rep *pb.ErrorReply, _ error) {
	defer func() {
		if r := recover(); r != nil {
			rep = &pb.ErrorReply{Error: recovered("registry Close", r)}
		}
	}()
	r, err := s.h.get(req.Id)
	if err != nil {
		return &pb.ErrorReply{}, nil // already closed
	}
	s.h.remove(req.Id)
	return &pb.ErrorReply{Error: toPB(r.Close())}, nil
}

// ---------------------------------------------------------------- host side

// RegistryOptions configure a plugin-backed registry builder.
type RegistryOptions struct {
	Name   string // extension name (the URL scheme it serves)
	Source Source
	// Retry is the pause before re-subscribing after a broken stream while
	// the plugin is up; default 200ms.
	Retry time.Duration
	// Keys are the URL keys the plugin declared (Description.Keys); the
	// builder reports them as its spi.KeyDescriber. nil: none declared.
	// A Source that is a DescribedSource overrides them with the running
	// process's.
	Keys []spi.KeyDoc
	// Traits, when set, is what the plugin said of its registry builder
	// at start (Description.ReadOnly and Reach). When nil, the builder
	// asks the plugin (Describe, within 2 s) the first time ReadOnly or
	// Reach is asked while the plugin is up, and remembers the answer.
	Traits *RegistryTraits
}

// RegistryTraits is what a registry plugin says of its builder: whether
// its registries are read-only (spi.ReadOnlyRegistry) and whom their
// Register reaches (spi.RegistryReacher).
type RegistryTraits struct {
	ReadOnly bool
	Reach    spi.RegistryReach
}

// NewRegistryBuilder returns a spi.RegistryBuilder whose registries live in
// the plugin process. A registry survives restarts of the plugin: after one
// it is rebuilt there, every URL it had registered is registered again and
// every subscription resumes; in between, subscribers keep their last list
// (never an empty one) and Register/Lookup fail fast.
func NewRegistryBuilder(o RegistryOptions) spi.RegistryBuilder {
	if o.Retry <= 0 {
		o.Retry = 200 * time.Millisecond
	}
	return &registryBuilder{o: o}
}

type registryBuilder struct {
	o RegistryOptions

	mu     sync.Mutex
	traits *RegistryTraits // o.Traits, or the plugin's answer once known
}

func (b *registryBuilder) Name() string { return b.o.Name }

// ReadOnly reports whether the plugin's builder says its registries are
// read-only (spi.ReadOnlyRegistry in the plugin), so that serve refuses
// the registry before listening. False while the plugin is down or when
// it does not say.
func (b *registryBuilder) ReadOnly() bool { return b.traitsNow().ReadOnly }

// Reach is the plugin builder's spi.RegistryReacher answer, or
// spi.ReachShared while the plugin is down or when it does not say.
func (b *registryBuilder) Reach() spi.RegistryReach { return b.traitsNow().Reach }

// traitsNow returns RegistryOptions.Traits, else asks the plugin once
// (bounded by traitsTimeout) and remembers its answer; while the plugin is
// down or does not answer, the defaults (writable, shared), asked again
// next time.
func (b *registryBuilder) traitsNow() RegistryTraits {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.traits == nil && b.o.Traits != nil {
		b.traits = b.o.Traits
	}
	if b.traits != nil {
		return *b.traits
	}
	if b.o.Source == nil {
		return RegistryTraits{}
	}
	c, _, err := b.o.Source.Current()
	if err != nil {
		return RegistryTraits{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), traitsTimeout)
	defer cancel()
	d, err := Describe(ctx, c, PointRegistry)
	if err != nil {
		return RegistryTraits{}
	}
	b.traits = &RegistryTraits{ReadOnly: d.ReadOnly, Reach: d.Reach}
	return *b.traits
}

// traitsTimeout bounds the Describe round trip of registryBuilder.traitsNow.
const traitsTimeout = 2 * time.Second

// Keys returns the keys the running plugin process declared
// (DescribedSource; while the plugin is down, the last process's), else
// RegistryOptions.Keys.
func (b *registryBuilder) Keys() []spi.KeyDoc { return declaredKeys(b.o.Source, b.o.Keys) }

// Build is pure: it checks the values u gives the keys the plugin
// declared (checkDeclared); the registry is built in the plugin on first
// use.
func (b *registryBuilder) Build(u spi.URL) (spi.Registry, error) {
	if err := checkDeclared(b.Keys(), u); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &registryAdapter{o: &b.o, u: u, registered: map[string]spi.URL{}, ctx: ctx, cancel: cancel}, nil
}

type registryAdapter struct {
	o *RegistryOptions
	u spi.URL

	mu         sync.Mutex // held across Build and re-registration RPCs
	gen, id    uint64
	registered map[string]spi.URL
	closed     bool
	watching   bool

	ctx    context.Context // ends at Close; parent of every subscription
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var errRegistryClosed = errors.New("registry closed")

// handle returns the registry's handle in the current plugin generation,
// rebuilding it and re-registering every URL after a restart.
func (r *registryAdapter) handle(ctx context.Context) (*Client, uint64, error) {
	c, gen, err := r.o.Source.Current()
	if err != nil {
		return nil, 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, 0, fmt.Errorf("registry %q: %w", r.o.Name, errRegistryClosed)
	}
	if r.gen == gen && r.id != 0 {
		return c, r.id, nil
	}
	rep, err := c.Registry.Build(ctx, &pb.BuildRequest{Url: r.u.String()})
	if err != nil {
		return nil, 0, rpcError("registry Build", err)
	}
	if rep.Error != nil {
		return nil, 0, fmt.Errorf("registry %q: %w", r.o.Name, fromPB(rep.Error))
	}
	r.gen, r.id = gen, rep.Handle
	for s := range r.registered {
		rr, err := c.Registry.Register(ctx, &pb.RegistryRequest{Handle: r.id, Url: s})
		if err == nil {
			err = fromPB(rr.Error)
		}
		if err != nil {
			r.id = 0 // try again on next use
			return nil, 0, fmt.Errorf("registry %q: re-register %s after plugin restart: %w", r.o.Name, s, err)
		}
	}
	if !r.watching {
		r.watching = true
		r.wg.Add(1)
		go r.watch()
	}
	return c, r.id, nil
}

// watch re-establishes the registry in each new plugin generation, so that
// registered URLs come back without waiting for a call.
func (r *registryAdapter) watch() {
	defer r.wg.Done()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.o.Source.Changed():
		}
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _, err := r.handle(ctx)
			cancel()
			if err == nil || errors.Is(err, errRegistryClosed) {
				break
			}
			if _, _, down := r.o.Source.Current(); down != nil {
				break // wait for the next change
			}
			select {
			case <-r.ctx.Done():
				return
			case <-time.After(r.o.Retry):
			}
		}
	}
}

func (r *registryAdapter) Register(ctx context.Context, u spi.URL) error {
	c, id, err := r.handle(ctx)
	if err != nil {
		return err
	}
	s := u.String()
	rep, err := c.Registry.Register(ctx, &pb.RegistryRequest{Handle: id, Url: s})
	if err != nil {
		return rpcError("registry Register", err)
	}
	if err := fromPB(rep.Error); err != nil {
		return err
	}
	r.mu.Lock()
	r.registered[s] = u
	r.mu.Unlock()
	return nil
}

func (r *registryAdapter) Unregister(ctx context.Context, u spi.URL) error {
	s := u.String()
	r.mu.Lock()
	delete(r.registered, s)
	r.mu.Unlock()
	c, id, err := r.handle(ctx)
	if err != nil {
		return err
	}
	rep, err := c.Registry.Unregister(ctx, &pb.RegistryRequest{Handle: id, Url: s})
	if err != nil {
		return rpcError("registry Unregister", err)
	}
	return fromPB(rep.Error)
}

func parseURLs(l []string) ([]spi.URL, error) {
	out := make([]spi.URL, 0, len(l))
	for _, s := range l {
		u, err := spi.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("plugin registry: bad provider URL: %w", err)
		}
		out = append(out, u)
	}
	return out, nil
}

func (r *registryAdapter) Lookup(ctx context.Context, consumer spi.URL) ([]spi.URL, error) {
	c, id, err := r.handle(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := c.Registry.Lookup(ctx, &pb.RegistryRequest{Handle: id, Url: consumer.String()})
	if err != nil {
		return nil, rpcError("registry Lookup", err)
	}
	if err := fromPB(rep.Error); err != nil {
		return nil, err
	}
	return parseURLs(rep.Urls)
}

func (r *registryAdapter) Services(ctx context.Context) ([]string, error) {
	c, id, err := r.handle(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := c.Registry.Services(ctx, &pb.Handle{Id: id})
	if err != nil {
		return nil, rpcError("registry Services", err)
	}
	if err := fromPB(rep.Error); err != nil {
		return nil, err
	}
	return rep.Services, nil
}

// Subscribe opens the stream and waits, within ctx, for the plugin's
// Subscribe to answer, so that a registry that refuses fails here with
// its error and status (as Lookup and Register do); the stream then stays
// open across plugin restarts until Stop.
func (r *registryAdapter) Subscribe(ctx context.Context, consumer spi.URL, notify spi.NotifyFunc) (spi.Subscription, error) {
	c, id, err := r.handle(ctx)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(r.ctx)
	req := &pb.RegistryRequest{Handle: id, Url: consumer.String()}
	stream, err := c.Registry.Subscribe(sctx, req)
	if err != nil {
		cancel()
		return nil, rpcError("registry Subscribe", err)
	}
	first, err := subscribed(ctx, cancel, stream)
	if err != nil {
		cancel()
		return nil, err
	}
	if first != nil {
		notify(first) // a plugin built before subscribedHeader: its first list
	}
	sub := &subscription{cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		cancel()
		return nil, fmt.Errorf("registry %q: %w", r.o.Name, errRegistryClosed)
	}
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		defer close(sub.done)
		defer cancel()
		r.follow(sctx, stream, req.Url, notify)
	}()
	return sub, nil
}

// follow delivers the lists of stream, and of the streams that replace it
// after plugin restarts, until ctx ends. Errors from the plugin's Subscribe
// are not lists: they are dropped, keeping the subscriber's last list.
func (r *registryAdapter) follow(ctx context.Context, stream pb.Registry_SubscribeClient, consumer string, notify spi.NotifyFunc) {
	for {
		for stream != nil {
			l, err := stream.Recv()
			if err != nil {
				break
			}
			if l.Error != nil {
				break
			}
			urls, err := parseURLs(l.Urls)
			if err != nil {
				continue
			}
			notify(urls)
		}
		stream = nil
		for stream == nil {
			if ctx.Err() != nil {
				return
			}
			changed := r.o.Source.Changed()
			c, id, err := r.handle(ctx)
			if err == nil {
				stream, err = c.Registry.Subscribe(ctx, &pb.RegistryRequest{Handle: id, Url: consumer})
				if err == nil {
					break
				}
			}
			if errors.Is(err, errRegistryClosed) {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-changed:
			case <-time.After(r.o.Retry):
			}
		}
	}
}

// subscribed waits for the plugin's Subscribe to answer on stream, or
// for ctx to end (which cancels the stream with cancel): nil, nil when it
// returned a subscription (the subscribedHeader header); its error when
// it failed; from a plugin built before that header, the first list it
// sent, which the caller delivers.
func subscribed(ctx context.Context, cancel context.CancelFunc, stream pb.Registry_SubscribeClient) ([]spi.URL, error) {
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	md, err := stream.Header()
	if err == nil && len(md.Get(subscribedHeader)) > 0 {
		return nil, nil
	}
	l, err := stream.Recv()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("plugin registry Subscribe: %w", ctx.Err())
		}
		return nil, rpcError("registry Subscribe", err)
	}
	if err := fromPB(l.Error); err != nil {
		return nil, err
	}
	urls, err := parseURLs(l.Urls)
	if err != nil {
		return nil, err
	}
	return urls, nil
}

type subscription struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *subscription) Stop() { s.cancel(); <-s.done }

// Close stops every subscription and closes the registry in the plugin,
// which unregisters what it registered. Idempotent.
func (r *registryAdapter) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.wg.Wait()
		return nil
	}
	r.closed = true
	id, gen := r.id, r.gen
	r.registered = map[string]spi.URL{}
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	if id == 0 {
		return nil
	}
	c, cur, err := r.o.Source.Current()
	if err != nil || cur != gen {
		return nil // the process that held it is gone, and its entries with it
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rep, err := c.Registry.Close(ctx, &pb.Handle{Id: id})
	if err != nil {
		return rpcError("registry Close", err)
	}
	return fromPB(rep.Error)
}

var (
	_ spi.RegistryBuilder  = (*registryBuilder)(nil)
	_ spi.ReadOnlyRegistry = (*registryBuilder)(nil)
	_ spi.RegistryReacher  = (*registryBuilder)(nil)
	_ spi.Registry         = (*registryAdapter)(nil)
)
