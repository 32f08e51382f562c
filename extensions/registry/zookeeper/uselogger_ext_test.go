package zookeeper_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// The kernel hands a registry its node's logger (spi.LoggerUser) right
// after Build: the ZooKeeper registry's lines then go there, in the
// node's format, not to slog.Default (tester14 #6's leftover); a
// Builder.Logger set by the user wins.
func TestUseLoggerTakesTheNodesLogger(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // an address where no ZooKeeper answers: refused once closed
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	u := spi.MustParse("zookeeper://" + addr + "?check=false&connect.timeout=200ms&session.timeout=2s")
	for _, own := range []bool{false, true} {
		var node, mine bytes.Buffer
		b := zookeeper.Builder{}
		if own {
			b.Logger = slog.New(slog.NewJSONHandler(&mine, nil))
		}
		reg, err := b.Build(u)
		if err != nil {
			t.Fatal(err)
		}
		reg.(spi.LoggerUser).UseLogger(slog.New(slog.NewJSONHandler(&node, nil)))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = reg.Register(ctx, spi.MustParse("airnode://127.0.0.1:20880/demo.Echo"))
		cancel()
		_ = reg.Close()
		want, other := &node, &mine
		if own {
			want, other = &mine, &node
		}
		if !strings.Contains(want.String(), `"msg":"no session yet`) || other.Len() != 0 {
			t.Errorf("own logger %v: the line went to the wrong logger:\nwant it in: %s\nother got: %s", own, want.String(), other.String())
		}
	}
}
