package server

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/store"
)

// cmdDebug implements the DEBUG subcommands Redis's test suites call, with
// Redis's semantics where they matter to a test, and OK for the knobs of
// Redis internals this server does not have (quicklist and listpack sizes,
// reply buffers, the cron pause).
func cmdDebug(c *Client, argv [][]byte) {
	s := c.s
	switch strings.ToUpper(string(argv[1])) {
	case "SLEEP":
		if len(argv) != 3 {
			c.Error(ErrSyntax)
			return
		}
		f, ok := parseFloat(argv[2])
		if !ok {
			c.Error(ErrNotFloat)
			return
		}
		// With the server lock held, as Redis sleeps on its one thread:
		// no client, no cron and no bus message is served meanwhile.
		time.Sleep(time.Duration(f * float64(time.Second)))
		c.OK()
	case "SET-ACTIVE-EXPIRE":
		if len(argv) != 3 {
			c.Error(ErrSyntax)
			return
		}
		s.debug.noActiveExpire = string(argv[2]) == "0"
		c.OK()
	case "DROP-CLUSTER-PACKET-FILTER":
		if len(argv) != 3 {
			c.Error(ErrSyntax)
			return
		}
		t, ok := parseInt(argv[2])
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		if s.cl.node != nil {
			s.cl.node.DropPackets(int(t))
		}
		c.OK()
	case "DIGEST":
		if len(argv) != 2 {
			c.Error(ErrSyntax)
			return
		}
		c.Simple(hex.EncodeToString(s.datasetDigest()))
	case "DIGEST-VALUE":
		c.Array(len(argv) - 2)
		for _, k := range argv[2:] {
			d := make([]byte, 20)
			if o := c.kv().Get(k); o != nil {
				sum := sha1.Sum(store.Dump(o))
				d = sum[:]
			}
			c.Simple(hex.EncodeToString(d))
		}
	case "POPULATE":
		debugPopulate(c, argv)
	case "OBJECT":
		if len(argv) != 3 {
			c.Error(ErrSyntax)
			return
		}
		// Redis looks the key up in the dict itself: an expired key not
		// yet collected is still there (unit/scripting "Script delete the
		// expired key" relies on it).
		o := c.kv().Raw(string(argv[2]))
		if o == nil {
			c.Error(ErrNoKey)
			return
		}
		c.Simple(fmt.Sprintf("Value at:0x0 refcount:1 encoding:%s serializedlength:%d lru:0 lru_seconds_idle:0", o.Encoding(), o.Len()))
	case "LOADAOF":
		if s.aof != nil {
			s.aof.flush(true)
		}
		c.OK()
	case "SET-DISABLE-DENY-SCRIPTS":
		if len(argv) != 3 {
			c.Error(ErrSyntax)
			return
		}
		n, _ := strconv.Atoi(string(argv[2])) // atoi, as Redis
		s.debug.allowDeniedInScripts = n != 0
		c.OK()
	case "RELOAD":
		debugReload(c, argv) // persist.go
	case "REPLYBUFFER":
		debugReplyBuffer(c, argv) // replybuf.go
	case "JMAP", "QUICKLIST-PACKED-THRESHOLD", "LISTPACK", "QUICKLIST",
		"PAUSE-CRON", "STRINGMATCH-LEN", "CHANGE-REPL-ID", "SET-SKIP-CHECKSUM-VALIDATION",
		"CONFIG-REWRITE-FORCE-ALL", "LOG":
		if strings.EqualFold(string(argv[1]), "log") && len(argv) == 3 {
			s.Logf('#', "DEBUG LOG: %s", argv[2])
		}
		c.OK()
	case "PROTOCOL":
		if len(argv) != 3 {
			c.Error(ErrSyntax)
			return
		}
		debugProtocol(c, strings.ToLower(string(argv[2])))
	case "HELP":
		help := []string{"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"DIGEST", "DIGEST-VALUE <key> [<key> ...]", "DROP-CLUSTER-PACKET-FILTER <packet-type>",
			"LOADAOF", "OBJECT <key>", "POPULATE <count> [<prefix>] [<size>]", "PROTOCOL <type>", "RELOAD",
			"SET-ACTIVE-EXPIRE <0|1>", "SLEEP <seconds>"}
		c.Array(len(help))
		for _, h := range help {
			c.Simple(h)
		}
	default:
		c.Error("ERR unknown subcommand '\" + trunc(argv[1], 128) + \"'. Try DEBUG HELP.")
	}
}

