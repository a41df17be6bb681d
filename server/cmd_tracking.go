package server

// CLIENT REPLY, TRACKING, CACHING, GETREDIR and TRACKINGINFO.

import (
	"slices"
	"sort"
	"strings"
)

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
