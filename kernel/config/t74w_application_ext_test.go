package config_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// Tester74: the application name comes from the file's application, then
// AIRNODE_APPLICATION, then --application, each winning over the one
// before; ExportURL and ApplyApplication put it on URLs that give no
// application of their own, and a URL's own key wins.
func TestT74W_Application(t *testing.T) {
	file := writeFile(t, "application: shop\nservices: [{interface: a.A}, {interface: b.B, params: {application: billing}}]\n")
	for _, tc := range []struct {
		name    string
		environ []string
		flag    string
		want    string
	}{
		{"file", nil, "", "shop"},
		{"env", []string{"AIRNODE_APPLICATION=shop-env"}, "", "shop-env"},
		{"flag", []string{"AIRNODE_APPLICATION=shop-env"}, "shop-flag", "shop-flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			config.AddFlags(fs)
			var args []string
			if tc.flag != "" {
				args = []string{"--application", tc.flag}
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(config.Source{File: file, Environ: tc.environ, Flags: fs})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Application != tc.want {
				t.Fatalf("Application %q, want %q", cfg.Application, tc.want)
			}
			a, err := cfg.ExportURL(cfg.Services[0])
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := a.Param("application"); v != tc.want {
				t.Errorf("ExportURL application=%q, want %q", v, tc.want)
			}
			b, err := cfg.ExportURL(cfg.Services[1])
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := b.Param("application"); v != "billing" {
				t.Errorf("ExportURL of a service with params application=billing: application=%q, want billing", v)
			}
			if v, _ := cfg.ApplyApplication(spi.MustParse("airnode:///a.A")).Param("application"); v != tc.want {
				t.Errorf("ApplyApplication application=%q, want %q", v, tc.want)
			}
			if v, _ := cfg.ApplyApplication(spi.MustParse("airnode:///a.A?application=web")).Param("application"); v != "web" {
				t.Errorf("ApplyApplication of a URL with application=web: %q, want web", v)
			}
		})
	}
	if u := config.DefaultConfig().ApplyApplication(spi.MustParse("airnode:///a.A")); u.String() != "airnode:///a.A" {
		t.Errorf("no application set: ApplyApplication gave %s, want the URL unchanged (the kernel's default applies)", u)
	}
	_, err := config.Load(config.Source{File: writeFile(t, "application: \"shop,web\"\n")})
	if err == nil || !strings.Contains(err.Error(), "application") {
		t.Errorf("application: shop,web: err %v, want an error naming application", err)
	}
}
