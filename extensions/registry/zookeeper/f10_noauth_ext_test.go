package zookeeper_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/spi"
)

// TestSubscribeRefusedByACLFailsAtOnce (f10, tester51 finding 2): a
// consumer without, or with wrong, credentials for a tree under a digest
// ACL waited out its whole deadline ("Subscribe of demo.Echo did not
// return within ctx") while its watch retried "not authenticated" at
// Debug. Subscribe now fails at once with ZooKeeper's error and what to
// do, for an existing providers node and for one it would have to create
// under a node it may not write; with the right credentials it lists.
func TestSubscribeRefusedByACLFailsAtOnce(t *testing.T) {
	p := build(t, "zookeeper://ops:s3cret@"+server.Addr()+"?root=f10acl")
	if err := p.Register(ctx(t), provider(20880, "")); err != nil {
		t.Fatal(err)
	}
	other := spi.MustParse("airnode://127.0.0.1/f10.Other")
	for _, c := range []struct {
		name, url, want string
		consumer        spi.URL
	}{
		{"no credentials", "zookeeper://" + server.Addr() + "?root=f10acl", "gives no credentials", consumer},
		{"wrong password", "zookeeper://ops:wrong@" + server.Addr() + "?root=f10acl", `does not admit user "ops"`, consumer},
		{"node to create", "zookeeper://" + server.Addr() + "?root=f10acl", "gives no credentials", other},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := build(t, c.url)
			cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			sub, err := r.Subscribe(cx, c.consumer, func([]spi.URL) {})
			took := time.Since(start)
			if err == nil {
				sub.Stop()
				t.Fatalf("Subscribe under an ACL that refuses the client: no error after %v", took)
			}
			t.Logf("%v: %v", took.Round(time.Millisecond), err)
			if !errors.Is(err, zk.ErrNoAuth) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "(USER:PASSWORD@host:2181 after zookeeper://;") {
				t.Errorf("error %q: want zk.ErrNoAuth, %q and the URL form to give", err, c.want)
			}
			if took > 5*time.Second {
				t.Errorf("Subscribe took %v to fail; want it at once (well before the 10s deadline)", took)
			}
			if c.consumer.Interface() != consumer.Interface() {
				return // Lookup reads, creates nothing: a missing node is no provider
			}
			if _, err := r.Lookup(ctx(t), c.consumer); !errors.Is(err, zk.ErrNoAuth) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Lookup: %v; want zk.ErrNoAuth and %q", err, c.want)
			}
		})
	}
	rec := subscribe(t, build(t, "zookeeper://ops:s3cret@"+server.Addr()+"?root=f10acl"), consumer)
	rec.wait(t, 5*time.Second, 20880)
}
