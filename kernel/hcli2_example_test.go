package kernel_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// A Go program serves what `airnode serve --metrics ADDR` serves:
// /metrics and /stats from the catalog's metrics filter (its Registry,
// which counts every call of the nodes built on that catalog), and
// /ready and /live from a Health it moves from starting to serving; the
// provider's Shutdown moves it to draining (kernel.WithHealth).
func Example_metrics() {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	cat := bundle.Catalogs()

	b, err := cat.Filter.Get(metrics.Name)
	if err != nil {
		panic(err)
	}
	reg, ok := metrics.RegistryOf(b) // false: a plugin replaced the bundled filter
	if !ok {
		panic("not the bundled metrics filter")
	}
	health := metrics.NewHealth() // starting: /ready answers 503
	srv, err := metrics.Listen("127.0.0.1:0", reg, metrics.WithHealth(health))
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr().String()

	// WithHealth: Shutdown marks health draining before it unregisters.
	provider := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithShutdownWait(0), kernel.WithHealth(health))
	defer provider.Close()
	exp, err := provider.Export(ctx, Greeter{}, spi.MustParse("airnode://127.0.0.1:0/example.Greeter"))
	if err != nil {
		panic(err)
	}
	health.SetState(metrics.NodeServing, "") // every service exported: /ready answers 200
	fmt.Println(httpGet(base + "/ready"))

	consumer := kernel.NewNode(cat, kernel.WithLogger(quiet))
	defer consumer.Close()
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode://"+exp.URL().Address()+"/example.Greeter"), spi.URL{})
	if err != nil {
		panic(err)
	}
	if _, err := ref.Invoke(ctx, "Hello", "airnode"); err != nil {
		panic(err)
	}
	sc := bufio.NewScanner(strings.NewReader(httpGet(base + "/metrics")))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "airnode_calls_total{") && strings.Contains(sc.Text(), `side="consumer"`) {
			fmt.Println(sc.Text())
		}
	}
	if err := provider.Shutdown(ctx); err != nil { // first marks health draining: /ready answers 503
		panic(err)
	}
	fmt.Println(httpGet(base + "/ready"))
	fmt.Println(httpGet(base + "/live"))
	// Output:
	// 200 serving
	// airnode_calls_total{method="Hello",service="example.Greeter",side="consumer"} 1
	// 503 draining: shutting down
	// 200 alive
}

// httpGet returns the status code and body of a GET of url.
func httpGet(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return fmt.Sprint(resp.StatusCode, " ", strings.TrimSpace(string(body)))
}
