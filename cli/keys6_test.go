package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
)

// bundled returns the bundled catalogs, as the binary has them.
func bundled(*testing.T) func() *extension.Catalogs { return bundle.Catalogs }

// TestListKeysKernelGroup: list --keys prints the kernel's own keys first,
// as the group "kernel", each with its type, default and meaning (every
// key kernel.KernelKeys returns); "list kernel" prints them alone; the
// KEYS section of --explain is followed by their meanings.
func TestListKeysKernelGroup(t *testing.T) {
	code, out, errOut := airnode(t, bundled(t), "list", "--keys")
	if code != 0 {
		t.Fatalf("--keys: exit %d, stderr %s", code, errOut)
	}
	for _, r := range []*regexp.Regexp{
		row("kernel", "-", "methods", "string", "-", "provider: the service's methods, comma-separated and sorted, set at export (not given); Dubbo's <method>.<key> applies to these"),
		regexp.MustCompile(`(?m)^ +dispatcher +adaptive\|all\|direct +adaptive +provider: where requests run`),
		regexp.MustCompile(`(?m)^ +timeout +duration +1s +consumer: call timeout`),
		regexp.MustCompile(`(?m)^ +connection\.concurrency +int +16384 +provider: `),
		regexp.MustCompile(`(?m)^cluster +failfast +- +no URL keys of its own$`),
	} {
		if !r.MatchString(out) {
			t.Errorf("--keys lacks a row matching %s:\n%s", r, out)
		}
	}
	for _, k := range kernel.KernelKeys() {
		if !regexp.MustCompile(`(?m)^(kernel +- +| +)` + regexp.QuoteMeta(k) + ` +\S+( list)? +\S+ +(provider|consumer|both sides|node): `).MatchString(out) {
			t.Errorf("--keys has no kernel row for %s", k)
		}
	}
	if i, j := strings.Index(out, "\nkernel "), strings.Index(out, "\ncluster "); i < 0 || j < i {
		t.Errorf("the kernel group is not first:\n%s", out)
	}

	code, out, errOut = airnode(t, bundled(t), "list", "kernel")
	if code != 0 || !strings.Contains(out, "dispatcher") || strings.Contains(out, "\ncluster ") || strings.Contains(out, "smux") {
		t.Errorf("list kernel: exit %d stderr %s\n%s", code, errOut, out)
	}
	code, _, errOut = airnode(t, bundled(t), "list", "kernl")
	if code != exitUsage || !strings.Contains(errOut, `and kernel for the kernel's own keys); did you mean "kernel"?`) {
		t.Errorf("list kernl: exit %d stderr %q", code, errOut)
	}
	code, _, errOut = airnode(t, bundled(t), "list", "kernel", "timeout")
	if code != exitUsage || !strings.Contains(errOut, "kernel has no extensions") {
		t.Errorf("list kernel timeout: exit %d stderr %q", code, errOut)
	}

	code, out, errOut = airnode(t, bundled(t), "list", "--explain", "airnode://127.0.0.1:20880/demo.Echo?connections=2")
	if code != 0 {
		t.Fatalf("--explain: exit %d, stderr %s", code, errOut)
	}
	for _, r := range []*regexp.Regexp{
		row("connections", "service", "2", "SERVICE_URL query (connections)"),
		row("connection.concurrency", "service", "16384", "default"),
		row("shutdown.timeout", "service", "10s", "node (shutdown.timeout)"),
		regexp.MustCompile(`(?m)^KEY +MEANING$`),
		regexp.MustCompile(`(?m)^timeout +consumer: call timeout, > 0`),
		regexp.MustCompile(`(?m)^connections +consumer: connections to each provider, 1\.\.64$`),
	} {
		if !r.MatchString(out) {
			t.Errorf("--explain lacks a row matching %s:\n%s", r, out)
		}
	}
}

// TestNoFarFetchedSuggestion: "filter=nope" is three edits from "token":
// the unknown name is refused without a did-you-mean (internal/suggest's
// rule: one edit for a short name), while "tokn" and "tpc" still get
// theirs.
func TestNoFarFetchedSuggestion(t *testing.T) {
	code, _, errOut := airnode(t, bundled(t), "list", "--explain", "airnode://127.0.0.1:20880/demo.Echo?filter=nope")
	if code != exitUsage || !strings.Contains(errOut, `unknown filter "nope"`) || strings.Contains(errOut, "did you mean") {
		t.Errorf("filter=nope: exit %d stderr %q", code, errOut)
	}
	for q, want := range map[string]string{"filter=tokn": `did you mean "token"?`, "transport=tpc": `did you mean "tcp"?`} {
		code, _, errOut = airnode(t, bundled(t), "list", "--explain", "airnode://127.0.0.1:20880/demo.Echo?"+q)
		if code != exitUsage || !strings.Contains(errOut, want) { // the URL's value: a usage error (fix-bs)
			t.Errorf("%s: exit %d stderr %q, want %s", q, code, errOut, want)
		}
	}
}

// TestRegistryKeysInTheWrongPlace: a misspelt key of a file registry URL
// gets the key meant (file.cahce: the zookeeper registry's file.cache,
// which the file registry says it does without); a registry's key on a
// service URL (poll=5) is named by list --explain as having no effect.
func TestRegistryKeysInTheWrongPlace(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := airnode(t, bundled(t), "registry", "ls", "--registry", "file://"+dir+"?file.cahce=x")
	if code != exitUsage || !strings.Contains(errOut, `unknown URL key "file.cahce"`) || !strings.Contains(errOut, `did you mean "file.cache"? That is a key of the zookeeper registry`) ||
		strings.Contains(errOut, "the directory is the URL's path") {
		t.Errorf("file.cahce: exit %d stderr %q", code, errOut)
	}
	code, _, errOut = airnode(t, bundled(t), "registry", "ls", "--registry", "file://"+dir+"?pol=1s")
	if code != exitUsage || !strings.Contains(errOut, `did you mean "poll"?`) { // --registry's key: a usage error (fix-cj)
		t.Errorf("pol: exit %d stderr %q", code, errOut)
	}
	code, _, errOut = airnode(t, bundled(t), "list", "--explain", "airnode://127.0.0.1:20880/demo.Echo?poll=5")
	if code != 0 || !strings.Contains(errOut, "airnode: list: warning: poll=5 has no effect on a service URL: it is a key of the file registry, read from the registry URL only") {
		t.Errorf("poll=5: exit %d stderr %q", code, errOut)
	}
}
