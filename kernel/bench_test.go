package kernel

import (
	"context"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// The full consumer path (reference -> filters -> failover -> directory ->
// random -> remote invoker -> exchange -> smux) against a provider node in
// the same process, with a raw-TCP ping-pong of the same size as the
// baseline, measured in the same run:
//
//	go test -run XXX -bench 'Echo|RawTCP' -benchtime 2s ./kernel
//
// Each reports ns/op (the inverse of calls/s across all callers) and the
// p50/p99 latency of one call in microseconds.

const benchPayload = 100

func benchLatencies(b *testing.B, callers int, call func() error) {
	b.Helper()
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	per := (b.N + callers - 1) / callers
	var wg sync.WaitGroup
	b.ResetTimer()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, per)
			for range per {
				start := time.Now()
				if err := call(); err != nil {
					b.Error(err)
					return
				}
				local = append(local, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

func BenchmarkEcho(b *testing.B) {
	for _, c := range []int{1, 100} {
		b.Run("c="+strconv.Itoa(c), func(b *testing.B) {
			p := NewNode(testCatalogs(b), WithLogger(quiet), WithShutdownWait(0))
			defer p.Close()
			ctx := context.Background()
			e, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
			if err != nil {
				b.Fatal(err)
			}
			n := NewNode(testCatalogs(b), WithLogger(quiet))
			defer n.Close()
			r, err := n.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?timeout=10s"), spi.URL{})
			if err != nil {
				b.Fatal(err)
			}
			msg := strings.Repeat("x", benchPayload)
			benchLatencies(b, c, func() error {
				_, err := r.Invoke(ctx, "Echo", msg)
				return err
			})
		})
	}
}

func BenchmarkRawTCP(b *testing.B) {
	for _, c := range []int{1, 100} {
		b.Run("c="+strconv.Itoa(c), func(b *testing.B) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			var srv sync.WaitGroup
			defer srv.Wait()
			defer l.Close()
			srv.Add(1)
			go func() {
				defer srv.Done()
				for {
					conn, err := l.Accept()
					if err != nil {
						return
					}
					srv.Add(1)
					go func() {
						defer srv.Done()
						defer conn.Close()
						_, _ = io.Copy(conn, conn)
					}()
				}
			}()
			pool := make(chan net.Conn, c)
			for range c {
				conn, err := net.Dial("tcp", l.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				pool <- conn
			}
			msg := make([]byte, benchPayload)
			benchLatencies(b, c, func() error {
				conn := <-pool
				defer func() { pool <- conn }()
				buf := make([]byte, benchPayload)
				if _, err := conn.Write(msg); err != nil {
					return err
				}
				_, err := io.ReadFull(conn, buf)
				return err
			})
		})
	}
}
