package zktest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// EnsembleTick is the tickTime of an Ensemble's servers: sessions may be
// as short as 2 ticks (1 s); a follower has 20 ticks to join the leader.
const EnsembleTick = 500 * time.Millisecond

// Ensemble is n ZooKeeper servers of one quorum (QuorumPeerMain), each
// on free 127.0.0.1 ports (client, quorum, election) with a data
// directory of its own, as a production ensemble runs: stopping a
// majority of them leaves the rest without a quorum (they close every
// client connection at its session handshake) until enough are started
// again. Servers may be stopped and restarted one by one (Server.Stop,
// Server.Restart: a restarted member waits until it serves, which needs a
// quorum).
type Ensemble struct {
	Servers []*Server
}

// StartEnsemble starts n (at least 3, odd) servers and returns once each
// serves. Errors name what is missing (as Start's) or the server that
// did not come up, with the end of its log.
func StartEnsemble(n int) (*Ensemble, error) {
	if n < 3 || n%2 == 0 {
		return nil, fmt.Errorf("zktest: an ensemble of %d servers: want an odd number, at least 3", n)
	}
	if _, err := os.Stat(Jar); err != nil {
		return nil, fmt.Errorf("zktest: %s not found: install ZooKeeper with %s", Jar, InstallHint)
	}
	ports := make([]int, 3*n) // client, quorum, election of each
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("zktest: find a free port: %w", err)
		}
		ports[i] = p
	}
	var members []string
	for i := 0; i < n; i++ {
		members = append(members, fmt.Sprintf("server.%d=127.0.0.1:%d:%d", i+1, ports[3*i+1], ports[3*i+2]))
	}
	e := &Ensemble{}
	for i := 0; i < n; i++ {
		dir, err := os.MkdirTemp("", "zktest-ensemble-")
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("zktest: %w", err)
		}
		s := &Server{port: ports[3*i], dir: dir, main: quorumMain}
		e.Servers = append(e.Servers, s)
		if err := os.MkdirAll(s.DataDir(), 0o755); err != nil {
			e.Close()
			return nil, fmt.Errorf("zktest: %w", err)
		}
		if err := os.WriteFile(filepath.Join(s.DataDir(), "myid"), []byte(strconv.Itoa(i+1)+"\n"), 0o644); err != nil {
			e.Close()
			return nil, fmt.Errorf("zktest: %w", err)
		}
		cfg := strings.Join(append([]string{
			"tickTime=" + strconv.Itoa(int(EnsembleTick/time.Millisecond)),
			"initLimit=20",
			"syncLimit=10",
			"dataDir=" + s.DataDir(),
			"clientPort=" + strconv.Itoa(s.port),
			"clientPortAddress=127.0.0.1",
			"maxClientCnxns=0",
			"minSessionTimeout=" + strconv.Itoa(int(2*EnsembleTick/time.Millisecond)),
			"maxSessionTimeout=120000",
			"admin.enableServer=false",
			"4lw.commands.whitelist=ruok,stat,cons,srvr",
		}, append(members, "")...), "\n")
		if err := os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
			e.Close()
			return nil, fmt.Errorf("zktest: %w", err)
		}
	}
	for _, s := range e.Servers {
		s.mu.Lock()
		err := s.launchLocked()
		s.mu.Unlock()
		if err != nil {
			e.Close()
			return nil, err
		}
	}
	for _, s := range e.Servers {
		s.mu.Lock()
		err := s.waitLocked()
		s.mu.Unlock()
		if err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// Addrs returns the servers' client addresses, "127.0.0.1:P1,127.0.0.1:P2,...",
// a ZooKeeper connect string and a registry URL's host list.
func (e *Ensemble) Addrs() string {
	var a []string
	for _, s := range e.Servers {
		a = append(a, s.Addr())
	}
	return strings.Join(a, ",")
}

// Close stops every server and removes their directories. Idempotent.
func (e *Ensemble) Close() {
	for _, s := range e.Servers {
		s.Close()
	}
}
