package cluster

// Hostnames and preferred endpoints (Redis 7.0's cluster-announce-hostname
// and cluster-preferred-endpoint-type).
//
// A node announces its hostname in every PING, PONG and MEET it sends (the
// hostname ping extension of Redis); a receiver sets the sender's hostname
// from each such message of a known sender, and clears it when the message
// has none. The hostname is saved in nodes.conf as ip:port@cport,hostname,
// as Redis does.

// endpoint is getPreferredEndpoint: what clients are told to connect to.
func (c *Config) endpoint(ip, hostname string) string {
	switch c.PreferredEndpoint {
	case "hostname":
		if hostname == "" {
			return "?"
		}
		return hostname
	case "unknown-endpoint":
		return ""
	}
	return ip
}

// updateHostname is updateAnnouncedHostname for a sender's PING/PONG/MEET.
func (n *Node) updateHostname(p *peer, hostname string) {
	if p == nil || p == n.self || p.hostname == hostname {
		return
	}
	p.hostname = hostname
	n.todo |= todoSaveConfig | todoView
}

// slotNodeReply is a node of a CLUSTER SLOTS entry (addNodeToNodeReply):
// the preferred endpoint (null for unknown-endpoint), the port, the id and
// a map of the networking metadata that is not the preferred endpoint.
func (n *Node) slotNodeReply(sn SlotNode) []any {
	var first any = sn.IP
	meta := Map{}
	switch n.cfg.PreferredEndpoint {
	case "hostname":
		first = n.cfg.endpoint(sn.IP, sn.Hostname)
		meta = append(meta, "ip", sn.IP)
	case "unknown-endpoint":
		first = nil
		meta = append(meta, "ip", sn.IP)
		if sn.Hostname != "" {
			meta = append(meta, "hostname", sn.Hostname)
		}
	default:
		if sn.Hostname != "" {
			meta = append(meta, "hostname", sn.Hostname)
		}
	}
	return []any{first, int64(sn.Port), sn.ID, meta}
}
