package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	kyaml "github.com/knadh/koanf/parsers/yaml"
	"github.com/spf13/pflag"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// shutdownSetting is one of serve's two shutdown settings, as each source
// spells it: the URL key (-p), the flag and the environment variable.
type shutdownSetting struct {
	key, flag, env string
}

// shutdownSettings are the wait ([0]) and the whole budget ([1]).
var shutdownSettings = [2]shutdownSetting{
	{keyShutdownWait, "shutdown-wait", "AIRNODE_SHUTDOWN_WAIT"},
	{keyShutdownTimeout, "shutdown-timeout", "AIRNODE_SHUTDOWN_TIMEOUT"},
}

// shutdownOrigin names where serve's shutdown wait and timeout came from,
// for its log lines and errors: "--shutdown-wait", "-p shutdown.wait",
// "AIRNODE_SHUTDOWN_WAIT", "shutdown.wait in plugins.yaml" or "the
// default" ("" is the default too).
type shutdownOrigin struct {
	wait, timeout string
}

// originDefault labels a setting no source gave.
const originDefault = "the default"

// originHalfTimeout labels, in the "shutting down" line, a wait no source
// gave that config.Load cut from the default (2s) to half of a shorter
// shutdown.timeout, leaving the other half for the drain.
const originHalfTimeout = "half the shutdown timeout (the default 2s cut to leave half for the drain)"

// loadServeConfig loads serve's configuration with -p shutdown.wait and
// -p shutdown.timeout (raw: the -p flags) taken as --shutdown-wait and
// --shutdown-timeout, so that one precedence holds for every source of
// the two settings (README "Configuration": defaults < file <
// environment < flags, -p being a flag) and the wait is checked against
// the timeout in effect, whichever sources gave them (--shutdown-wait 15s
// -p shutdown.timeout=20s is a 15 s wait of a 20 s budget). A -p value
// is folded into fs only when its flag was not given (userSet: the flags
// the user typed, [wait, timeout]); with the flag, runServe's
// checkShutdownParams accepts the same value and refuses another. A -p
// value that is not a duration serve can use is left to checkShutdownKeys,
// which names the value in effect of the other setting. A wait above the
// timeout that a -p value caused is an *spi.ParamError naming the -p key,
// the other value and its source, in a usage error (exit 2) that names
// the -p flag as typed ("serve: -p shutdown.wait=3s: ..."); any other
// error is config.Load's.
func loadServeConfig(a *app, fs *pflag.FlagSet, raw []string, userSet [2]bool) (config.Config, shutdownOrigin, error) {
	params, _ := parseParams(raw) // a malformed -p is runServe's to report
	var folded [2]time.Duration
	var from [2]string // the -p value folded, "" none
	for i, s := range shutdownSettings {
		v, ok := params[s.key]
		if !ok || userSet[i] {
			continue
		}
		d, err := spi.ParseDuration(v)
		if err != nil || i == 1 && d <= 0 {
			continue
		}
		if err := fs.Set(s.flag, d.String()); err != nil {
			continue
		}
		folded[i], from[i] = d, v
	}
	cfg, err := a.Config(fs)
	if err != nil && (from[0] != "" || from[1] != "") {
		var pe *spi.ParamError
		if err = foldedShutdownError(a, fs, folded, from, userSet, err); errors.As(err, &pe) {
			// the -p value refused: a usage error naming it, as
			// configKeyError names every -p key the kernel refuses
			err = usage(&flagKeyError{flag: "-p " + pe.Key + "=" + pe.Value, err: fmt.Errorf("serve: %w", err)})
		}
	}
	if err != nil {
		return cfg, shutdownOrigin{}, err
	}
	var o shutdownOrigin
	for i, s := range shutdownSettings {
		label := a.shutdownLabel(s, userSet[i], from[i] != "")
		if i == 0 {
			o.wait = label
		} else {
			o.timeout = label
		}
	}
	return cfg, o, nil
}

