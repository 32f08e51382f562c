package cli

import (
	"github.com/airnode/airnode/extensions/filter/accesslog"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// What serve and call do with the bundled accesslog filter beyond
// building it: serve checks a file's path before exporting and reopens
// the files on SIGHUP (serve_signals.go); call logs the access lines
// (and only those) at info when the reference asks for them on the log.

// accessLogBuilder returns cat's accesslog filter builder when it is the
// bundled one, else nil (no catalogs yet, or a plugin replaced it).
func accessLogBuilder(cat *extension.Catalogs) *accesslog.Builder {
	if cat == nil {
		return nil
	}
	fb, err := cat.Filter.Get(accesslog.Name)
	if err != nil {
		return nil
	}
	b, _ := fb.(*accesslog.Builder)
	return b
}

// checkAccessLog refuses an export whose access log is a file that
// cannot be opened (accesslog=/nonexistent/dir/a.log), before anything
// listens, instead of at the first call; nil when cat's accesslog filter
// is not the bundled one (it checks its own keys).
func checkAccessLog(cat *extension.Catalogs, u spi.URL) error {
	if accessLogBuilder(cat) == nil {
		return nil
	}
	return accesslog.Check(u)
}

// accessLogOnLogger reports whether u asks the accesslog filter for lines
// on the node's logger (accesslog=true or default), which log at info.
func accessLogOnLogger(u spi.URL) bool {
	v, _ := u.Param(accesslog.Key)
	return v == "true" || v == "default"
}
