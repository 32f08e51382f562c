package kernel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/spi"
)

// The provider's SERVICE_NOT_FOUND answers, each worded here once: a
// service not exported on the address called, and a method the service
// does not have. Each names what is there and, when one name is close
// (methodMeant, internal/suggest's rule), what was meant, as Dubbo's
// "Not found exported service: ... in [...]" lists the exported keys.

// maxListedServices is the most exported services a "not exported"
// answer names; the rest are counted ("and 3 more").
const maxListedServices = 10

// noMethodError is the SERVICE_NOT_FOUND of a call naming a method that
// service does not have (methods: the ones it has, sorted):
//
//	service "demo.Calc" has no method "add" (methods: Add, Div); did you mean "Add"?
//
// Dubbo's generic methods ($invoke, $invokeAsync) get dubboGenericHint.
func noMethodError(service, method string, methods []string) error {
	msg := fmt.Sprintf("service %q has no method %q (methods: %s)", service, method, strings.Join(methods, ", "))
	if m := methodMeant(method, methods); m != "" {
		msg += fmt.Sprintf("; did you mean %q?", m)
	} else if method == "$invoke" || method == "$invokeAsync" {
		msg += "; " + dubboGenericHint
	}
	return spi.Errorf(spi.StatusServiceNotFound, "%s", msg)
}

// dubboGenericHint ends the answer to a call of Dubbo's generic method
// $invoke (GenericService: method name, parameter types, arguments).
const dubboGenericHint = "airnode has no $invoke: call the method by name, its arguments as JSON values (generic invocation: README#calling-a-service-directly-or-through-a-registry)"

// notExportedError is the SERVICE_NOT_FOUND of a call naming a service
// key not exported on addr, with exportedHint's tail, where meant, when
// set, is the service and method the call's names most likely meant
// (server.swapMeant) and replaces the closest name:
//
//	service "demo.Shape" is not exported on 127.0.0.1:20880 (exported here: demo.Echo, demo.Shapes); did you mean "demo.Shapes"?
//	service "Echo.demo" is not exported on 127.0.0.1:20880 (exported here: demo.Echo); did you mean service "demo.Echo", method "Echo"?
func notExportedError(key, addr string, sameInterface, exported []string, meant methodOf) error {
	hint := exportedHint(key, sameInterface, exported)
	if meant.service != "" && len(sameInterface) == 0 {
		hint, _, _ = strings.Cut(hint, "; did you mean ")
		hint += fmt.Sprintf("; did you mean service %q, method %q?", meant.service, meant.method)
	}
	return spi.Errorf(spi.StatusServiceNotFound, "service %q is not exported on %s%s", key, addr, hint)
}

// methodOf is a method of an exported service: its key and the method's
// name.
type methodOf struct{ service, method string }

// swappedName returns the method of an exported service that a call
// naming service key and method most likely meant, when key is not
// exported and the names are an exported service's and one of its
// methods in another order, as has(k, m) (k exported, m its method)
// says; {} when none. The orders, for demo.Echo's Echo:
//
//	key demo.Echo's method    method demo.Echo   (SERVICE and METHOD swapped: "Echo", "demo.Echo")
//	key Echo.demo.Echo        any method         (METHOD.SERVICE in one name)
//	key Echo.demo             method Echo        (the interface's parts reversed)
//
// keys are the exported service keys, sorted: the first that fits wins.
func swappedName(key, method string, keys []string, has func(k, m string) bool) methodOf {
	iface := interfaceOf(key)
	for _, k := range keys {
		ki := interfaceOf(k)
		switch {
		case method == ki || method == k:
			if has(k, iface) {
				return methodOf{k, iface}
			}
		case strings.HasSuffix(iface, "."+ki):
			if m := strings.TrimSuffix(iface, "."+ki); has(k, m) {
				return methodOf{k, m}
			}
		case iface != ki && reversedName(iface) == ki:
			if has(k, method) {
				return methodOf{k, method}
			}
		}
	}
	return methodOf{}
}

// reversedName is the dotted name s with its parts in reverse order:
// "demo.Echo" for "Echo.demo".
func reversedName(s string) string {
	parts := strings.Split(s, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".")
}

// exportedHint is what follows "... is not exported on ADDR" (the
// SERVICE_NOT_FOUND of a call, the SERVICE_UNKNOWN of a health check).
// sameInterface are the keys exported there with key's interface in
// another group or version (the likeliest mistake: they are named alone);
// else exported, sorted, are the keys exported there, the first
// maxListedServices of them named, and the closest to key suggested:
// " (exported here: demo.Echo, demo.Shapes); did you mean "demo.Shapes"?",
// " (nothing is exported here)".
func exportedHint(key string, sameInterface, exported []string) string {
	switch {
	case len(sameInterface) > 0:
		return fmt.Sprintf(" (exported here in another group or version: %s)", strings.Join(sameInterface, ", "))
	case len(exported) == 0:
		return " (nothing is exported here)"
	}
	listed := strings.Join(exported[:min(len(exported), maxListedServices)], ", ")
	if more := len(exported) - maxListedServices; more > 0 {
		listed += fmt.Sprintf(" and %d more", more)
	}
	hint := " (exported here: " + listed + ")"
	if m := suggest.Closest(key, exported); m != "" {
		hint += fmt.Sprintf("; did you mean %q?", m)
	}
	return hint
}