// foldedShutdownError returns, when the shutdown settings config.Load
// refused (err) are a -p value against the other setting, an
// *spi.ParamError naming the -p key, the other value in effect and where
// it came from; else err. The other value is read with the -p value
// replaced by one any other allows (a wait of 0, the longest timeout).
func foldedShutdownError(a *app, fs *pflag.FlagSet, d [2]time.Duration, from [2]string, userSet [2]bool, err error) error {
	wantWait := func(timeout time.Duration, src string) error {
		return &spi.ParamError{Key: keyShutdownWait, Value: from[0],
			Want: fmt.Sprintf("a duration from 0 to shutdown.timeout (%v, %s), such as 5s, 500ms or 5000 (milliseconds)", timeout, src)}
	}
	if from[0] != "" && from[1] != "" {
		if d[0] > d[1] {
			return wantWait(d[1], "-p "+keyShutdownTimeout)
		}
		return err
	}
	i := 0
	neutral := time.Duration(0)
	if from[1] != "" {
		i, neutral = 1, time.Duration(math.MaxInt64)
	}
	s, other := shutdownSettings[i], shutdownSettings[1-i]
	_ = fs.Set(s.flag, neutral.String())
	cfg, lerr := a.Config(fs)
	_ = fs.Set(s.flag, d[i].String())
	if lerr != nil {
		return err // not (only) the -p value: Load's own words
	}
	src := a.shutdownLabel(other, userSet[1-i], false)
	if i == 0 && d[0] > cfg.Shutdown.Timeout {
		return wantWait(cfg.Shutdown.Timeout, src)
	}
	if i == 1 && d[1] < cfg.Shutdown.Wait {
		return &spi.ParamError{Key: keyShutdownTimeout, Value: from[1],
			Want: fmt.Sprintf("a duration above 0 and at least shutdown.wait (%v, %s), the whole shutdown budget from the signal, such as 10s, 1m or 10000 (milliseconds)", cfg.Shutdown.Wait, src)}
	}
	return err
}

// shutdownLabel names the source of s that config.Load took, highest rank
// first: its flag as typed (userSet), -p (folded into the flag), its
// environment variable, the configuration file, else the default.
func (a *app) shutdownLabel(s shutdownSetting, userSet, folded bool) string {
	switch {
	case userSet:
		return "--" + s.flag
	case folded:
		return "-p " + s.key
	}
	if slices.ContainsFunc(a.environ(), func(kv string) bool {
		name, v, _ := strings.Cut(kv, "=")
		return name == s.env && v != ""
	}) {
		return s.env
	}
	if a.configFile != "" && fileSetsShutdown(a.configFile, strings.TrimPrefix(s.key, "shutdown.")) {
		return s.key + " in " + a.configFile
	}
	return originDefault
}

// rankedSetting is a node setting that several sources may give: the
// configuration file's key, its AIRNODE_* variable and its flag (README
// "Configuration": file < environment < flags), as logSettingRank names
// the one that wins.
type rankedSetting struct {
	key, env string // the file's key ("listen", "shutdown.wait") and the variable
	// from is the source config.Load took: a flag as typed ("--listen",
	// "-p shutdown.wait"), env, or anything else for the file or the
	// default.
	from  string
	value string // in effect, as logged
	// same reports whether two values give one setting (500ms and
	// 0.5s); false when either is malformed.
	same func(a, b string) bool
	// show returns a value as logged (a registry URL's password hidden);
	// nil: as is.
	show func(string) string
}

