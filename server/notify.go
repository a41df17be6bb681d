package server

import (
	"strconv"

	"github.com/redline-dev/redline/server/config"
)

// Keyspace notifications as Redis 7.0 (notify.c): a command that changes a
// key calls c.notify with the event's class and Redis's event name, and
// when notify-keyspace-events enables the class (and K or E) the server
// publishes "<event>" on __keyspace@<db>__:<key> and "<key>" on
// __keyevent@<db>__:<event> to this node's subscribers only: as in Redis,
// notifications are neither propagated to replicas nor sent over the
// cluster bus. Handlers call it where Redis's handlers call
// notifyKeyspaceEvent, after the change and before the reply, so one
// command's events come in Redis's order.
//
// Classes (config.Notify*): g generic, $ string, l list, s set, h hash,
// z sorted set, t stream, x expired, e evicted, m key miss, n new key.

// Event classes, named for the handlers that use them.
const (
	notifyGeneric = config.NotifyGeneric
	notifyString  = config.NotifyString
	notifyList    = config.NotifyList
	notifySet     = config.NotifySet
	notifyHash    = config.NotifyHash
	notifyZSet    = config.NotifyZSet
	notifyExpired = config.NotifyExpired
	notifyEvicted = config.NotifyEvicted
	notifyStream  = config.NotifyStream
	notifyKeyMiss = config.NotifyKeyMiss
	notifyNew     = config.NotifyNew
)

// notify publishes event on key of c's database if its class is enabled:
// with notifications off (the default) it costs one test.
func (c *Client) notify(class int, event string, key []byte) {
	if c.s.cfg.NotifyKeyspaceEvents&class != 0 {
		c.s.publishKeyspaceEvent(c.db, event, key)
	}
}

// notifyIn is notify for a database other than the client's (MOVE, COPY
// DB, expiry and eviction, which have no client).
func (s *Server) notifyIn(db, class int, event string, key []byte) {
	if s.cfg.NotifyKeyspaceEvents&class != 0 {
		s.publishKeyspaceEvent(db, event, key)
	}
}

func (s *Server) publishKeyspaceEvent(db int, event string, key []byte) {
	if s.ps == nil || (len(s.ps.channels) == 0 && len(s.ps.patterns) == 0) {
		return // nobody could receive it: skip building the channels
	}
	flags := s.cfg.NotifyKeyspaceEvents
	prefix := func(kind string) []byte {
		ch := make([]byte, 0, len(kind)+8+len(key)+len(event))
		ch = append(ch, kind...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		return append(ch, "__:"...)
	}
	if flags&config.NotifyKeyspace != 0 {
		s.publishLocal(append(prefix("__keyspace@"), key...), []byte(event), false)
	}
	if flags&config.NotifyKeyevent != 0 {
		s.publishLocal(append(prefix("__keyevent@"), event...), key, false)
	}
}

// notifyPop is the event of elements leaving the head or tail of a list.
func (c *Client) notifyPop(key []byte, front bool) {
	if front {
		c.notify(notifyList, "lpop", key)
	} else {
		c.notify(notifyList, "rpop", key)
	}
}

// notifyZPop is the event of ZPOPMIN/ZPOPMAX and their blocking forms.
func (c *Client) notifyZPop(key []byte, min bool) {
	if min {
		c.notify(notifyZSet, "zpopmin", key)
	} else {
		c.notify(notifyZSet, "zpopmax", key)
	}
}

// notifyMiss is the keymiss event of a read that found no key (Redis's
// lookupKeyRead): every read command's, and those of the write commands
// that read their source keys that way; lookupKeyWrite sends none.
func (c *Client) notifyMiss(key []byte) {
	if c.s.cfg.NotifyKeyspaceEvents&notifyKeyMiss == 0 || c.cmd == nil {
		return
	}
	// Commands with subcommands (XGROUP, OBJECT, MEMORY) look keys up for
	// writing or without notification.
	if len(c.cmd.Subcommands) == 0 && (c.cmd.Flags&FlagWrite == 0 || readLookupWrites[c.cmd.Name]) {
		c.s.publishKeyspaceEvent(c.db, "keymiss", key)
	}
}

// readLookupWrites are the write commands whose lookups are Redis's
// lookupKeyRead (t_string.c getGenericCommand, the *STORE commands'
// sources, COPY, PFMERGE, BITOP).
var readLookupWrites = map[string]bool{
	"getdel": true, "getex": true, "getset": true, "set": true, "sort": true, "copy": true,
	"sinterstore": true, "sunionstore": true, "sdiffstore": true,
	"zunionstore": true, "zinterstore": true, "zdiffstore": true, "zrangestore": true,
	"pfmerge": true, "bitop": true, "georadius": true, "georadiusbymember": true, "geosearchstore": true,
}
