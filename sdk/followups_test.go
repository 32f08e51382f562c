package sdk

import (
	"fmt"
	"testing"
)

// The unknown fields a plugin service logs are bounded, as the kernel's
// are: consumers choose the keys. The last one remembered says so; a
// field seen before is not logged again.
func TestFollowups1_UnknownFieldsLogBounded(t *testing.T) {
	var u unknownFields
	if log, _ := u.First("Put", "f0"); !log {
		t.Fatal("the first field is not logged")
	}
	if log, _ := u.First("Put", "f0"); log {
		t.Fatal("a field is logged twice")
	}
	if log, _ := u.First("Get", "f0"); !log {
		t.Fatal("the same field in another method is not logged")
	}
	for i := 1; i < maxUnknownFields-2; i++ {
		if log, last := u.First("Put", fmt.Sprint("f", i)); !log || last {
			t.Fatalf("field %d: log %v, last %v", i, log, last)
		}
	}
	if log, last := u.First("Put", "the last"); !log || !last {
		t.Fatalf("field %d: log %v, last %v; want the last", maxUnknownFields, log, last)
	}
	if log, _ := u.First("Put", "one too many"); log {
		t.Fatal("a field beyond the bound is logged")
	}
}
