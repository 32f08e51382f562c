package file_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/spi"
)

// Under umask 000 the registry's directories are 0777: any local user
// could register a provider the consumers call, or delete this one's
// entry (tester68 F6, done as another uid). The first entry created
// logs one Warn naming the directory; umask 002 (group sharing, by
// design) logs none.
func TestT68_WorldWritableRegistryWarns(t *testing.T) {
	for _, tc := range []struct {
		umask int
		warn  bool
	}{{0o000, true}, {0o002, false}} {
		old := syscall.Umask(tc.umask)
		var buf bytes.Buffer
		dir := filepath.Join(t.TempDir(), "reg")
		r, err := file.Builder{Logger: slog.New(slog.NewTextHandler(&buf, nil))}.Build(spi.MustParse("file://" + dir))
		if err != nil {
			syscall.Umask(old)
			t.Fatal(err)
		}
		ctx := context.Background()
		for _, u := range []string{"airnode://127.0.0.1:1/demo.Echo?side=provider", "airnode://127.0.0.1:2/demo.Echo?side=provider"} {
			if err := r.Register(ctx, spi.MustParse(u)); err != nil {
				syscall.Umask(old)
				t.Fatal(err)
			}
		}
		syscall.Umask(old)
		_ = r.Close()
		n := strings.Count(buf.String(), "writable by every user")
		switch {
		case tc.warn && (n != 1 || !strings.Contains(buf.String(), "dir="+dir+" mode=drwxrwxrwx")):
			t.Errorf("umask %03o: %d warnings, want one naming %s:\n%s", tc.umask, n, dir, buf.String())
		case !tc.warn && n != 0:
			t.Errorf("umask %03o: %d warnings, want none:\n%s", tc.umask, n, buf.String())
		}
	}
}
