package server

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redline-dev/redline/server/keyslot"
)

func receiveMessage(t *testing.T, ps *redis.PubSub) *redis.Message {
	t.Helper()
	for {
		m, err := ps.ReceiveTimeout(ctx, 5*time.Second)
		if err != nil {
			t.Fatalf("no message: %v", err)
		}
		if msg, ok := m.(*redis.Message); ok {
			return msg
		}
	}
}

// TestPubSubStandalone: channels, patterns and shard channels with RESP2
// and RESP3 clients, PUBSUB introspection, and the subscribed context.
func TestPubSubStandalone(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			s := startServer(t)
			c := newClient(t, s, proto)
			sub := c.Subscribe(ctx, "news")
			defer sub.Close()
			if _, err := sub.Receive(ctx); err != nil { // the subscribe confirmation
				t.Fatal(err)
			}
			if err := sub.PSubscribe(ctx, "n*"); err != nil {
				t.Fatal(err)
			}
			ssub := c.SSubscribe(ctx, "shardy")
			defer ssub.Close()
			if _, err := ssub.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the pattern subscription", 5*time.Second, func() bool { return c.PubSubNumPat(ctx).Val() == 1 })
			if n, err := c.Publish(ctx, "news", "hello").Result(); err != nil || n != 2 {
				t.Fatalf("PUBLISH = %d, %v; want 2 receivers (channel and pattern)", n, err)
			}
			got := map[string]bool{}
			for i := 0; i < 2; i++ {
				m := receiveMessage(t, sub)
				got[m.Pattern+"|"+m.Channel+"|"+m.Payload] = true
			}
			if !got["|news|hello"] || !got["n*|news|hello"] {
				t.Fatalf("received %v", got)
			}
			if n, err := c.SPublish(ctx, "shardy", "s1").Result(); err != nil || n != 1 {
				t.Fatalf("SPUBLISH = %d, %v", n, err)
			}
			if m := receiveMessage(t, ssub); m.Channel != "shardy" || m.Payload != "s1" {
				t.Fatalf("shard message %+v", m)
			}
			if ch := c.PubSubChannels(ctx, "*").Val(); len(ch) != 1 || ch[0] != "news" {
				t.Fatalf("PUBSUB CHANNELS = %v", ch)
			}
			if n := c.PubSubNumSub(ctx, "news", "none").Val(); n["news"] != 1 || n["none"] != 0 {
				t.Fatalf("PUBSUB NUMSUB = %v", n)
			}
			if ch := c.PubSubShardChannels(ctx, "*").Val(); len(ch) != 1 || ch[0] != "shardy" {
				t.Fatalf("PUBSUB SHARDCHANNELS = %v", ch)
			}
			if n := c.PubSubShardNumSub(ctx, "shardy").Val(); n["shardy"] != 1 {
				t.Fatalf("PUBSUB SHARDNUMSUB = %v", n)
			}
		})
	}
}

// TestPubSubContext: a RESP2 subscriber may only (un)subscribe, PING, QUIT
// and RESET; PING answers ["pong", ""]; the replies keep their order.
func TestPubSubContext(t *testing.T) {
	s := startServer(t)
	// rc.do(t, nil) sends an empty request (ignored by the server) and
	// reads the next reply.
	rc := dialRaw(t, s.Addr().String())
	if got := string(rc.do(t, rawCmd("SUBSCRIBE", "a", "b"))); got != "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n" {
		t.Fatalf("SUBSCRIBE reply %q", got)
	}
	if got := string(rc.do(t, nil)); got != "*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n" {
		t.Fatalf("second SUBSCRIBE reply %q", got)
	}
	if got := string(rc.do(t, rawCmd("GET", "x"))); !strings.Contains(got, "only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed") {
		t.Fatalf("GET while subscribed: %q", got)
	}
	if got := string(rc.do(t, rawCmd("PING"))); got != "*2\r\n$4\r\npong\r\n$0\r\n\r\n" {
		t.Fatalf("PING while subscribed: %q", got)
	}
	pub := newClient(t, s, 2)
	pub.Publish(ctx, "a", "m1")
	if got := string(rc.do(t, nil)); got != "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nm1\r\n" {
		t.Fatalf("message %q", got)
	}
	rc.do(t, rawCmd("UNSUBSCRIBE"))
	if got := string(rc.do(t, nil)); !strings.HasSuffix(got, ":0\r\n") {
		t.Fatalf("last unsubscribe %q", got)
	}
	if got := string(rc.do(t, rawCmd("PING"))); got != "+PONG\r\n" {
		t.Fatalf("PING after unsubscribing: %q", got)
	}
}

