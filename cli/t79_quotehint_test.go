package cli

import (
	"strings"
	"testing"
)

// tester79 #8: a bare word where a string argument goes gets the quoting
// hint an oversized integer already had; JSON that is merely broken does
// not.
func TestT79_BareWordArgumentGetsQuotingHint(t *testing.T) {
	_, err := decodeArg("A-1")
	if err == nil || !strings.Contains(err.Error(), `is not JSON`) || !strings.HasSuffix(err.Error(), `; a string is quoted JSON: '"A-1"'`) {
		t.Errorf("A-1: %v", err)
	}
	for _, s := range []string{"{bad", `["a",`, `"open`} {
		if _, err := decodeArg(s); err == nil || strings.Contains(err.Error(), "quoted JSON") {
			t.Errorf("%s: %v (want no quoting hint)", s, err)
		}
	}
}
