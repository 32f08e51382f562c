package cyclecheck

import (
	"reflect"
	"testing"
	"time"
)

type (
	flatT struct{ A, B int }
	nodeT struct {
		Items []flatT
		Next  *nodeT
	}
	mutA  struct{ B *mutB }
	mutB  struct{ A []mutA }
	holdA struct{ As []mutA }
	anyT  struct{ X any }
	skipT struct {
		Name string
		Up   *skipT `json:"-"`
	}
)

// Only a type that can reach itself or holds an interface is walked, and
// from it only the fields that may cycle: the common argument types pay
// no walk.
func TestShapeDecidesWhatIsWalked(t *testing.T) {
	for _, c := range []struct {
		v    any
		walk bool
	}{
		{"", false}, {[]byte(nil), false}, {flatT{}, false}, {[]flatT{}, false}, {&flatT{}, false},
		{map[string]string{}, false}, {map[string][]int{}, false}, {time.Time{}, false},
		{struct{ T time.Time }{}, false}, {skipT{}, false},
		{nodeT{}, true}, {&nodeT{}, true}, {[]*nodeT{}, true}, {mutA{}, true}, {holdA{}, true},
		{anyT{}, true}, {[]any{}, true}, {map[string]any{}, true},
	} {
		if got := shapeOf(reflect.TypeOf(c.v), "json").walk; got != c.walk {
			t.Errorf("%T: walk = %v, want %v", c.v, got, c.walk)
		}
	}
	s := shapeOf(reflect.TypeOf(nodeT{}), "json")
	if len(s.fields) != 1 || s.fields[0].index != 1 {
		t.Errorf("nodeT walks fields %+v, want only Next (index 1)", s.fields)
	}
	if !shapeOf(reflect.TypeOf(skipT{}), "").walk {
		t.Error(`skipT with no fallback tag: Up (json:"-") is encoded by msgpack.Marshal, so it is walked`)
	}
}
