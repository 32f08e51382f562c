package zookeeper_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// Dubbo's registry check: with no ZooKeeper answering, a provider's
// Register fails after connect.timeout by default, naming the server, the
// last dial's error and check=false, and queues nothing; with check=false
// it queues the entry and returns nil (failback); a consumer's entry is
// never checked (tester nu54 finding 1: serve said "serving" registered
// nowhere).
func TestCheckFailsAProvidersRegisterWithoutASession(t *testing.T) {
	const nobody = "127.0.0.1:26598" // in this test's port range; nothing listens
	register := func(q string, u spi.URL) (time.Duration, error) {
		t.Helper()
		reg, err := (zookeeper.Builder{}).Build(spi.MustParse("zookeeper://" + nobody + "?connect.timeout=300ms" + q))
		if err != nil {
			t.Fatal(err)
		}
		defer reg.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		err = reg.Register(ctx, u)
		return time.Since(start), err
	}
	provider := spi.MustParse("airnode://127.0.0.1:26597/demo.Echo?version=1.0")
	took, err := register("", provider)
	if err == nil {
		t.Fatal("Register with ZooKeeper unreachable and check left at its default: nil, want an error")
	}
	for _, want := range []string{"no session with " + nobody, "cannot register demo.Echo:1.0", "connection refused", "add check=false to the registry URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if took < 250*time.Millisecond || took > 8*time.Second {
		t.Errorf("Register failed after %v; want about connect.timeout (300ms)", took)
	}
	if _, err := register("&check=false", provider); err != nil {
		t.Errorf("Register with check=false: %v, want nil (queued until a session comes)", err)
	}
	consumer := spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer")
	if _, err := register("", consumer); err != nil {
		t.Errorf("a consumer's Register: %v, want nil (not checked)", err)
	}
	if _, err := (zookeeper.Builder{}).Build(spi.MustParse("zookeeper://" + nobody + "?check=maybe")); err == nil || !strings.Contains(err.Error(), "check") {
		t.Errorf("Build with check=maybe: %v, want an error naming the key", err)
	}
}
