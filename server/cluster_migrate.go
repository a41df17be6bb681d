package server

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redline-dev/redline/server/resp"
	"github.com/redline-dev/redline/server/store"
)

// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw]
// [AUTH2 user pw] [KEYS k...]: DUMP payloads sent as RESTORE-ASKING (cluster
// mode) or RESTORE over a connection cached per target, keys deleted locally
// once the target accepted them (unless COPY). Like Redis, it runs with the
// server lock held: the node blocks for the round trip.

type migConn struct {
	conn   net.Conn
	rd     *bufio.Reader
	db     int64 // last SELECTed db, -1 unknown
	lastUs time.Time
}

type migrateConns struct {
	mu    sync.Mutex
	conns map[string]*migConn
}

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
			if strings.EqualFold(string(argv[i]), "keys") {
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

func (e *ext) cmdMigrate(c *Client, argv [][]byte) {
	s := e.s
	var copyKeys, replace bool
	var user, pass string
	auth := false
	firstKey, numKeys := 3, 1
	for i := 6; i < len(argv); i++ {
		more := len(argv) - i - 1
		switch strings.ToLower(string(argv[i])) {
		case "copy":
			copyKeys = true
		case "replace":
			replace = true
		case "auth":
			if more < 1 {
				c.Error(ErrSyntax)
				return
			}
			auth, pass = true, string(argv[i+1])
			i++
		case "auth2":
			if more < 2 {
				c.Error(ErrSyntax)
				return
			}
			auth, user, pass = true, string(argv[i+1]), string(argv[i+2])
			i += 2
		case "keys":
			if len(argv[3]) != 0 {
				c.Error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
				return
			}
			firstKey = i + 1
			numKeys = len(argv) - i - 1
			i = len(argv)
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	port, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	dbid, ok := parseInt(argv[4])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	tmo, ok := parseInt(argv[5])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if tmo <= 0 {
		tmo = 1000
	}
	timeout := time.Duration(tmo) * time.Millisecond
	db := c.kv()
	now := db.Tick()
	type item struct {
		key []byte
		o   *store.Object
	}
	var items []item
	for j := firstKey; j < firstKey+numKeys && j < len(argv); j++ {
		if o := db.Get(argv[j]); o != nil {
			items = append(items, item{argv[j], o})
		}
	}
	if len(items) == 0 {
		c.Simple("NOKEY")
		return
	}
	addr := net.JoinHostPort(string(argv[1]), strconv.FormatInt(port, 10))
	mc, err := e.mig.get(addr, timeout)
	if err != nil {
		c.Error("IOERR error or timeout connecting to the client")
		return
	}
	restore := "RESTORE"
	if s.cfg.ClusterEnabled {
		restore = "RESTORE-ASKING"
	}
	var b []byte
	expect := 0
	if auth {
		if user != "" {
			b = appendCommand(b, [][]byte{[]byte("AUTH"), []byte(user), []byte(pass)})
		} else {
			b = appendCommand(b, [][]byte{[]byte("AUTH"), []byte(pass)})
		}
		expect++
	}
	selecting := mc.db != dbid
	if selecting {
		b = appendCommand(b, [][]byte{[]byte("SELECT"), itob(dbid)})
		expect++
	}
	for _, it := range items {
		ttl := int64(0)
		if it.o.ExpireAt != 0 {
			ttl = it.o.ExpireAt - now
			if ttl < 1 {
				ttl = 1
			}
		}
		args := [][]byte{[]byte(restore), it.key, itob(ttl), store.Dump(it.o)}
		if replace {
			args = append(args, []byte("REPLACE"))
		}
		b = appendCommand(b, args)
	}
	mc.conn.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := mc.conn.Write(b); err != nil {
		e.mig.drop(addr)
		c.Error("IOERR error or timeout writing to target instance")
		return
	}
	mc.conn.SetReadDeadline(time.Now().Add(timeout))
	for i := 0; i < expect; i++ {
		l, err := readReply(mc.rd)
		if err != nil {
			e.mig.drop(addr)
			c.Error("IOERR error or timeout reading to target instance")
			return
		}
		if strings.HasPrefix(l, "-") {
			// Read the rest so the connection stays in sync, then fail.
			for j := i + 1; j < expect+len(items); j++ {
				readReply(mc.rd)
			}
			e.mig.drop(addr)
			c.Error("ERR Target instance replied with error: " + l[1:])
			return
		}
	}
	if selecting {
		mc.db = dbid
	}
	var errMsg string
	var deleted [][]byte
	for _, it := range items {
		l, err := readReply(mc.rd)
		if err != nil {
			e.mig.drop(addr)
			errMsg = "IOERR error or timeout reading to target instance"
			break
		}
		if strings.HasPrefix(l, "-") {
			if errMsg == "" {
				errMsg = "ERR Target instance replied with error: " + l[1:]
			}
			continue
		}
		if !copyKeys {
			if o := db.Get(it.key); o != nil {
				db.Remove(o)
				s.dirty++
				deleted = append(deleted, it.key)
			}
		}
	}
	if len(deleted) > 0 {
		c.Propagate(append([][]byte{[]byte("DEL")}, deleted...)...)
	} else {
		c.Propagate()
	}
	if errMsg != "" {
		c.Error(errMsg)
		return
	}
	c.OK()
}

var _ = resp.AppendArray
