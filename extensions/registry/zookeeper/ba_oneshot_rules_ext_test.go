package zookeeper_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// tester82 #9: Dubbo Admin rules in both places Dubbo keeps them made
// every one-shot `airnode call` print two WARN lines. A registry told it
// serves a one-shot process (UseOneShot, the kernel's WithOneShot) says
// them in one line naming each place; a long-running node's keeps one
// line per place.
func TestBA_OneShotSaysDubboAdminRulesInOneLine(t *testing.T) {
	const root = "/baoneshot"
	raw := rawClient(t)
	acl := zk.WorldACL(zk.PermAll)
	override := url.QueryEscape("override://127.0.0.1:29001/demo.Echo?category=configurators&disabled=true")
	for _, p := range []string{root, root + "/demo.Echo", root + "/demo.Echo/configurators", root + "/demo.Echo/configurators/" + override,
		root + "/config", root + "/config/dubbo", root + "/config/dubbo/demo.Echo.configurators"} {
		if _, err := raw.Create(p, []byte("enabled: true\n"), 0, acl); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	consumer := spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer&application=shop")
	for _, oneShot := range []bool{false, true} {
		log := new(lineLog)
		r := buildLogged(t, server.URL("root="+root), log)
		if oneShot {
			r.(spi.OneShotRegistry).UseOneShot()
		}
		s, err := r.Subscribe(ctx(t), consumer, func([]spi.URL) {})
		if err != nil {
			t.Fatal(err)
		}
		s.Stop()
		_ = r.Close()
		var lines []logLine
		for _, l := range log.find("") {
			if strings.Contains(l.msg, "not applied by airnode") {
				lines = append(lines, l)
			}
		}
		if !oneShot {
			if len(lines) != 2 {
				t.Errorf("long-running: %d lines, want 2 (one per place): %v", len(lines), lines)
			}
			continue
		}
		want := root + "/demo.Echo/configurators," + root + "/config/dubbo/demo.Echo.configurators"
		if len(lines) != 1 || lines[0].level.String() != "WARN" || lines[0].attrs["rules"] != want || lines[0].attrs["interface"] != "demo.Echo" {
			t.Errorf("one-shot: %v, want one WARN line with rules=%s", lines, want)
		}
	}
	var _ spi.OneShotRegistry = (*zookeeper.Registry)(nil)
}
