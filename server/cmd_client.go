// The CLIENT command (Redis networking.c, tracking.c): the connection
// as its client sees it, kills and pauses, and client-side caching
// (REPLY, TRACKING, CACHING, GETREDIR, TRACKINGINFO).

package server

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/acl"
)

func cmdClient(c *Client, argv [][]byte) {
	s := c.s
	c.lastCmd = "client|" + strings.ToLower(string(argv[1]))
	switch strings.ToUpper(string(argv[1])) {
	case "ID":
		c.Int(c.id)
	case "SETNAME":
		if len(argv) != 3 {
			c.Error("ERR wrong number of arguments for 'client|setname' command")
			return
		}
		if !validClientName(argv[2]) {
			c.Error("ERR Client names cannot contain spaces, newlines or special characters.")
			return
		}
		c.name = string(argv[2])
		c.OK()
	case "GETNAME":
		if c.name == "" {
			c.Null()
		} else {
			c.BulkString(c.name)
		}
	case "INFO":
		c.Verbatim(c.selfInfoLine(time.Now(), argv) + "\n")
	case "LIST":
		// CLIENT LIST [TYPE type | ID id [id ...]], as Redis 7.0 parses it.
		var ids map[int64]bool
		typ := ""
		switch {
		case len(argv) == 4 && eq(argv[2], "type"):
			typ = strings.ToLower(string(argv[3]))
			if typ == "slave" {
				typ = "replica"
			}
			switch typ {
			case "normal", "master", "replica", "pubsub":
			default:
				c.Error("ERR Unknown client type '" + cstr(argv[3]) + "'")
				return
			}
		case len(argv) > 3 && eq(argv[2], "id"):
			ids = map[int64]bool{}
			for _, a := range argv[3:] {
				n, ok := parseInt(a)
				if !ok {
					c.Error("ERR Invalid client ID")
					return
				}
				ids[n] = true
			}
		case len(argv) != 2:
			c.Error(ErrSyntax)
			return
		}
		var list []*Client
		for _, t := range s.clientList() {
			if (ids == nil || ids[t.id]) && (typ == "" || clientType(t) == typ) {
				list = append(list, t)
			}
		}
		sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
		var b strings.Builder
		now := time.Now()
		for _, t := range list {
			if t == c {
				b.WriteString(c.selfInfoLine(now, argv))
			} else {
				b.WriteString(t.infoLine(now))
			}
			b.WriteByte('\n')
		}
		c.Verbatim(b.String())
	case "KILL":
		cmdClientKill(c, argv)
	case "PAUSE":
		if len(argv) != 3 && len(argv) != 4 {
			c.Error("ERR wrong number of arguments for 'client|pause' command")
			return
		}
		ms, ok := parseInt(argv[2])
		if !ok {
			c.Error("ERR timeout is not an integer or out of range")
			return
		}
		if ms < 0 {
			c.Error("ERR timeout is negative")
			return
		}
		all := true
		if len(argv) == 4 {
			switch {
			case eq(argv[3], "write"):
				all = false
			case eq(argv[3], "all"):
			default:
				c.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
				return
			}
		}
		end := time.Now().Add(time.Duration(ms) * time.Millisecond)
		if end.After(s.pauseEnd) || s.pauseAll != all {
			s.pauseEnd = end
		}
		s.pauseAll = all
		s.expirePaused = true
		s.applyExpireMode()
		c.OK()
	case "UNPAUSE":
		s.unpause()
		c.OK()
	case "UNBLOCK":
		cmdClientUnblock(c, argv)
	case "NO-EVICT":
		// Accepted and kept nowhere: the reference server has no client
		// eviction (maxmemory-clients).
		if len(argv) != 3 {
			c.Error("ERR wrong number of arguments for 'client|no-evict' command")
			return
		}
		if !eq(argv[2], "on") && !eq(argv[2], "off") {
			c.Error(ErrSyntax)
			return
		}
		c.OK()
	case "REPLY":
		cmdClientReply(c, argv)
	case "TRACKING":
		cmdClientTracking(c, argv)
	case "CACHING":
		cmdClientCaching(c, argv)
	case "GETREDIR":
		cmdClientGetredir(c)
	case "TRACKINGINFO":
		cmdClientTrackingInfo(c)
	case "HELP":
		helpReply(c, clientHelp...)
	default:
		c.Error("ERR unknown subcommand '\" + trunc(argv[1], 128) + \"'. Try CLIENT HELP.")
	}
}