// TestClusterPubSub: through go-redis's ClusterClient against reference
// nodes, PUBLISH reaches subscribers on every node over the bus, SPUBLISH
// reaches shard subscribers on the slot's master and its replica, and after
// the slot moves to another master its subscribers get "sunsubscribe" and
// new subscriptions follow the slot.
func TestClusterPubSub(t *testing.T) {
	nodes := startCluster(t, 6, 1, 2000)
	cc := clusterClient(t, nodes)

	// Classic: a subscriber on every node, a publish on one.
	var subs []*redis.PubSub
	for _, n := range nodes {
		ps := n.client().Subscribe(ctx, "news")
		if _, err := ps.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, ps)
	}
	if err := nodes[0].client().Publish(ctx, "news", "to-all").Err(); err != nil {
		t.Fatal(err)
	}
	for i, ps := range subs {
		if m := receiveMessage(t, ps); m.Payload != "to-all" {
			t.Fatalf("node %d got %+v", i, m)
		}
	}
	csub := cc.Subscribe(ctx, "events")
	if _, err := csub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cc.Publish(ctx, "events", "e1").Err(); err != nil {
		t.Fatal(err)
	}
	if m := receiveMessage(t, csub); m.Payload != "e1" {
		t.Fatalf("ClusterClient Subscribe got %+v", m)
	}
	psub := cc.PSubscribe(ctx, "ev*")
	if _, err := psub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	cc.Publish(ctx, "evening", "p1")
	if m := receiveMessage(t, psub); m.Payload != "p1" || m.Pattern != "ev*" {
		t.Fatalf("ClusterClient PSubscribe got %+v", m)
	}

	// Sharded: CROSSSLOT, MOVED followed by the client, replica delivery.
	const ch = "orders"
	slot := keyslot.Of([]byte(ch))
	if err := nodes[0].client().Do(ctx, "SSUBSCRIBE", "orders", "other-channel-x").Err(); err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("SSUBSCRIBE across slots: %v", err)
	}
	ssub := cc.SSubscribe(ctx, ch)
	if _, err := ssub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	owner, replica := slotOwner(t, nodes, slot)
	rsub := replica.client().SSubscribe(ctx, ch)
	if _, err := rsub.Receive(ctx); err != nil {
		t.Fatalf("SSUBSCRIBE on the slot's replica: %v", err)
	}
	if n, err := cc.SPublish(ctx, ch, "o1").Result(); err != nil || n != 1 {
		t.Fatalf("SPUBLISH = %d, %v", n, err)
	}
	if m := receiveMessage(t, ssub); m.Payload != "o1" {
		t.Fatalf("ClusterClient SSubscribe got %+v", m)
	}
	if m := receiveMessage(t, rsub); m.Payload != "o1" {
		t.Fatalf("replica's shard subscriber got %+v", m)
	}

	// Move the slot to another master: the old owner's shard subscribers
	// are told, and the publish then reaches the new owner's subscribers.
	var dest *node
	for _, n := range masters(t, nodes) {
		if n != owner {
			dest = n
			break
		}
	}
	// While the slot migrates, its owner still serves shard channels (a
	// channel is not a key: no ASK), as Redis does.
	if got := owner.str("cluster", "setslot", slot, "migrating", dest.myID()); got != "OK" {
		t.Fatal(got)
	}
	mig := owner.client().SSubscribe(ctx, ch)
	if _, err := mig.Receive(ctx); err != nil {
		t.Fatalf("SSUBSCRIBE on a migrating slot: %v", err)
	}
	for _, n := range masters(t, nodes) {
		if got := n.str("cluster", "setslot", slot, "node", dest.myID()); got != "OK" {
			t.Fatalf("SETSLOT NODE on %d: %s", n.port, got)
		}
	}
	for {
		m, err := ssub.ReceiveTimeout(ctx, 5*time.Second)
		if err != nil {
			t.Fatalf("no sunsubscribe after the slot moved: %v", err)
		}
		if s, ok := m.(*redis.Subscription); ok && s.Kind == "sunsubscribe" && s.Channel == ch {
			break
		}
	}
	var moved *redis.PubSub
	waitFor(t, "a shard subscription through the client on the new owner", 10*time.Second, func() bool {
		moved = cc.SSubscribe(ctx, ch)
		if _, err := moved.ReceiveTimeout(ctx, time.Second); err != nil {
			moved.Close()
			// The node the client asked for CLUSTER SLOTS may have been a
			// replica that had not heard of the move yet: ask again.
			cc.ReloadState(ctx)
			return false
		}
		return true
	})
	waitFor(t, "a shard subscription on the new owner", 10*time.Second, func() bool {
		return dest.client().PubSubShardNumSub(ctx, ch).Val()[ch] == 1
	})
	if err := cc.SPublish(ctx, ch, "o2").Err(); err != nil {
		t.Fatal(err)
	}
	if m := receiveMessage(t, moved); m.Payload != "o2" {
		t.Fatalf("after the move got %+v", m)
	}
}

