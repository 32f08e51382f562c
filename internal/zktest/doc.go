// Package zktest runs a real ZooKeeper server for tests: Debian's
// "zookeeper" package (ZooKeeperServerMain from /usr/share/java/zookeeper.jar,
// whose manifest brings its jute, netty and slf4j jars) on a free loopback
// port with a temporary data directory, its AdminServer off, and no JMX:
// java runs ZooKeeperServerMain without the com.sun.management.jmxremote
// flags that Debian's zkServer.sh adds unless JMXDISABLE=true (they open a
// JMX port on every interface). A Server can be stopped and restarted
// on the same port and data directory to simulate an outage; sessions survive
// a restart that is shorter than their timeout, as they do in production.
//
// Start fails, with the install hint, when java or the package is missing:
// tests that need ZooKeeper must fail rather than skip. Start one Server per
// test package in TestMain and share it; Close removes it and its files.
package zktest
