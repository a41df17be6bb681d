package server

import (
	"bufio"
	"net"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/resp"
)

// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw]
// [AUTH2 user pw] [KEYS k...]: DUMP payloads sent as RESTORE-ASKING (cluster
// mode) or RESTORE over a connection cached per target, keys deleted locally
// once the target accepted them (unless COPY). Like Redis, it runs with the
// server lock held: the node blocks for the round trip.

func (m *migrateConns) get(addr string, timeout time.Duration) (*migConn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.conns[addr]; c != nil {
		if time.Since(c.lastUs) < 10*time.Second {
			c.lastUs = time.Now()
			return c, nil
		}
		c.conn.Close()
		delete(m.conns, addr)
	}
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c := &migConn{conn: nc, rd: bufio.NewReader(nc), db: -1, lastUs: time.Now()}
	if m.conns == nil {
		m.conns = map[string]*migConn{}
	}
	m.conns[addr] = c
	return c, nil
}

// closeIdle closes connections unused for 10 seconds (Redis's
// MIGRATE_SOCKET_CACHE_TTL), from the cron.
func (m *migrateConns) closeIdle() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for a, c := range m.conns {
		if time.Since(c.lastUs) >= 10*time.Second {
			c.conn.Close()
			delete(m.conns, a)
		}
	}
}

// cached is INFO's migrate_cached_sockets.
func (m *migrateConns) cached() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.conns)
}

func (m *migrateConns) drop(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.conns[addr]; c != nil {
		c.conn.Close()
		delete(m.conns, addr)
	}
}

func (m *migrateConns) closeAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for a, c := range m.conns {
		c.conn.Close()
		delete(m.conns, a)
	}
}

// migrateKeys gives MIGRATE's key positions (argv[3], or after KEYS when it
// is empty).
func migrateKeys(argv [][]byte) []int {
	if len(argv) > 3 && len(argv[3]) == 0 {
		for i := 6; i < len(argv); i++ {
			// AUTH's password and AUTH2's user and password are never the
			// KEYS keyword (migrateGetKeys).
			if strings.EqualFold(string(argv[i]), "auth") {
				i++
			} else if strings.EqualFold(string(argv[i]), "auth2") {
				i += 2
			} else if strings.EqualFold(string(argv[i]), "keys") {
				var out []int
				for j := i + 1; j < len(argv); j++ {
					out = append(out, j)
				}
				return out
			}
		}
		return nil
	}
	if len(argv) > 3 {
		return []int{3}
	}
	return nil
}

// readReply reads one RESP reply line (status, error, integer); bulk and
// array replies are not expected from AUTH/SELECT/RESTORE.
func readReply(rd *bufio.Reader) (string, error) {
	l, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(l, "\r\n"), nil
}

var _ = resp.AppendArray
