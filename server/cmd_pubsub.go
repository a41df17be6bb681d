package server

// The Pub/Sub commands: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PUBLISH, SPUBLISH, PUBSUB.

import (
	"sort"
	"strings"
)

func cmdSubscribe(c *Client, argv [][]byte) {
	st := c.s.pubsub()
	ps := c.subscriberOf()
	shard := c.cmd.Name == "ssubscribe"
	pattern := c.cmd.Name == "psubscribe"
	for _, a := range argv[1:] {
		name := string(a)
		var mine map[string]struct{}
		var all map[string]map[*Client]struct{}
		switch {
		case shard:
			mine, all = ps.shard, st.shard
		case pattern:
			mine, all = ps.patterns, st.patterns
		default:
			mine, all = ps.channels, st.channels
		}
		if _, ok := mine[name]; !ok {
			mine[name] = struct{}{}
			if all[name] == nil {
				all[name] = map[*Client]struct{}{}
			}
			all[name][c] = struct{}{}
		}
		count := ps.subscriptions()
		if shard {
			count = len(ps.shard)
		}
		c.subscribeReply(c.cmd.Name, a, count)
	}
}

func cmdUnsubscribe(c *Client, argv [][]byte) {
	kind := c.cmd.Name
	if c.ps == nil { // never subscribed: nothing to end
		if len(argv) == 1 {
			c.subscribeReply(kind, nil, 0)
		}
		for _, a := range argv[1:] {
			c.subscribeReply(kind, a, 0)
		}
		return
	}
	st := c.s.pubsub()
	ps := c.ps
	var mine map[string]struct{}
	var all map[string]map[*Client]struct{}
	switch kind {
	case "sunsubscribe":
		mine, all = ps.shard, st.shard
	case "punsubscribe":
		mine, all = ps.patterns, st.patterns
	default:
		mine, all = ps.channels, st.channels
	}
	names := argv[1:]
	if len(names) == 0 {
		for _, n := range sortedSet(mine) {
			names = append(names, []byte(n))
		}
		if len(names) == 0 {
			count := ps.subscriptions()
			if kind == "sunsubscribe" {
				count = len(ps.shard)
			}
			c.subscribeReply(kind, nil, count)
			return
		}
	}
	for _, a := range names {
		name := string(a)
		if _, ok := mine[name]; ok {
			delete(mine, name)
			unsub(all, name, c)
		}
		count := ps.subscriptions()
		if kind == "sunsubscribe" {
			count = len(ps.shard)
		}
		c.subscribeReply(kind, a, count)
	}
}

func cmdPublish(c *Client, argv [][]byte) {
	s := c.s
	n := s.publishLocal(argv[1], argv[2], false)
	if s.inCluster() {
		s.cl.node.Publish(argv[1], argv[2])
		s.cl.pending = true
	} else {
		// Outside cluster mode PUBLISH reaches replicas through the
		// replication stream, as in Redis.
		s.propagate(c.db, argv)
	}
	c.Int(int64(n))
}

func cmdSPublish(c *Client, argv [][]byte) {
	s := c.s
	n := s.publishLocal(argv[1], argv[2], true)
	if s.inCluster() {
		s.cl.node.PublishShard(argv[1], argv[2])
		s.cl.pending = true
	} else {
		s.propagate(c.db, argv)
	}
	c.Int(int64(n))
}

func cmdPubsub(c *Client, argv [][]byte) {
	st := c.s.pubsub()
	sub := strings.ToUpper(string(argv[1]))
	switch {
	case (sub == "CHANNELS" || sub == "SHARDCHANNELS") && len(argv) <= 3:
		m := st.channels
		if sub == "SHARDCHANNELS" {
			m = st.shard
		}
		var out []string
		for ch := range m {
			if len(argv) == 3 && !GlobMatch(argv[2], []byte(ch)) {
				continue
			}
			out = append(out, ch)
		}
		sort.Strings(out)
		c.Array(len(out))
		for _, ch := range out {
			c.BulkString(ch)
		}
	case sub == "NUMSUB" || sub == "SHARDNUMSUB":
		m := st.channels
		if sub == "SHARDNUMSUB" {
			m = st.shard
		}
		c.Map(len(argv) - 2)
		for _, a := range argv[2:] {
			c.Bulk(a)
			c.Int(int64(len(m[string(a)])))
		}
	case sub == "NUMPAT" && len(argv) == 2:
		c.Int(int64(len(st.patterns)))
	case sub == "HELP" && len(argv) == 2:
		help := []string{"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"CHANNELS [<pattern>]", "NUMPAT", "NUMSUB [<channel> ...]", "SHARDCHANNELS [<pattern>]", "SHARDNUMSUB [<shardchannel> ...]", "HELP"}
		c.Array(len(help))
		for _, h := range help {
			c.Simple(h)
		}
	default:
		c.Error("ERR unknown subcommand or wrong number of arguments for '" + strings.ToLower(string(argv[1])) + "'. Try PUBSUB HELP.")
	}
}

// pubsubCommands are the Pub/Sub family's specs.
func pubsubCommands() []*Command {
	const f = FlagPubSub | FlagNoScript | FlagLoading | FlagStale
	return []*Command{
		newCmd("subscribe", -2, f, 0, 0, 0, cmdSubscribe, "pubsub"),
		newCmd("psubscribe", -2, f, 0, 0, 0, cmdSubscribe, "pubsub"),
		newCmd("unsubscribe", -1, f, 0, 0, 0, cmdUnsubscribe, "pubsub"),
		newCmd("punsubscribe", -1, f, 0, 0, 0, cmdUnsubscribe, "pubsub"),
		newCmd("ssubscribe", -2, f, 1, -1, 1, cmdSubscribe, "pubsub"),
		newCmd("sunsubscribe", -1, f, 1, -1, 1, cmdUnsubscribe, "pubsub"),
		newCmd("publish", 3, FlagPubSub|FlagLoading|FlagStale|FlagFast|FlagMayReplicate, 0, 0, 0, cmdPublish, "pubsub"),
		newCmd("spublish", 3, FlagPubSub|FlagLoading|FlagStale|FlagFast|FlagMayReplicate, 1, 1, 1, cmdSPublish, "pubsub"),
		newCmd("pubsub", -2, 0, 0, 0, 0, cmdPubsub, "pubsub").withSubs(
			sub("channels", -2, FlagPubSub|FlagLoading|FlagStale), sub("numpat", 2, FlagPubSub|FlagLoading|FlagStale),
			sub("numsub", -2, FlagPubSub|FlagLoading|FlagStale), sub("shardchannels", -2, FlagPubSub|FlagLoading|FlagStale),
			sub("shardnumsub", -2, FlagPubSub|FlagLoading|FlagStale), sub("help", 2, FlagLoading|FlagStale)),
	}
}