// logSettingRank logs one line at Info for each setting of settings that
// two sources give with different values, saying which wins (tester84
// #6; fix-bg: listen and registry too):
//
//	msg="airnode serve: --shutdown-timeout outranks AIRNODE_SHUTDOWN_TIMEOUT" key=shutdown.timeout env_value=5s value=20s
//	msg="airnode serve: AIRNODE_SHUTDOWN_WAIT outranks the configuration file's shutdown.wait" key=shutdown.wait file_value=4s value=1s
//	msg="airnode serve: --listen outranks the configuration file's listen" key=listen file_value=127.0.0.1:20880 value=127.0.0.1:20881
//
// The variable against the value in effect when a flag or -p won; else
// the file (file, "" none) against the variable or flag that won. A
// variable that is empty or malformed logs nothing (EnvWarnings and
// durationEnviron report those), nor a file value that is malformed.
func logSettingRank(environ []string, file string, settings []rankedSetting, logger interface{ Info(string, ...any) }) {
	for _, s := range settings {
		show := s.show
		if show == nil {
			show = func(v string) string { return v }
		}
		raw := ""
		for _, kv := range environ {
			if v, ok := strings.CutPrefix(kv, s.env+"="); ok {
				raw = v
			}
		}
		envSet := raw != "" && s.same(raw, raw)
		flagged := strings.HasPrefix(s.from, "-")
		fv, inFile := "", false
		if file != "" {
			fv, inFile = fileSetting(file, s.key)
			inFile = inFile && s.same(fv, fv)
		}
		switch {
		case envSet && flagged && !s.same(raw, s.value):
			logger.Info("airnode serve: "+s.from+" outranks "+s.env, "key", s.key, "env_value", show(raw), "value", show(s.value))
		case (envSet && s.from == s.env || !envSet && flagged) && inFile && !s.same(fv, s.value):
			logger.Info("airnode serve: "+s.from+" outranks the configuration file's "+s.key, "key", s.key, "file_value", show(fv), "value", show(s.value))
		}
	}
}

// shutdownRanked returns serve's shutdown wait and timeout as
// logSettingRank takes them: origin says which source config.Load took
// (loadServeConfig), cfg the values in effect.
func shutdownRanked(cfg config.Shutdown, origin shutdownOrigin) []rankedSetting {
	sameDuration := func(a, b string) bool {
		da, errA := spi.ParseDuration(a)
		db, errB := spi.ParseDuration(b)
		return errA == nil && errB == nil && da == db
	}
	return []rankedSetting{
		{key: shutdownSettings[0].key, env: shutdownSettings[0].env, from: origin.wait, value: cfg.Wait.String(), same: sameDuration},
		{key: shutdownSettings[1].key, env: shutdownSettings[1].env, from: origin.timeout, value: cfg.Timeout.String(), same: sameDuration},
	}
}

// addressRanked returns serve's listen address and registry as
// logSettingRank takes them, their sources as config.Load recorded them
// (Config.SettingSource); a registry URL is logged without its password.
func addressRanked(cfg config.Config) []rankedSetting {
	same := func(a, b string) bool { return a == b }
	from := func(key string) string {
		src := cfg.SettingSource(key)
		if f, ok := strings.CutPrefix(src, "flag "); ok {
			return f
		}
		if name, ok := strings.CutPrefix(src, "env "); ok {
			return name
		}
		return src
	}
	redact := func(v string) string {
		if u, err := spi.Parse(v); err == nil {
			return u.Redacted()
		}
		return v
	}
	return []rankedSetting{
		{key: "listen", env: config.EnvPrefix + "LISTEN", from: from("listen"), value: cfg.Listen, same: same},
		{key: "registry", env: config.EnvPrefix + "REGISTRY", from: from("registry"), value: cfg.Registry, same: same, show: redact},
	}
}

// fileSetting returns the value the YAML configuration file gives the
// setting at path ("listen", "shutdown.wait": shutdown: {wait: ...}), as
// text, and whether it gives one (config.Load read it already: an error
// is false).
func fileSetting(file, path string) (string, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false
	}
	m, err := kyaml.Parser().Unmarshal(b)
	if err != nil {
		return "", false
	}
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		if m, _ = m[p].(map[string]any); m == nil {
			return "", false
		}
	}
	v, ok := m[parts[len(parts)-1]]
	if !ok || v == nil {
		return "", false
	}
	return fmt.Sprint(v), true
}