func cmdClientKill(c *Client, argv [][]byte) {
	s := c.s
	kill := func(t *Client) {
		t.killed.Store(true)
		if t.conn != nil {
			t.conn.Close()
		}
		s.replicaKilled(t)
	}
	if len(argv) == 3 {
		for _, t := range s.clientList() {
			if t.addr == string(argv[2]) {
				kill(t)
				c.OK()
				return
			}
		}
		if s.killMasterLink(string(argv[2])) {
			c.OK()
			return
		}
		c.Error("ERR No such client")
		return
	}
	if len(argv)%2 != 0 {
		c.Error(ErrSyntax)
		return
	}
	var id int64
	var addr, laddr, typ string
	var user *acl.User
	skipme := true
	for i := 2; i < len(argv); i += 2 {
		v := string(argv[i+1])
		switch strings.ToUpper(string(argv[i])) {
		case "ID":
			n, ok := parseInt(argv[i+1])
			if !ok || n <= 0 {
				c.Error("ERR client-id should be greater than 0")
				return
			}
			id = n
		case "ADDR":
			addr = v
		case "LADDR":
			laddr = v
		case "SKIPME":
			switch strings.ToLower(v) {
			case "yes":
				skipme = true
			case "no":
				skipme = false
			default:
				c.Error(ErrSyntax)
				return
			}
		case "TYPE":
			typ = strings.ToLower(v)
			if typ == "slave" {
				typ = "replica"
			}
			switch typ {
			case "normal", "master", "replica", "pubsub":
			default:
				c.Error("ERR Unknown client type '" + v + "'")
				return
			}
		case "USER":
			if user = s.acl.User(v); user == nil {
				c.Error("ERR No such user '" + v + "'")
				return
			}
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	var n int64
	for _, t := range s.clientList() {
		if (id != 0 && t.id != id) || (addr != "" && t.addr != addr) || (laddr != "" && t.laddr != laddr) || (typ != "" && clientType(t) != typ) || (user != nil && t.user != user) {
			continue
		}
		if t == c && skipme {
			continue
		}
		if t == c {
			c.closeNow = true // after this reply, as Redis's CLIENT_CLOSE_AFTER_REPLY
		} else {
			kill(t)
		}
		n++
	}
	if typ == "master" && id == 0 && addr == "" && laddr == "" && s.killMasterLink("") {
		n++
	}
	c.Int(n)
}

// clientHelp is CLIENT HELP of Redis 7.0.15.
var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
	"HELP",
	"    Prints this help.",
}

func cmdClientReply(c *Client, argv [][]byte) {
	switch strings.ToLower(string(argv[2])) {
	case "on":
		c.replyMode = replyOn
		c.OK()
	case "off":
		c.replyMode = replyOff
	case "skip":
		if c.replyMode != replyOff {
			c.replyMode = replySkipNext
		}
	default:
		c.Error(ErrSyntax)
	}
}

func cmdClientTracking(c *Client, argv [][]byte) {
	s := c.s
	var redir int64
	var bcast, optin, optout, noloop bool
	var prefixes []string
	for j := 3; j < len(argv); j++ {
		more := j+1 < len(argv)
		switch strings.ToLower(string(argv[j])) {
		case "redirect":
			if !more {
				c.Error(ErrSyntax)
				return
			}
			j++
			if redir != 0 {
				c.Error("ERR A client can only redirect to a single other client")
				return
			}
			n, ok := parseInt(argv[j])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			if s.clientByID(n) == nil {
				c.Error("ERR The client ID you want redirect to does not exist")
				return
			}
			redir = n
		case "bcast":
			bcast = true
		case "optin":
			optin = true
		case "optout":
			optout = true
		case "noloop":
			noloop = true
		case "prefix":
			if !more {
				c.Error(ErrSyntax)
				return
			}
			j++
			prefixes = append(prefixes, string(argv[j]))
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	t := s.tracking()
	cur := t.clients[c]
	switch strings.ToLower(string(argv[2])) {
	case "on":
		if !bcast && len(prefixes) > 0 {
			c.Error("ERR PREFIX option requires BCAST mode to be enabled")
			return
		}
		if cur != nil && cur.bcast != bcast {
			c.Error("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		}
		if bcast && (optin || optout) {
			c.Error("ERR OPTIN and OPTOUT are not compatible with BCAST")
			return
		}
		if optin && optout {
			c.Error("ERR You can't specify both OPTIN mode and OPTOUT mode")
			return
		}
		if cur != nil && ((optin && cur.optout) || (optout && cur.optin)) {
			c.Error("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		}
		if bcast {
			for i, p := range prefixes {
				if cur != nil {
					for _, q := range cur.prefixes {
						if overlaps(q, p) {
							c.Error("ERR Prefix '" + p + "' overlaps with an existing prefix '" + q + "'. Prefixes for a single client must not overlap.")
							return
						}
					}
				}
				for _, q := range prefixes[i+1:] {
					if overlaps(p, q) {
						c.Error("ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap.")
						return
					}
				}
			}
		}
		if cur == nil {
			cur = &clientTracking{}
			t.clients[c] = cur
		}
		cur.redirect, cur.broken = redir, false
		cur.noloop = noloop
		cur.bcast = bcast
		cur.optin, cur.optout = optin, optout
		if bcast {
			if len(prefixes) == 0 && len(cur.prefixes) == 0 {
				prefixes = []string{""}
			}
			for _, p := range prefixes {
				if !slices.Contains(cur.prefixes, p) {
					cur.prefixes = append(cur.prefixes, p)
				}
				m := t.prefixes[p]
				if m == nil {
					m = map[*Client]struct{}{}
					t.prefixes[p] = m
				}
				m[c] = struct{}{}
			}
		}
		c.subscriberOf() // a writer for pushes between commands
	case "off":
		s.trackingOff(c)
	default:
		c.Error(ErrSyntax)
		return
	}
	c.OK()
}

func cmdClientCaching(c *Client, argv [][]byte) {
	var ct *clientTracking
	if c.s.trk != nil {
		ct = c.s.trk.clients[c]
	}
	if ct == nil {
		c.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch strings.ToLower(string(argv[2])) {
	case "yes":
		if !ct.optin {
			c.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case "no":
		if !ct.optout {
			c.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		c.Error(ErrSyntax)
		return
	}
	ct.caching = true
	c.OK()
}

func cmdClientGetredir(c *Client) {
	if c.s.trk != nil {
		if ct := c.s.trk.clients[c]; ct != nil {
			c.Int(ct.redirect)
			return
		}
	}
	c.Int(-1)
}

func cmdClientTrackingInfo(c *Client) {
	var ct *clientTracking
	if c.s.trk != nil {
		ct = c.s.trk.clients[c]
	}
	c.Map(3)
	c.BulkString("flags")
	var flags []string
	redir := int64(-1)
	if ct == nil {
		flags = []string{"off"}
	} else {
		flags = []string{"on"}
		if ct.bcast {
			flags = append(flags, "bcast")
		}
		if ct.optin {
			flags = append(flags, "optin")
			if ct.caching {
				flags = append(flags, "caching-yes")
			}
		}
		if ct.optout {
			flags = append(flags, "optout")
			if ct.caching {
				flags = append(flags, "caching-no")
			}
		}
		if ct.noloop {
			flags = append(flags, "noloop")
		}
		if ct.broken {
			flags = append(flags, "broken_redirect")
		}
		redir = ct.redirect
	}
	c.SetHeader(len(flags))
	for _, f := range flags {
		c.BulkString(f)
	}
	c.BulkString("redirect")
	c.Int(redir)
	c.BulkString("prefixes")
	var ps []string
	if ct != nil {
		ps = append(ps, ct.prefixes...)
		sort.Strings(ps)
	}
	c.Array(len(ps))
	for _, p := range ps {
		c.BulkString(p)
	}
}

// CLIENT UNBLOCK client-id [TIMEOUT|ERROR]
func cmdClientUnblock(c *Client, argv [][]byte) {
	if len(argv) > 4 {
		c.Error("ERR unknown subcommand or wrong number of arguments for 'unblock'. Try CLIENT HELP.")
		return
	}
	withError := false
	if len(argv) == 4 {
		switch {
		case eq(argv[3], "timeout"):
		case eq(argv[3], "error"):
			withError = true
		default:
			c.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if c.s.unblockClient(id, withError) {
		c.Int(1)
	} else {
		c.Int(0)
	}
}

// clientCommands is the CLIENT family's spec.
func clientCommands() []*Command {
	return []*Command{
		newCmd("client", -2, 0, 0, 0, 0, cmdClient, "connection").withSubs(
			sub("id", 2, FlagNoScript|FlagLoading|FlagStale), sub("setname", 3, FlagNoScript|FlagLoading|FlagStale),
			sub("getname", 2, FlagNoScript|FlagLoading|FlagStale), sub("list", -2, FlagAdmin|FlagNoScript|FlagLoading|FlagStale),
			sub("kill", -3, FlagAdmin|FlagNoScript|FlagLoading|FlagStale), sub("pause", -3, FlagAdmin|FlagNoScript|FlagLoading|FlagStale),
			sub("unpause", 2, FlagAdmin|FlagNoScript|FlagLoading|FlagStale),
			sub("info", 2, FlagNoScript|FlagLoading|FlagStale), sub("no-evict", 3, FlagAdmin|FlagNoScript|FlagLoading|FlagStale),
			sub("reply", 3, FlagNoScript|FlagLoading|FlagStale), sub("help", 2, FlagLoading|FlagStale),
			sub("tracking", -3, FlagNoScript|FlagLoading|FlagStale), sub("caching", 3, FlagNoScript|FlagLoading|FlagStale),
			sub("getredir", 2, FlagNoScript|FlagLoading|FlagStale), sub("trackinginfo", 2, FlagNoScript|FlagLoading|FlagStale),
			sub("unblock", -3, FlagAdmin|FlagNoScript|FlagLoading|FlagStale)),
	}
}
