package file_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// An entry written by hand without a lock (`echo URL > providers/mine`,
// a fresh user's first try) was taken for a dead process's entry of the
// older format and deleted by the next reader (registry ls, a consumer's
// poll), silently. A file whose name is not the one a registry gives the
// URL it holds is no registry's: it is skipped, logged once, shown as
// invalid, and left alone through many polls and lookups. A dead entry of
// the older format (named after its URL, unlocked) is still removed.
func TestHandWrittenUnlockedEntryIsLeftAlone(t *testing.T) {
	good := spi.MustParse("airnode://127.0.0.1:37011/demo.Echo?side=provider")
	r, regDir, logBuf := loggedRegistry(t, "?poll=20ms", good)
	prov := filepath.Join(regDir, "demo.Echo", "providers")
	hand := filepath.Join(prov, "manual")
	if err := os.WriteFile(hand, []byte("airnode://127.0.0.1:37012/demo.Echo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dead := spi.MustParse("airnode://127.0.0.1:37013/demo.Echo?side=provider")
	deadPath := filepath.Join(prov, url.QueryEscape(dead.String()))
	if err := os.WriteFile(deadPath, []byte(dead.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	consumer := spi.MustParse("airnode://127.0.0.1/demo.Echo")
	ch := subscribe(t, r, consumer)
	if list := waitList(t, ch, 1, 5*time.Second, "first list"); list[0].Address() != good.Address() {
		t.Fatalf("subscription pushed %v, want only %s", list, good)
	}
	for range 20 { // 20 lookups over 30 polls
		if l, err := r.Lookup(context.Background(), consumer); err != nil || len(l) != 1 || l[0].Address() != good.Address() {
			t.Fatalf("Lookup: %v, %v; want only %s", l, err, good)
		}
		time.Sleep(30 * time.Millisecond)
	}
	if _, err := os.Stat(hand); err != nil {
		t.Fatalf("the hand-written entry is gone: %v", err)
	}
	if _, err := os.Stat(deadPath); !os.IsNotExist(err) {
		t.Errorf("the dead older-format entry %s is still there (%v), want it removed", deadPath, err)
	}
	inv := invalidEntries(t, r, consumer)
	if len(inv) != 1 || inv[0].Name != "manual" || !strings.HasPrefix(inv[0].Why, "written by hand, unlocked") {
		t.Errorf("Invalid: %+v, want the hand-written entry, written by hand", inv)
	}
	if n := strings.Count(logBuf.String(), "file="+hand+" "); n != 1 {
		t.Errorf("the hand-written entry logged %d times, want once:\n%s", n, logBuf)
	}
}