// fileSetsShutdown reports whether the YAML configuration file sets
// shutdown: {name: ...} (config.Load read it already: an error is false).
func fileSetsShutdown(file, name string) bool {
	_, ok := fileSetting(file, "shutdown."+name)
	return ok
}

// outrankFileShutdownKeys gives way, on every export, the shutdown.wait
// and shutdown.timeout URL keys the configuration file set (protocol: or
// a service's params:) to a flag or environment variable that gave the
// setting (origin: --shutdown-wait, AIRNODE_SHUTDOWN_WAIT, ...), which
// ranks above the file (README "Configuration"): the kernel reads the
// exports' keys, the largest winning, so a file's shutdown.wait: 4s
// outlasted --shutdown-wait 300ms. -p values are in the URLs already,
// above the file's. A file value that does not parse is left for
// checkShutdownKeys to refuse. Each key replaced is logged at Info.
func outrankFileShutdownKeys(exports []plannedExport, cfg config.Shutdown, origin shutdownOrigin, logger interface{ Info(string, ...any) }) {
	for i, s := range shutdownSettings {
		label, value := origin.wait, cfg.Wait
		if i == 1 {
			label, value = origin.timeout, cfg.Timeout
		}
		if label != "--"+s.flag && label != s.env {
			continue
		}
		for j, pe := range exports {
			v, ok := pe.url.Param(s.key)
			if d, err := spi.ParseDuration(v); !ok || err != nil || d == value {
				continue
			}
			exports[j].url = pe.url.With(s.key, value.String())
			logger.Info("airnode serve: "+label+" outranks the configuration file's URL key", "key", s.key,
				"file_value", v, "value", value, "service", pe.url.ServiceKey())
		}
	}
}

// abandonedMsg is the message of serve's last line when its shutdown
// timeout abandoned calls (logAbandoned).
const abandonedMsg = "airnode serve: shutdown timeout exceeded; calls abandoned"

// logAbandoned writes serve's last line when the shutdown timeout passed
// with calls still running, as a log line on logger (at Error, so that a
// pipeline that parses msg= and key=value sees it):
//
//	msg="airnode serve: shutdown timeout exceeded; calls abandoned" timeout=10s calls=1
//	  abandoned="demo.Echo.Sleep from 127.0.0.1:50212" answered=SERVER_ERROR
//
// calls counts every call still in flight, abandoned names those whose
// consumers were answered SERVER_ERROR, counted per method and consumer
// ("demo.Echo.Sleep from 127.0.0.1:50212 x8, demo.Echo.Echo from
// 127.0.0.1:50214": kernel.AbandonedError.Which; a call that ignored its
// cancelled context is counted in calls, not named), and
// also carries the shutdown's other errors (rest: "; also: ..."), if any.
// It returns the error serve exits 1 with, already reported.
func logAbandoned(logger *slog.Logger, timeout time.Duration, ab *kernel.AbandonedError, rest string) error {
	attrs := []any{"timeout", timeout, "calls", ab.Calls}
	if len(ab.Which) > 0 {
		named := make([]string, len(ab.Which))
		for i, c := range ab.Which {
			named[i] = c.String()
		}
		attrs = append(attrs, "abandoned", strings.Join(named, ", "))
	}
	attrs = append(attrs, "answered", spi.StatusServerError.String())
	if ab.ContextEnded {
		attrs = append(attrs, "cut_short", true)
	}
	if rest != "" {
		attrs = append(attrs, "also", strings.TrimPrefix(rest, "; also: "))
	}
	logger.Error(abandonedMsg, attrs...)
	return reportedError{code: 1, msg: fmt.Sprintf("serve: shutdown timeout %v exceeded: %s", timeout, ab.Summary())}
}

// reportedError ends a command whose failure its log already told: run
// prints nothing more and exits with code (exitCoder).
type reportedError struct {
	code int
	msg  string
}

func (e reportedError) Error() string { return e.msg }

// ExitCode is the status the command exits with.
func (e reportedError) ExitCode() int { return e.code }
