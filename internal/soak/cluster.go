package soak

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/bus"
)

// nowhere is the route address every node advertises: one that refuses connections. A node
// told of another it has no route to would connect to the address advertised, around the
// proxies; so only the routes through the proxies exist, and cutting them cuts the node off.
const nowhere = "127.0.0.1:1"

// nodes is the size of the soak's NATS cluster.
const nodes = 3

// cluster is a JetStream cluster of embedded servers on loopback, every node's routes to the
// others through a proxy (proxies[i][j] leads from node i to node j), so a node can be cut off.
type cluster struct {
	dir     string
	creds   string
	log     *slog.Logger
	servers [nodes]*server.Server
	ports   [nodes]int // client ports, kept across restarts
	routes  [nodes]int // route ports
	proxies [nodes][nodes]*proxy
}

func startCluster(dir string, log *slog.Logger) (*cluster, error) {
	c := &cluster{dir: dir, creds: filepath.Join(dir, "creds"), log: log}
	for i := range nodes {
		var err error
		if c.ports[i], err = freePort(); err != nil {
			return nil, err
		}
		if c.routes[i], err = freePort(); err != nil {
			return nil, err
		}
	}
	for i := range nodes {
		for j := range nodes {
			if i == j {
				continue
			}
			p, err := newProxy("127.0.0.1:" + strconv.Itoa(c.routes[j]))
			if err != nil {
				c.close()
				return nil, err
			}
			c.proxies[i][j] = p
		}
	}
	for i := range nodes { // one by one: the first writes the roles' keys the others read
		if err := c.start(i); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// start starts node i on its ports and store (again, after stop).
func (c *cluster) start(i int) error {
	var routes []string
	for j := range nodes {
		if j != i {
			routes = append(routes, "nats-route://"+c.proxies[i][j].addr())
		}
	}
	s, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: c.ports[i], StoreDir: c.store(i), CredsDir: c.creds,
		Log: c.log.With("node", i), Cluster: &bus.ClusterOptions{Name: "soak", Node: "n" + strconv.Itoa(i),
			Port: c.routes[i], Routes: routes, Advertise: nowhere}})
	if err != nil {
		return fmt.Errorf("node %d: %w", i, err)
	}
	c.servers[i] = s
	return nil
}

// nodeOf is the node nc is connected to now, -1 when none.
func (c *cluster) nodeOf(nc *nats.Conn) int {
	for i, p := range c.ports {
		if strings.HasSuffix(nc.ConnectedUrl(), ":"+strconv.Itoa(p)) {
			return i
		}
	}
	return -1
}

func (c *cluster) store(i int) string { return filepath.Join(c.dir, "n"+strconv.Itoa(i)) }

// stop stops node i as a crash would leave it: its store as it is on disk.
func (c *cluster) stop(i int) {
	if s := c.servers[i]; s != nil {
		s.Shutdown()
		s.WaitForShutdown()
		c.servers[i] = nil
	}
}

// cut cuts node i off from the others (both ways), or heals it.
func (c *cluster) cut(i int, cut bool) {
	for j := range nodes {
		if j != i {
			c.proxies[i][j].setCut(cut)
			c.proxies[j][i].setCut(cut)
		}
	}
}

// urls lists every node's client URL, first is the one a client prefers.
func (c *cluster) urls(first int) string {
	var us []string
	for k := range nodes {
		us = append(us, "nats://127.0.0.1:"+strconv.Itoa(c.ports[(first+k)%nodes]))
	}
	return strings.Join(us, ",")
}

// connect connects as role, preferring node first (nats.go shuffles the server list unless
// extra has nats.DontRandomize); it follows the cluster as nodes come and go (a connection that
// lost its node stays on the one it found).
func (c *cluster) connect(ctx context.Context, role, name string, first int, extra ...nats.Option) (*nats.Conn, jetstream.JetStream, error) {
	opts, err := bus.Auth{Role: role, DefaultCreds: c.creds}.Options()
	if err != nil {
		return nil, nil, err
	}
	opts = append(opts, nats.ReconnectWait(100*time.Millisecond), nats.RetryOnFailedConnect(true))
	opts = append(opts, extra...)
	return bus.Connect(ctx, c.urls(first), name, c.log.With("client", name), opts...)
}

// ready waits until JetStream has a meta leader, so streams can be created.
func (c *cluster) ready(ctx context.Context, js jetstream.JetStream) error {
	for {
		tctx, cancel := context.WithTimeout(ctx, time.Second) // an API request the cluster is not ready for gets no answer
		_, err := js.AccountInfo(tctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the soak's NATS cluster has no JetStream leader: %w (%w)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// settled waits until every stream has a leader and all its replicas are current, so the next
// fault finds a whole cluster.
func (c *cluster) settled(ctx context.Context, js jetstream.JetStream) error {
	for {
		ok, err := allCurrent(ctx, js)
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the soak's NATS cluster did not settle: %w (%v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func allCurrent(ctx context.Context, js jetstream.JetStream) (bool, error) {
	tctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	names := js.StreamNames(tctx)
	for name := range names.Name() {
		st, err := js.Stream(tctx, name)
		if err != nil {
			return false, err
		}
		cl := st.CachedInfo().Cluster
		if cl == nil || cl.Leader == "" || len(cl.Replicas) != nodes-1 {
			return false, fmt.Errorf("stream %s has no leader or lacks replicas", name)
		}
		for _, r := range cl.Replicas {
			if !r.Current {
				return false, fmt.Errorf("stream %s: replica %s is behind", name, r.Name)
			}
		}
	}
	return names.Err() == nil, names.Err()
}

func (c *cluster) close() {
	for i := range nodes {
		c.stop(i)
	}
	for i := range nodes {
		for j := range nodes {
			if p := c.proxies[i][j]; p != nil {
				p.close()
			}
		}
	}
	os.RemoveAll(c.dir)
}

// freePort finds a loopback port to listen on, below the kernel's ephemeral range (32768 and
// up on Linux): a port picked from that range and closed can be taken, before the node binds it,
// by the local end of any outgoing connection (a proxy dialling a node, a client), which once
// kept a restarted node from starting ("address already in use").
func freePort() (int, error) {
	for range 100 {
		port := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		ln.Close()
		return port, nil
	}
	return 0, errors.New("soak: no free loopback port between 20000 and 32000")
}
