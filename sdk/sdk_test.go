package sdk

import (
	"context"
	"strings"
	"testing"
	"time"
)

type badTwoValues struct{}

func (badTwoValues) M() (int, int) { return 0, 0 }

type variadic struct{}

func (variadic) M(...int) {}

type ok struct{}

func (ok) Hello(context.Context, string) (string, error) { return "", nil }
func (ok) Quiet()                                        {}

func TestServiceMethodsAreChecked(t *testing.T) {
	for _, c := range []struct {
		s    Service
		want string
	}{
		{Service{Name: "x", Impl: badTwoValues{}}, "second result must be error"},
		{Service{Name: "x", Impl: variadic{}}, "variadic"},
		{Service{Name: "x", Impl: struct{}{}}, "no exported methods"},
		{Service{Name: "", Impl: ok{}}, "required"},
	} {
		if _, err := newServiceHandler([]Service{c.s}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%T: err %v, want %q", c.s.Impl, err, c.want)
		}
	}
	h, err := newServiceHandler([]Service{{Name: "b.Svc", Impl: ok{}}, {Name: "a.Svc", Impl: &ok{}}})
	if err != nil {
		t.Fatal(err)
	}
	d := h.Describe()
	if len(d) != 2 || d[0].Name != "a.Svc" || strings.Join(d[1].Methods, ",") != "Hello,Quiet" {
		t.Fatalf("describe %+v", d)
	}
	if _, err := (Plugins{}).impl(); err == nil {
		t.Fatal("empty Plugins accepted")
	}
}

func TestWatchParentFiresWhenTheParentChanges(t *testing.T) {
	fired := make(chan struct{})
	go watchParent(-12345+1e6, 5*time.Millisecond, func() { close(fired) }) // not our parent
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("watchParent did not notice")
	}
}
