package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

func TestParseServiceKey(t *testing.T) {
	tests := []struct {
		in                         string
		iface, group, version, key string // key: the service key
		params                     map[string]string
	}{
		{in: "demo.Echo", iface: "demo.Echo", key: "demo.Echo"},
		{in: "g/demo.Echo:1.0", iface: "demo.Echo", group: "g", version: "1.0", key: "g/demo.Echo:1.0"},
		{in: "g/demo.Echo?version=1.0", iface: "demo.Echo", group: "g", version: "1.0", key: "g/demo.Echo:1.0"},
		{in: "g/demo.Echo:1.0?loadbalance=roundrobin", iface: "demo.Echo", group: "g", version: "1.0", key: "g/demo.Echo:1.0",
			params: map[string]string{"loadbalance": "roundrobin"}},
		{in: "demo.Echo:1.0?group=g", iface: "demo.Echo", group: "g", version: "1.0", key: "g/demo.Echo:1.0"},
		{in: "demo.Echo?note=a/b", iface: "demo.Echo", key: "demo.Echo", params: map[string]string{"note": "a/b"}},
		{in: "demo.Echo?accesslog=/tmp/x/acc.log", iface: "demo.Echo", key: "demo.Echo", params: map[string]string{"accesslog": "/tmp/x/acc.log"}},
		{in: "demo.Echo?note=http://x:1/y", iface: "demo.Echo", key: "demo.Echo", params: map[string]string{"note": "http://x:1/y"}},
		{in: "airnode://127.0.0.1:20880/demo.Echo?version=2", iface: "demo.Echo", version: "2", key: "demo.Echo:2"},
	}
	for _, tt := range tests {
		u, err := parseServiceKey(tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		g, _ := u.Param("group")
		v, _ := u.Param("version")
		if u.Path() != tt.iface || g != tt.group || v != tt.version || u.ServiceKey() != tt.key {
			t.Errorf("%s: interface %q group %q version %q key %q; want %q %q %q %q", tt.in, u.Path(), g, v, u.ServiceKey(), tt.iface, tt.group, tt.version, tt.key)
		}
		for k, want := range tt.params {
			if got, _ := u.Param(k); got != want {
				t.Errorf("%s: %s=%q, want %q", tt.in, k, got, want)
			}
		}
	}
	for in, want := range map[string]string{
		"":                          "want [group/]interface",
		"g/":                        "want [group/]interface",
		"a/b/demo.Echo":             "want [group/]interface",
		"g/demo.Echo?group=h":       `group "g" in the key but group=h`,
		"127.0.0.1:34575/demo.Echo": "for a direct call write airnode://127.0.0.1:34575/demo.Echo",
		"[::1]:20880/demo.Echo":     "for a direct call write airnode://[::1]:20880/demo.Echo",
	} {
		if _, err := parseServiceKey(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

// registry ls takes a service key with a version and parameters.
func TestRegistryLsServiceKeyWithQuery(t *testing.T) {
	dir := t.TempDir()
	reg := fileRegistry(t, dir)
	if err := reg.Register(context.Background(), spi.MustParse("airnode://127.0.0.1:20003/demo.Echo?side=provider&group=g&version=1.0")); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"g/demo.Echo:1.0?loadbalance=roundrobin", "demo.Echo:1.0?group=g", "g/demo.Echo:1.0?accesslog=/tmp/x/acc.log"} {
		code, out, errOut := airnode(t, nil, "registry", "ls", "--registry", "file://"+dir, key)
		if code != 0 || !strings.Contains(out, "127.0.0.1:20003") {
			t.Errorf("registry ls %s: exit %d %s\n%s", key, code, errOut, out)
		}
	}
}
