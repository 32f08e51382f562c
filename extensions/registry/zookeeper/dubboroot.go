package zookeeper

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// DubboRoot is Dubbo's root node (its registry group "dubbo"), where a
// Dubbo or dubbo-go fleet registers.
const DubboRoot = "/dubbo"

// EmptyRootHint says where services are when this registry's root lists
// none but the other usual root under the same chroot holds interfaces:
// Dubbo's (DubboRoot) for any other root, "nothing under /airnode; /dubbo
// holds 3 interfaces: add ?root=/dubbo", and airnode's default
// (DefaultRoot) for Dubbo's, "nothing under /dubbo; /airnode holds 1
// interface: drop ?root= (the default root is /airnode)" (tester90 #3b).
// It is "" when that root holds no interface, and without a session (it
// waits for none: call it after Services answered). registry ls says it
// after "no services in".
func (r *Registry) EmptyRootHint(ctx context.Context) string {
	r.mu.Lock()
	conn, up := r.conn, r.up
	r.mu.Unlock()
	other, fix := r.p.chroot+DubboRoot, "add ?root="+DubboRoot
	if r.p.root == other {
		other, fix = r.p.chroot+"/"+DefaultRoot, "drop ?root= (the default root is /"+DefaultRoot+")"
	}
	if conn == nil || !up || r.p.root == other || ctx.Err() != nil {
		return ""
	}
	children, _, err := conn.Children(other)
	if err != nil {
		return ""
	}
	n := 0
	for _, c := range children {
		if iface, err := url.QueryUnescape(c); err == nil && isInterfaceName(iface) && iface != "config" {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	root := strings.TrimPrefix(r.p.root, r.p.chroot)
	if root == "" {
		root = "/"
	}
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("nothing under %s; %s holds %d interface%s: %s", root, strings.TrimPrefix(other, r.p.chroot), n, s, fix)
}
