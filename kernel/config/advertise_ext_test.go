package config_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/airnode/airnode/kernel/config"
)

// SplitAdvertise takes HOST, HOST:PORT, [IPv6], [IPv6]:PORT, :PORT and
// interface names, and refuses junk with an error saying what is wrong.
func TestSplitAdvertise(t *testing.T) {
	for _, tc := range []struct {
		in   string
		host string
		port int
	}{
		{"10.216.2.1", "10.216.2.1", 0},
		{"10.216.2.1:30880", "10.216.2.1", 30880},
		{"[::1]", "::1", 0},
		{"[2001:db8::5]:30880", "2001:db8::5", 30880},
		{"[2001:DB8::5]", "2001:db8::5", 0},
		{":30880", "", 30880},
		{"node7.example.com", "node7.example.com", 0},
		{"svc_16:24501", "svc_16", 24501},
		{"eth1", "eth1", 0},
		{"eth0.100:1", "eth0.100", 1},
	} {
		host, port, err := config.SplitAdvertise(tc.in)
		if err != nil || host != tc.host || port != tc.port {
			t.Errorf("SplitAdvertise(%q) = %q, %d, %v; want %q, %d", tc.in, host, port, err, tc.host, tc.port)
		}
	}
	for in, want := range map[string]string{
		"":                  "empty",
		"  ":                "empty",
		"::1":               "IPv6 addresses need brackets: [::1]",
		"::1:20880x":        "need brackets",
		"a:b:c":             "is not an address",
		"2001:db8::5:30880": "IPv6 addresses need brackets",
		"[::1":              "no closing bracket",
		"[10.0.0.1]:5":      "brackets are for IPv6 only",
		"[::1]x":            "not \"x\" after the bracket",
		"0.0.0.0":           "every interface",
		"[::]:20880":        "every interface",
		"10.0.0.1:0":        "must be 1-65535",
		"10.0.0.1:65536":    "must be 1-65535",
		"10.0.0.1:":         "must be 1-65535",
		"10.0.0.1:+5":       "must be 1-65535",
		":":                 "must be 1-65535",
		"http://x":          "must be 1-65535",
		"a b":               "neither an IP address nor a name",
		"-x":                "neither an IP address nor a name",
		"10.0.0.256":        "is not an IP address",
		"host/x:1":          "neither an IP address nor a name",
	} {
		_, _, err := config.SplitAdvertise(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SplitAdvertise(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

// The advertise setting comes from the file, AIRNODE_ADVERTISE or
// --advertise, in that order of precedence; a bad value is an error
// naming where it came from.
func TestAdvertiseSettingFileEnvFlag(t *testing.T) {
	file := writeFile(t, "advertise: \"[::1]:30881\"\n")
	c, err := config.Load(config.Source{File: file})
	if err != nil || c.Advertise != "[::1]:30881" {
		t.Fatalf("file: %q, %v", c.Advertise, err)
	}
	if c := config.DefaultConfig(); c.Advertise != "" {
		t.Errorf("default advertise %q, want none", c.Advertise)
	}
	env := []string{"AIRNODE_ADVERTISE=10.0.0.5"}
	if c, err = config.Load(config.Source{File: file, Environ: env}); err != nil || c.Advertise != "10.0.0.5" {
		t.Errorf("environment: %q, %v", c.Advertise, err)
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	config.AddFlags(fs)
	if err := fs.Parse([]string{"--advertise", "eth1:30880"}); err != nil {
		t.Fatal(err)
	}
	if c, err = config.Load(config.Source{File: file, Environ: env, Flags: fs}); err != nil || c.Advertise != "eth1:30880" {
		t.Errorf("flag: %q, %v", c.Advertise, err)
	}

	if _, err := config.Load(config.Source{Environ: []string{"AIRNODE_ADVERTISE=::1"}}); err == nil ||
		!strings.Contains(err.Error(), "environment AIRNODE_ADVERTISE") || !strings.Contains(err.Error(), "need brackets") {
		t.Errorf("bad AIRNODE_ADVERTISE: %v", err)
	}
	if _, err := config.Load(config.Source{File: writeFile(t, "advertise: 0.0.0.0\n")}); err == nil ||
		!strings.Contains(err.Error(), `key "advertise"`) || !strings.Contains(err.Error(), "every interface") {
		t.Errorf("bad file advertise: %v", err)
	}
	if _, err := config.Load(config.Source{File: writeFile(t, "advertize: 10.0.0.1\n")}); err == nil ||
		!strings.Contains(err.Error(), `did you mean "advertise"`) {
		t.Errorf("misspelt key: %v", err)
	}
}
