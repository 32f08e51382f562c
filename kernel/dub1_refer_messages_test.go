package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// tester35 finding 8d: a key only some cluster reads, given beside a
// cluster that does not read it (Dubbo's retries=3 with failfast), is
// named at Refer in one WARN with the cluster and the clusters that read
// it, in its method-level forms too; a reference whose cluster reads it,
// for the service or for a method with its own cluster, gets none.
func TestDub1_ReferWarnsOfAClusterKeyItsClusterDoesNotRead(t *testing.T) {
	cat := testCatalogs(t)
	const addr = "127.0.0.1:39070" // nothing listens: Refer does not need a provider
	for q, want := range map[string]string{
		"cluster=failfast&retries=3":                              "key=retries cluster=failfast read_by=failover",
		"cluster=failsafe&retries=3":                              "key=retries cluster=failsafe read_by=failover",
		"cluster=forking&Who.retries=1":                           "key=Who.retries cluster=forking read_by=failover",
		"cluster=failfast&methods.Who.retries=1":                  "key=methods.Who.retries cluster=failfast read_by=failover",
		"forks=3":                                                 "key=forks cluster=failover read_by=forking",
		"cluster=failfast&idempotent=true":                        "key=idempotent cluster=failfast read_by=failover",
		"retries=3":                                               "",
		"cluster=failover&retries=0&idempotent=true":              "",
		"cluster=forking&forks=3":                                 "",
		"cluster=failfast&methods.Who.cluster=failover&retries=1": "", // Who's failover reads the service's retries
		"cluster=failfast&Who.cluster=failover&Who.retries=1":     "",
	} {
		var log logbuf.Buffer
		n := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		r, err := n.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/t.Svc?"+q), spi.URL{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		_ = r.Close()
		_ = n.Close()
		lines := strings.Count(log.String(), "URL key is read by another cluster")
		switch {
		case want == "" && lines != 0:
			t.Errorf("%s: warned, want no warning:\n%s", q, log.String())
		case want != "" && (lines != 1 || !strings.Contains(log.String(), " service=t.Svc "+want+"\n")):
			t.Errorf("%s: want one warning with %q, got:\n%s", q, want, log.String())
		}
	}
}

// tester35 finding 8c: a direct reference refused for naming several
// groups or versions names the keys it gave, and no empty "group=,".
func TestDub1_DirectReferOfManyVersionsNamesOnlyTheKeysGiven(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	for q, want := range map[string]string{
		"version=*":           "kernel: refer t.Svc: version=*: several groups or versions",
		"group=*":             "kernel: refer t.Svc: group=*: several groups or versions",
		"group=a,b&version=1": "kernel: refer t.Svc: group=a,b, version=1: several groups or versions",
		"group=&version=1,2":  "kernel: refer t.Svc: version=1,2: several groups or versions",
	} {
		_, err := n.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:39071/t.Svc?"+q), spi.URL{})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to begin %q", q, err, want)
		}
	}
}