// datasetDigest is DEBUG DIGEST: 20 zero bytes for an empty dataset, else
// a digest of every database's keys, values and expiry times that does not
// depend on the order keys are stored in, so a replica that holds its
// primary's data has its primary's digest.
func (s *Server) datasetDigest() []byte {
	var digest [20]byte
	for i, db := range s.dbs {
		if db.Len() == 0 {
			continue
		}
		var dbDigest [20]byte
		db.Each(func(o *store.Object) bool {
			h := sha1.New()
			h.Write([]byte(o.Key()))
			h.Write(store.Dump(o))
			var exp [8]byte
			binary.LittleEndian.PutUint64(exp[:], uint64(o.ExpireAt))
			h.Write(exp[:])
			xorDigest(&dbDigest, h.Sum(nil))
			return true
		})
		h := sha1.New()
		h.Write([]byte(strconv.Itoa(i)))
		h.Write(dbDigest[:])
		xorDigest(&digest, h.Sum(nil))
	}
	return digest[:]
}

func xorDigest(d *[20]byte, b []byte) {
	for i := range d {
		d[i] ^= b[i]
	}
}

// debugPopulate is DEBUG POPULATE count [prefix] [size]: keys prefix:0 ..
// prefix:count-1 ("key" by default) holding "value:N", or that text cut or
// zero-padded to size bytes; existing keys are left alone. Like Redis it
// neither propagates nor checks slots.
func debugPopulate(c *Client, argv [][]byte) {
	if len(argv) < 3 || len(argv) > 5 {
		c.Error(ErrSyntax)
		return
	}
	n, ok := parseInt(argv[2])
	if !ok || n < 0 {
		c.Error("ERR value is out of range, must be positive")
		return
	}
	prefix := "key"
	if len(argv) >= 4 {
		prefix = string(argv[3])
	}
	var size int64
	if len(argv) == 5 {
		if size, ok = parseInt(argv[4]); !ok || size < 0 {
			c.Error("ERR value is out of range, must be positive")
			return
		}
	}
	db := c.kv()
	for j := int64(0); j < n; j++ {
		key := []byte(prefix + ":" + strconv.FormatInt(j, 10))
		if db.Get(key) != nil {
			continue
		}
		val := []byte("value:" + strconv.FormatInt(j, 10))
		if size > 0 {
			v := make([]byte, size)
			copy(v, val)
			val = v
		}
		o := store.NewObject(store.KindString)
		o.Str = val
		db.Add(key, o)
		c.s.touch(c.db, key)
	}
	c.OK()
}

// debugProtocol is DEBUG PROTOCOL <type>: one reply of each RESP3 type (the
// RESP2 fallback on a RESP2 connection).
func debugProtocol(c *Client, t string) {
	switch t {
	case "string":
		c.BulkString("Hello World")
	case "integer":
		c.Int(12345)
	case "double":
		c.Double(3.141)
	case "bignum":
		if c.proto == 3 {
			c.Raw([]byte("(1234567999999999999999999999999999999\r\n"))
		} else {
			c.BulkString("1234567999999999999999999999999999999")
		}
	case "null":
		c.Null()
	case "array":
		c.Array(3)
		for i := int64(0); i < 3; i++ {
			c.Int(i)
		}
	case "set":
		c.SetHeader(3)
		for i := int64(0); i < 3; i++ {
			c.Int(i)
		}
	case "map":
		c.Map(3)
		for i := int64(0); i < 3; i++ {
			c.Int(i)
			c.boolReply(i == 1)
		}
	case "attrib":
		if c.proto == 3 {
			c.Raw([]byte("|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"))
		}
		c.BulkString("Some real reply following the attribute")
	case "push":
		if c.proto < 3 {
			c.Error("ERR RESP2 is not supported by this command")
			return
		}
		c.Raw([]byte(">2\r\n$17\r\nserver-cpu-usage\r\n:42\r\n"))
		c.BulkString("Some real reply following the push reply")
	case "true":
		c.boolReply(true)
	case "false":
		c.boolReply(false)
	case "verbatim":
		c.Verbatim("This is a verbatim\nstring")
	default:
		c.Error("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

// debugCommands are DEBUG's spec.
func debugCommands() []*Command {
	return []*Command{
		newCmd("debug", -2, FlagAdmin|FlagNoScript|FlagLoading|FlagStale, 0, 0, 0, cmdDebug, "server").protected(),
	}
}
