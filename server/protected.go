package server

import (
	"net"
	"net/netip"
	"sync/atomic"
)

// Protected mode (Redis 7.0's clientAcceptHandler): with protected-mode yes
// and a default user that needs no password, a connection from anywhere
// but 127.0.0.1, ::1 or a unix socket is answered deniedReply and closed
// before it can send a command, and counts in rejected_connections (not in
// total_connections_received). Redis 7.0 applies it whatever bind says:
// redis-server 7.0.15 started with --bind 192.0.2.2 127.0.0.1 denies a
// client of 192.0.2.2 too (the reply's fourth remedy no longer names a
// bind address, as Redis 6's did). Clusters redline creates pass
// --protected-mode no (docker/, kube/) or bind 127.0.0.1.

// deniedReply is redis-server 7.0.15's reply, byte for byte ("Setup a an"
// included).
const deniedReply = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set " +
	"for the default user. In this mode connections are only accepted from the loopback interface. If you" +
	" want to connect from external computers to Redis you may adopt one of the following solutions: 1) " +
	"Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback " +
	"interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis " +
	"is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change " +
	"permanent. 2) Alternatively you can just disable the protected mode by editing the Redis " +
	"configuration file, and setting the protected mode option to 'no', and then restarting the server. " +
	"3) If you started the server manually just for testing, restart it with the '--protected-mode no' " +
	"option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of" +
	" the above things in order for the server to start accepting connections from the outside." +
	"\r\n"

// isLocalAddr is Redis 7.0's islocalClient for a peer address: a unix
// socket, or exactly 127.0.0.1 or ::1 (Redis compares the address's text,
// so 127.0.0.2 is not local). An address that is not IP:port (a unix
// socket's, an internal client's) is local.
func isLocalAddr(addr string) bool {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return true
	}
	ip := ap.Addr().Unmap()
	return ip == netip.AddrFrom4([4]byte{127, 0, 0, 1}) || ip == netip.IPv6Loopback()
}

// refreshProtected recomputes, lock held, whether protected mode turns
// non-local connections away: protected-mode yes and a default user with
// nopass (on or off, as Redis checks only the flag). The accept loop reads
// the result without the server lock; New, CONFIG SET of protected-mode or
// requirepass, and every ACL subcommand call this.
func (s *Server) refreshProtected() {
	s.protectedDeny.Store(s.configValue("protected-mode") == "yes" && s.acl.Default.NoPass())
}

// denyProtected answers and closes conn if protected mode refuses it, and
// reports whether it did.
func (s *Server) denyProtected(conn net.Conn) bool {
	if !s.protectedDeny.Load() || isLocalAddr(conn.RemoteAddr().String()) {
		return false
	}
	atomic.AddInt64(&s.stats.rejectedConns, 1)
	conn.Write([]byte(deniedReply))
	conn.Close()
	return true
}