// slotOwner returns the master serving slot and one of its replicas.
func slotOwner(t *testing.T, nodes []*node, slot int) (owner, replica *node) {
	t.Helper()
	var ownerID string
	for _, l := range strings.Split(nodes[0].str("cluster", "nodes"), "\n") {
		f := strings.Fields(l)
		for _, r := range f[min(8, len(f)):] {
			var lo, hi int
			if n, _ := fmt.Sscanf(r, "%d-%d", &lo, &hi); n == 2 && lo <= slot && slot <= hi {
				ownerID = f[0]
			} else if n == 1 && lo == slot {
				ownerID = f[0]
			}
		}
	}
	for _, n := range nodes {
		if n.myID() == ownerID {
			owner = n
		}
	}
	for _, n := range nodes {
		if n.role() == "slave" && strings.Contains(n.str("cluster", "nodes"), "myself,slave "+ownerID) {
			replica = n
		}
	}
	if owner == nil || replica == nil {
		t.Fatalf("slot %d: owner %v replica %v", slot, owner, replica)
	}
	return owner, replica
}

// TestClusterConfigSetReachesNode: CONFIG SET of a cluster-* directive
// takes effect on the running node, as in Redis (Redis's cluster suite sets
// cluster-node-timeout and cluster-slave-no-failover at runtime).
func TestClusterConfigSetReachesNode(t *testing.T) {
	n := startNode(t, freeBase(t, 1), 5000)
	if got := n.str("config", "set", "cluster-slave-no-failover", "yes"); got != "OK" {
		t.Fatal(got)
	}
	waitFor(t, "the nofailover flag in CLUSTER NODES", 5*time.Second, func() bool {
		return strings.Contains(n.str("cluster", "nodes"), "myself,master,nofailover")
	})
}

// TestPublishAfterUnsubscribeUnread is unit/pubsub's "PUBLISH/SUBSCRIBE
// after UNSUBSCRIBE without arguments": a subscriber writes UNSUBSCRIBE
// (or PUNSUBSCRIBE) and, without waiting for its reply, another client
// publishes. On Redis's one event loop the UNSUBSCRIBE, which arrived
// first, runs first and the PUBLISH reaches no one; here the subscriber
// has a goroutine of its own, and the PUBLISH waits for the input its
// recipients already had (pubsub_order.go). Many rounds: without that
// wait the publisher's loop won about 70% of them on this machine.
func TestPublishAfterUnsubscribeUnread(t *testing.T) {
	s := startServer(t)
	pub := newClient(t, s, 2)
	misses := 0
	for _, kind := range []struct{ sub, unsub, channel, publish string }{
		{"SUBSCRIBE", "UNSUBSCRIBE", "chan1", "chan1"},
		{"PSUBSCRIBE", "PUNSUBSCRIBE", "chan1.*", "chan1.hi"},
	} {
		for round := 0; round < 100; round++ {
			conn, err := netDial(s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			r := bufio.NewReader(conn)
			fmt.Fprintf(conn, "%s %s\r\n", kind.sub, kind.channel)
			for i := 0; i < 6; i++ { // *3 $9 subscribe $5 chan1 :1
				if _, err := r.ReadString('\n'); err != nil {
					t.Fatal(err)
				}
			}
			fmt.Fprintf(conn, "%s\r\n", kind.unsub)
			if n, err := pub.Publish(ctx, kind.publish, "hello").Result(); err != nil || n != 0 {
				misses++
				t.Logf("%s round %d: PUBLISH right after an unread %s reached %d (%v)", kind.sub, round, kind.unsub, n, err)
			}
			conn.Close()
		}
	}
	// Best effort (pubsub_order.go): quiet, 0 of 2,000 rounds missed; in
	// one CI run of the whole package 1 of 200 did. Without the wait 137
	// to 150 of 200 miss.
	if misses > 5 {
		t.Fatalf("%d of 200 PUBLISHes right after an unread (P)UNSUBSCRIBE reached the subscriber; want at most 5", misses)
	}
}
