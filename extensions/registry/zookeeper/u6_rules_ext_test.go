package zookeeper_test

import (
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

const msgRuleWritten = "a Dubbo Admin rule was "

// TestU6_RuleWrittenWhileConsumersRunIsSaid (tester74 #6): a Dubbo Admin
// override written while a consumer runs was not applied and not said
// either (only the first subscription warned of the rules there then).
// The consumer now watches the rules nodes and says each new or changed
// rule once, at Warn, and registry watch's hook gets it.
func TestU6_RuleWrittenWhileConsumersRunIsSaid(t *testing.T) {
	const root = "/u6rules"
	raw := rawClient(t)
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{root, root + "/config", root + "/config/dubbo"} {
		_, _ = raw.Create(p, nil, 0, acl)
	}
	// a rule there before the subscription: said by the first
	// subscription's warning, not again
	if _, err := raw.Create(root+"/config/dubbo/demo.Echo:1.0.tag-router", []byte("old"), 0, acl); err != nil {
		t.Fatal(err)
	}
	clog := new(lineLog)
	c := buildLogged(t, server.URL("root="+root), clog)
	var mu sync.Mutex
	var hooked []zookeeper.RuleChange
	c.(*zookeeper.Registry).OnRuleChange(func(rc zookeeper.RuleChange) {
		mu.Lock()
		hooked = append(hooked, rc)
		mu.Unlock()
	})
	sub, err := c.Subscribe(ctx(t), consumer, func([]spi.URL) {})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	time.Sleep(300 * time.Millisecond) // the rules watch is armed

	// Dubbo 2.6 / Dubbo Admin override under the interface: the
	// configurators node does not exist yet
	override := "override://127.0.0.1:29001/demo.Echo?category=configurators&disabled=true&dynamic=false&enabled=true"
	for _, p := range []string{root + "/demo.Echo/configurators"} {
		_, _ = raw.Create(p, nil, 0, acl)
	}
	if _, err := raw.Create(root+"/demo.Echo/configurators/"+url.QueryEscape(override), nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	l := clog.waitFor(t, 5*time.Second, msgRuleWritten+"written")
	if l.level.String() != "WARN" || l.attrs["rule"] != override || !strings.Contains(l.msg, "airnode does not apply it") || !strings.Contains(l.msg, "weight=0") {
		t.Errorf("rule line: %v %q %v, want WARN naming the override and what to do", l.level, l.msg, l.attrs)
	}
	// Dubbo 2.7/3 config center: a new rule, then its content changed
	cc := root + "/config/dubbo/demo.Echo.configurators"
	if _, err := raw.Create(cc, []byte("configs: [{addresses: [127.0.0.1:29001], parameters: {disabled: true}}]"), 0, acl); err != nil {
		t.Fatal(err)
	}
	waitLines(t, clog, msgRuleWritten+"written", 2)
	if _, err := raw.Set(cc, []byte("configs: [{addresses: [127.0.0.1:29001], parameters: {weight: 0}}]"), -1); err != nil {
		t.Fatal(err)
	}
	waitLines(t, clog, msgRuleWritten+"changed", 1)
	// another interface's rule says nothing
	if _, err := raw.Create(root+"/config/dubbo/other.Svc.configurators", []byte("x"), 0, acl); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(clog.find(msgRuleWritten)); n != 3 {
		t.Errorf("%d rule lines, want 3 (override, config-center rule, its change)", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hooked) != 3 || hooked[0].Rule != override || hooked[1].Path != cc || !hooked[2].Changed {
		t.Errorf("OnRuleChange got %+v, want the 3 changes", hooked)
	}
}

func waitLines(t *testing.T, l *lineLog, prefix string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(l.find(prefix)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d %q lines within 5s, want %d", len(l.find(prefix)), prefix, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
