package zktest

import (
	"io"

	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Paths of Debian's zookeeper package.
const (
	Jar     = "/usr/share/java/zookeeper.jar"
	ConfDir = "/etc/zookeeper/conf"
	// InstallHint is what an error tells the user to run.
	InstallHint = "apt-get install -y zookeeper (or `make deps`)"
)

// TickTime is the server's tick: sessions may be as short as 2 ticks, and
// the server checks expiry every tick.
const TickTime = 200 * time.Millisecond

// StartTimeout bounds how long Start and Restart wait for "imok".
const StartTimeout = 30 * time.Second

// Server is one ZooKeeper process. Methods are safe for concurrent use.
type Server struct {
	port int
	dir  string
	main string // the Java main class: ZooKeeperServerMain, or QuorumPeerMain for an Ensemble member

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{} // closed when cmd has been waited for
}

// Start launches a server on a free 127.0.0.1 port with a new temporary data
// directory and returns once it answers "ruok". Errors name what is missing
// and how to install it.
func Start() (*Server, error) {
	return start(TickTime, []string{
		"minSessionTimeout=" + strconv.Itoa(int(2*TickTime/time.Millisecond)),
		"maxSessionTimeout=120000",
	})
}

// StartTick is Start with tickTime tick and ZooKeeper's default session
// bounds, 2 x tick to 20 x tick (a session timeout asked outside them is
// granted the nearest bound), listening on a free port.
func StartTick(tick time.Duration) (*Server, error) {
	return start(tick, nil)
}

func start(tick time.Duration, bounds []string) (*Server, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("zktest: java not found on PATH: install ZooKeeper and its JRE with %s", InstallHint)
	}
	_ = java
	if _, err := os.Stat(Jar); err != nil {
		return nil, fmt.Errorf("zktest: %s not found: install ZooKeeper with %s", Jar, InstallHint)
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("zktest: find a free port: %w", err)
	}
	dir, err := os.MkdirTemp("", "zktest-")
	if err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	cfg := strings.Join(append(append([]string{
		"tickTime=" + strconv.Itoa(int(tick/time.Millisecond)),
		"dataDir=" + filepath.Join(dir, "data"),
		"clientPort=" + strconv.Itoa(port),
		"clientPortAddress=127.0.0.1",
		"maxClientCnxns=0",
	}, bounds...),
		"admin.enableServer=false",
		"4lw.commands.whitelist=ruok,stat,cons",
		"",
	), "\n")
	if err := os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("zktest: %w", err)
	}
	s := &Server{port: port, dir: dir, main: standaloneMain}
	if err := s.Restart(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Addr returns "127.0.0.1:PORT".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// DataDir returns the server's data directory. Removing it while the
// server is stopped and then calling Restart simulates a ZooKeeper that
// comes back with empty data (a container without a persistent volume):
// every node, session and zxid is gone.
func (s *Server) DataDir() string { return filepath.Join(s.dir, "data") }

// LogPath returns the file receiving the server's stdout and stderr.
func (s *Server) LogPath() string { return filepath.Join(s.dir, "server.log") }

// Port returns the client port.
func (s *Server) Port() int { return s.port }

// URL returns "zookeeper://127.0.0.1:PORT" followed by query (e.g.
// "root=x&session.timeout=2s") when it is not empty.
func (s *Server) URL(query string) string {
	u := "zookeeper://" + s.Addr()
	if query != "" {
		u += "?" + query
	}
	return u
}

// Running reports whether the server process is up.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// Restart starts the server again on the same port and data directory (a no-op
// when it is running) and waits until it answers "ruok".
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	if err := s.launchLocked(); err != nil {
		return err
	}
	return s.waitLocked()
}

// Main classes of the two ways a server runs.
const (
	standaloneMain = "org.apache.zookeeper.server.ZooKeeperServerMain"
	quorumMain     = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
)

// launchLocked starts the java process; s.mu is held and no process runs.
func (s *Server) launchLocked() error {
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command("java",
		"-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.log.dir="+s.dir,
		"-cp", ConfDir+":"+Jar,
		s.main,
		filepath.Join(s.dir, "zoo.cfg"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("zktest: start java: %w", err)
	}
	exit := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exit) }()
	s.cmd, s.exit = cmd, exit
	return nil
}

// waitLocked waits until the launched server serves (ruok and stat),
// killing it when it exits or does not within StartTimeout; s.mu is held.
func (s *Server) waitLocked() error {
	deadline := time.Now().Add(StartTimeout)
	for {
		if ruok(s.Addr()) {
			return nil
		}
		select {
		case <-s.exit:
			s.cmd, s.exit = nil, nil
			return fmt.Errorf("zktest: zookeeper exited during startup: %s", s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = s.cmd.Process.Kill()
			<-s.exit
			s.cmd, s.exit = nil, nil
			return fmt.Errorf("zktest: zookeeper did not answer ruok on %s within %v: %s", s.Addr(), StartTimeout, s.logTail())
		}
	}
}

// Stop kills the server process (SIGKILL, like a crash; committed data and
// sessions survive in the data directory) and waits for it to exit. Idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exit
	s.cmd, s.exit = nil, nil
}

// Close stops the server and removes its directory. Idempotent.
func (s *Server) Close() {
	s.Stop()
	_ = os.RemoveAll(s.dir)
}

// Received returns the number of requests (packets) the server has
// received from its clients since it started, from its "stat" answer: a
// test counts the requests one command sends as the difference around it
// (sessions' pings included).
func (s *Server) Received() (int64, error) {
	c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err != nil {
		return 0, fmt.Errorf("zktest: stat: %w", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("stat")); err != nil {
		return 0, fmt.Errorf("zktest: stat: %w", err)
	}
	b, _ := io.ReadAll(io.LimitReader(c, 1<<20))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Received: "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("zktest: stat answered no Received line: %q", b)
}

// ruok reports whether a server at addr is serving requests: it answers
// "imok" to ruok as soon as it listens, but only "stat" tells that sessions
// can be created ("Mode: standalone").
func ruok(addr string) bool {
	return fourLetter(addr, "ruok", "imok") && fourLetter(addr, "stat", "Mode: ")
}

func fourLetter(addr, cmd, want string) bool {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return false
	}
	b, _ := io.ReadAll(io.LimitReader(c, 1<<16))
	return strings.Contains(string(b), want)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) logTail() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return err.Error()
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	if len(b) == 0 {
		return "(no output)"
	}
	return string(b)
}
