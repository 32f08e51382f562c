package cli

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// TestU8_LsEmptyRootNamesDubbosRoot (tester74 #8): `registry ls` of a
// plain zookeeper://h:p (root /airnode, empty) said only "no services
// in ..." while /dubbo held a Dubbo fleet's interfaces; it now says where
// they are and what to add.
func TestU8_LsEmptyRootNamesDubbosRoot(t *testing.T) {
	t.Parallel()
	s := startZooKeeper(t)
	registerVersions(t, s, "dubbo", 1)
	reg, err := zookeeper.Builder{}.Build(spi.MustParse(s.URL("")))
	if err != nil {
		t.Fatal(err)
	}
	reg.(spi.LoggerUser).UseLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer reg.Close()
	var b strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := registryList(ctx, reg, "zookeeper://"+s.Addr(), nil, time.Now(), false, &b); err != nil {
		t.Fatal(err)
	}
	if want := "nothing under /airnode; /dubbo holds 1 interface: add ?root=/dubbo\n"; !strings.Contains(b.String(), want) {
		t.Errorf("registry ls printed %q, want it to say %q", b.String(), want)
	}
}
