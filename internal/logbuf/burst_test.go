package logbuf

import "testing"

// Lines written out of order by two goroutines (in_burst=2 before the
// first) are one burst, taken in in_burst order; a burst whose counts do
// not add up is still refused.
func TestBurstTakesLinesInTheirOrder(t *testing.T) {
	text := "level=WARN msg=\"x failed\" suppressed=0 in_burst=2\n" +
		"level=WARN msg=\"x failed\"\n" +
		"level=WARN msg=\"x failed\" suppressed=1 in_burst=4\n"
	lines, last, err := Burst(text, "x failed")
	if err != nil || last != 4 || len(lines) != 3 || lines[0] != "level=WARN msg=\"x failed\"" {
		t.Fatalf("Burst = %q, %d, %v; want 3 lines, the first without counts, last in_burst 4", lines, last, err)
	}
	if _, _, err := Burst("a x\na x suppressed=5 in_burst=2\n", "x"); err == nil {
		t.Fatal("counts that do not add up: no error")
	}
	if _, _, err := Burst("a x suppressed=0 in_burst=2\n", "x"); err == nil {
		t.Fatal("no first line: no error")
	}
}
