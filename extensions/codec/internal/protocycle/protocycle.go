package protocycle

import (
	"errors"
	"strconv"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MaxDepth bounds the nesting of messages: proto.Unmarshal's default
// recursion limit, so that a message that passes can be read by any peer.
const MaxDepth = protowire.DefaultRecursionLimit

// checkAfter is the depth after which the walk records the messages on
// its path: encoding/json's startDetectingCyclesAfter, so that a shallow
// message pays no map.
const checkAfter = 1000

var errTooDeep = errors.New("messages nested deeper than " + strconv.Itoa(MaxDepth) +
	" (proto.Unmarshal's recursion limit: no peer would read it)")

// CycleError is Check's error for a message that reaches itself.
type CycleError struct {
	// Name is the full name of the message met again: "google.protobuf.Struct".
	Name protoreflect.FullName
}

// Error returns "encountered a cycle via <name>" (encoding/json's words).
func (e *CycleError) Error() string { return "encountered a cycle via " + string(e.Name) }

// Check returns a *CycleError for a message m that reaches itself, an
// error for messages nested deeper than MaxDepth, else nil. A message
// whose type cannot nest itself costs one map lookup.
func Check(m proto.Message) error {
	r := m.ProtoReflect()
	if !r.IsValid() || !recursive(r.Descriptor()) {
		return nil
	}
	var w walker
	return w.message(r, 1)
}

type walker struct {
	path map[proto.Message]struct{} // the messages on the path, beyond checkAfter
}

func (w *walker) message(m protoreflect.Message, depth int) error {
	if depth > MaxDepth {
		return errTooDeep
	}
	var key proto.Message
	if depth > checkAfter {
		key = m.Interface()
		if w.path == nil {
			w.path = map[proto.Message]struct{}{}
		}
		if _, ok := w.path[key]; ok {
			return &CycleError{Name: m.Descriptor().FullName()}
		}
		w.path[key] = struct{}{}
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if md := fd.MapValue().Message(); md != nil && recursive(md) {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					err = w.message(mv.Message(), depth+1)
					return err == nil
				})
			}
		case fd.IsList():
			if md := fd.Message(); md != nil && recursive(md) {
				l := v.List()
				for i := 0; i < l.Len() && err == nil; i++ {
					err = w.message(l.Get(i).Message(), depth+1)
				}
			}
		default:
			if md := fd.Message(); md != nil && recursive(md) {
				err = w.message(v.Message(), depth+1)
			}
		}
		return err == nil
	})
	if key != nil {
		delete(w.path, key)
	}
	return err
}

// recursives caches recursive: protoreflect.MessageDescriptor → bool.
var recursives sync.Map

// recursive reports whether a message of md can hold, at any depth, a
// message of a type that holds itself (through message, list or map
// fields; extensions are not seen).
func recursive(md protoreflect.MessageDescriptor) bool {
	if r, ok := recursives.Load(md); ok {
		return r.(bool)
	}
	r := reachesCycle(md, map[protoreflect.FullName]int{})
	recursives.Store(md, r)
	return r
}

// reachesCycle is recursive's search: state is 1 for a descriptor on the
// search's path, 2 for one done without finding a cycle.
func reachesCycle(md protoreflect.MessageDescriptor, state map[protoreflect.FullName]int) bool {
	switch state[md.FullName()] {
	case 1:
		return true
	case 2:
		return false
	}
	state[md.FullName()] = 1
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		sub := fd.Message()
		if fd.IsMap() {
			sub = fd.MapValue().Message()
		}
		if sub != nil && reachesCycle(sub, state) {
			return true
		}
	}
	state[md.FullName()] = 2
	return false
}
