// Command profprovider is a demo.Echo provider that writes a CPU profile:
// `airnode serve` without registry or config, for profiling the provider
// side of `airnode bench` in its own process.
//
//	go build -o /tmp/profprovider ./bench/profprovider
//	/tmp/profprovider -listen 127.0.0.1:20990 -cpuprofile /tmp/provider.prof &
//	airnode bench airnode://127.0.0.1:20990/demo.Echo -n 200000 -c 100
//	kill -INT %1; go tool pprof -top /tmp/profprovider /tmp/provider.prof
//
// It profiles from start to SIGINT/SIGTERM, then shuts the node down;
// -memprofile FILE writes the allocations made meanwhile
// (go tool pprof -sample_index=alloc_space -top FILE); -trace FILE an
// execution trace (go tool trace FILE).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"syscall"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:20990", "listen address")
	transport := flag.String("transport", "smux", "transport extension")
	profile := flag.String("cpuprofile", "", "CPU profile file (none when empty)")
	memprofile := flag.String("memprofile", "", "allocation profile file, written at exit (none when empty; go tool pprof -sample_index=alloc_space)")
	params := flag.String("params", "", "more provider URL parameters, e.g. dispatcher=direct")
	traceFile := flag.String("trace", "", "execution trace file, from start to SIGINT (none when empty; go tool trace FILE)")
	flag.Parse()
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "profprovider:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer trace.Stop()
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 4096 // every ~4 KiB allocated: the per-call allocations show
	}
	if err := run(*listen, *transport, *params, *profile, *memprofile); err != nil {
		fmt.Fprintln(os.Stderr, "profprovider:", err)
		os.Exit(1)
	}
}

func run(listen, transport, params, profile, memprofile string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	node := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(logger))
	defer node.Close()
	u, err := spi.Parse("airnode://" + listen + "/" + demo.Interface + "?transport=" + transport + "&" + params)
	if err != nil {
		return err
	}
	exp, err := node.Export(ctx, demo.New("profprovider", kernel.DefaultWeight), u)
	if err != nil {
		return err
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("serving %s pid %d\n", exp.URL().Address(), os.Getpid())
	<-ctx.Done()
	if memprofile != "" {
		f, err := os.Create(memprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		return pprof.Lookup("allocs").WriteTo(f, 0)
	}
	return nil
}
