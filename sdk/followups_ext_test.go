package sdk_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// evoUserV2 is a newer consumer's version of the evolve plugin's argument
// (testdata/evolve): Email and Addr.Zip are fields the plugin lacks.
type evoUserV2 struct {
	ID    int64
	Name  string
	Email string
	Addr  evoAddrV2
}

type evoAddrV2 struct {
	City string
	Zip  string
}

// A plugin service ignores a struct field its argument type lacks when the
// consumer is newer than the plugin (the sdk's rule is the kernel's for an
// in-process service, commit b4091eb), logging it once per method and
// field through the plugin's logger, which the host shows; a generic call
// — `airnode call`, which sends the attachment generic=true, or a Go
// caller sending spi.AttachmentGeneric — keeps the BAD_REQUEST naming the
// key and listing the fields. A real plugin process (testdata/evolve)
// exported by a provider node, called over loopback TCP by a typed
// consumer, by a marked Go call and by the airnode binary, both codecs.
func TestFollowups1_PluginIgnoresANewerConsumersFieldUnlessGeneric(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli := filepath.Join(t.TempDir(), "airnode")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", cli, "github.com/airnode/airnode/cmd/airnode").CombinedOutput(); err != nil {
		t.Fatalf("building airnode: %v\n%s", err, out)
	}
	var hostLog logbuf.Buffer
	addr, consumer := exportPlugin(t, ctx, "evolve", "acme.Users", &hostLog)
	target := "airnode://" + addr + "/acme.Users"

	for _, codec := range []string{"msgpack", "json"} {
		ref, err := consumer.Refer(ctx, spi.MustParse(target+"?timeout=5s&codec="+codec), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		// a typed consumer with the newer struct: Email and Addr.Zip ignored
		newer := evoUserV2{ID: 7, Name: "bob", Email: "b@x", Addr: evoAddrV2{City: "Rome", Zip: "00100"}}
		for range 2 {
			var s string
			if err := ref.Call(ctx, "Put", []any{newer}, &s); err != nil || s != "put 7 bob Rome" {
				t.Fatalf("%s: Put(%+v) = %q, %v; want the unknown fields ignored", codec, newer, s, err)
			}
		}
		// a Go caller asking for the typo check
		generic := spi.WithAttachments(ctx, spi.AttachmentGeneric, spi.GenericTrue)
		_, err = ref.Invoke(generic, "Put", map[string]any{"ID": 1, "Nmae": "x"})
		want := `acme.Users.Put argument 0 (main.user): got a map with unknown field "Nmae" in user (fields: ID, Name, Addr); did you mean "Name"?`
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || se.Message != want {
			t.Errorf("%s: generic Put({ID, Nmae}): %v, want BAD_REQUEST %q", codec, err, want)
		}
		// airnode call: generic, so the same BAD_REQUEST, exit 1
		cmd := exec.CommandContext(ctx, cli, "call", "--codec", codec, target, "Put", `{"ID":1,"Nmae":"x"}`)
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + cmd.Dir}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "BAD_REQUEST: "+want) {
			t.Errorf("%s: airnode call Put '{\"ID\":1,\"Nmae\":\"x\"}': %v, stdout %q, stderr %q; want exit 1 and BAD_REQUEST: %s",
				codec, err, stdout.String(), stderr.String(), want)
		}
		// ... and it still calls with the right keys
		cmd = exec.CommandContext(ctx, cli, "call", "--codec", codec, target, "Put", `{"ID":2,"name":"cy","Addr":{"City":"Oslo"}}`)
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + cmd.Dir}
		if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != `"put 2 cy Oslo"` {
			t.Errorf("%s: airnode call Put with known keys: %q, %v", codec, out, err)
		}
	}

	// The field is logged once per (method, field), whatever the codec and
	// however many calls, naming the consumer. A later, different field
	// marks where the log has got to (the plugin's stderr is in order).
	var s string
	ref, err := consumer.Refer(ctx, spi.MustParse(target+"?timeout=5s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Call(ctx, "Put", []any{map[string]any{"ID": 3, "Later": 1}}, &s); err != nil || s != "put 3  " {
		t.Fatalf("Put({ID, Later}) = %q, %v; want Later ignored (Call does not mark a call generic)", s, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(hostLog.String(), `unknown field \"Later\"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the host's log has no line for the field Later:\n%s", hostLog.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var lines []string
	for _, l := range strings.Split(hostLog.String(), "\n") {
		if strings.Contains(l, "sdk: acme.Users.Put: consumer 127.0.0.1:") && strings.Contains(l, "; ignored,") {
			lines = append(lines, l)
		}
	}
	// the newer struct's first unknown key in name order, then Later
	if len(lines) != 2 || strings.Contains(lines[0], "Later") || strings.Contains(hostLog.String(), `Nmae\" in user (fields: ID, Name, Addr); ignored`) {
		t.Errorf("want 2 lines (the newer struct's field once, then Later), none for the generic calls' Nmae; got %d:\n%s", len(lines), hostLog.String())
	}
}
