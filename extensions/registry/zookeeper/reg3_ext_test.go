package zookeeper_test

import (
	"testing"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// H-reg3 item 1: Consumers lists the consumer entries of one service key
// from a real ZooKeeper: those of another group or version of the same
// interface node are not its, and a service nobody consumes has none.
func TestReg3_ConsumersOfServiceKey(t *testing.T) {
	reg := build(t, server.URL("root=/reg3&session.timeout=5s"))
	for _, u := range []string{
		"consumer://127.0.0.1/demo.Echo?side=consumer&pid=1",
		"consumer://127.0.0.1/demo.Echo?side=consumer&pid=2",
		"consumer://127.0.0.1/demo.Echo?side=consumer&group=g&version=1.0&pid=3",
		"airnode://127.0.0.1:38520/demo.Echo?side=provider",
	} {
		if err := reg.Register(ctx(t), spi.MustParse(u)); err != nil {
			t.Fatal(err)
		}
	}
	zr := reg.(*zookeeper.Registry)
	for _, c := range []struct {
		key, ref string
		want     int
	}{
		{"demo.Echo", "airnode:///demo.Echo", 2},
		{"g/demo.Echo:1.0", "airnode:///demo.Echo?group=g&version=1.0", 1},
		{"demo.Other", "airnode:///demo.Other", 0},
	} {
		list, err := zr.Consumers(ctx(t), spi.MustParse(c.ref))
		if err != nil || len(list) != c.want {
			t.Errorf("Consumers(%s) = %v, %v; want %d entries", c.key, list, err, c.want)
		}
		for _, u := range list {
			if u.ServiceKey() != c.key || u.Scheme() != "consumer" {
				t.Errorf("Consumers(%s) lists %s", c.key, u)
			}
		}
	}
}
