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
// none but Dubbo's root (DubboRoot under the same chroot) holds
// interfaces: "nothing under /airnode; /dubbo holds 3 interfaces: add
// ?root=/dubbo". It is "" when the root is Dubbo's, when /dubbo holds no
// interface, and without a session (it waits for none: call it after
// Services answered). registry ls says it after "no services in".
func (r *Registry) EmptyRootHint(ctx context.Context) string {
	r.mu.Lock()
	conn, up := r.conn, r.up
	r.mu.Unlock()
	dubbo := r.p.chroot + DubboRoot
	if conn == nil || !up || r.p.root == dubbo || ctx.Err() != nil {
		return ""
	}
	children, _, err := conn.Children(dubbo)
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
	return fmt.Sprintf("nothing under %s; %s holds %d interface%s: add ?root=%s", root, DubboRoot, n, s, DubboRoot)
}
