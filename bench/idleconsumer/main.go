// Command idleconsumer measures what a consumer's idle channels cost: the
// CPU time (getrusage, user + system) its process uses over an idle
// period while it holds many connections and makes no call.
//
//	go build -o /tmp/idleconsumer ./bench/idleconsumer
//	/tmp/idleconsumer -serve -hosts 127.0.0.1,127.0.0.2 -ports 43100-43139 &
//	/tmp/idleconsumer -hosts 127.0.0.1,127.0.0.2 -ports 43100-43139 -connections 64 -idle 30s
//
// With -serve it exports demo.Echo on every host:port (one provider node)
// until SIGINT/SIGTERM. Without, it refers to all of them in one direct
// reference with connections=N per provider (kernel.MaxConnections at
// most), waits until every connection is up, makes one call, lets a second
// pass, then prints one JSON line: channels, idle seconds, cpu_ms and
// cpu_us_per_channel_s (CPU microseconds per channel per idle second).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

func main() {
	serve := flag.Bool("serve", false, "export demo.Echo on every address instead of referring to them")
	hosts := flag.String("hosts", "127.0.0.1", "comma-separated loopback hosts")
	ports := flag.String("ports", "43100-43109", "port range FROM-TO (inclusive)")
	transport := flag.String("transport", "tcp", "transport extension")
	connections := flag.Int("connections", 64, "connections per provider address")
	idle := flag.Duration("idle", 30*time.Second, "idle period measured")
	flag.Parse()
	addrs, err := addresses(*hosts, *ports)
	if err == nil {
		if *serve {
			err = provide(addrs, *transport)
		} else {
			err = consume(addrs, *transport, *connections, *idle)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "idleconsumer:", err)
		os.Exit(1)
	}
}

// addresses returns every host:port of hosts (comma-separated) and ports
// (FROM-TO).
func addresses(hosts, ports string) ([]string, error) {
	from, to, ok := strings.Cut(ports, "-")
	lo, err1 := strconv.Atoi(from)
	hi, err2 := strconv.Atoi(to)
	if !ok || err1 != nil || err2 != nil || lo < 1 || hi < lo || hi > 65535 {
		return nil, fmt.Errorf("-ports %q: want FROM-TO, 1 <= FROM <= TO <= 65535", ports)
	}
	var out []string
	for _, h := range strings.Split(hosts, ",") {
		for p := lo; p <= hi; p++ {
			out = append(out, fmt.Sprintf("%s:%d", h, p))
		}
	}
	return out, nil
}

func newNode() *kernel.Node {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(logger))
}

func provide(addrs []string, transport string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	node := newNode()
	defer node.Close()
	for _, a := range addrs {
		u, err := spi.Parse("airnode://" + a + "/" + demo.Interface + "?transport=" + transport)
		if err != nil {
			return err
		}
		if _, err := node.Export(ctx, demo.New("idleprovider", kernel.DefaultWeight), u); err != nil {
			return err
		}
	}
	fmt.Printf("serving %d addresses pid %d\n", len(addrs), os.Getpid())
	<-ctx.Done()
	return nil
}

func consume(addrs []string, transport string, connections int, idle time.Duration) error {
	ctx := context.Background()
	node := newNode()
	defer node.Close()
	u, err := spi.Parse(fmt.Sprintf("airnode://%s/%s?transport=%s&connections=%d", strings.Join(addrs, ","), demo.Interface, transport, connections))
	if err != nil {
		return err
	}
	ref, err := node.Refer(ctx, u, spi.URL{})
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		up, asked := ref.Connections()
		if up == asked {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d connections up after 2 min", up, asked)
		}
	}
	var out any
	if err := ref.Call(ctx, "Echo", []any{"x"}, &out); err != nil {
		return fmt.Errorf("first call: %w", err)
	}
	time.Sleep(time.Second)
	before := cpu()
	time.Sleep(idle)
	used := cpu() - before
	up, _ := ref.Connections()
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"channels":             up,
		"idle_s":               idle.Seconds(),
		"cpu_ms":               float64(used) / float64(time.Millisecond),
		"cpu_us_per_channel_s": float64(used) / float64(time.Microsecond) / float64(up) / idle.Seconds(),
	})
}

// cpu returns the process's user + system CPU time so far.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
