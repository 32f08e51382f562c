package metrics

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// SetBuildInfo makes r export, once, the Prometheus build-info gauge
//
//	airnode_build_info{version,revision,go_version} 1
//
// so that the binaries of a fleet being upgraded can be counted by
// version: count by (version) (airnode_build_info). version is the
// release ("v1.4.0"), "devel" for a build with none; revision is the
// VCS commit it was built from (12 hex digits, "-dirty" for uncommitted
// changes), "" when unknown; go_version is runtime.Version(). Calls after
// the first change nothing. Safe for concurrent use.
func (r *Registry) SetBuildInfo(version, revision string) {
	r.buildInfo.Do(func() {
		r.prom.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "airnode_build_info",
			Help: "Always 1; its labels say which build of airnode this process runs: version (\"devel\" when the build has none), revision (the VCS commit, empty when unknown), go_version.",
			ConstLabels: prometheus.Labels{
				"version": version, "revision": revision, "go_version": runtime.Version(),
			},
		}, func() float64 { return 1 }))
	})
}
