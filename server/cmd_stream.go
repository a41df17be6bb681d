// Stream commands (Redis t_stream.c): XADD, XRANGE, XREVRANGE, XLEN, XDEL,
// XTRIM, XSETID, XREAD, XREADGROUP, XGROUP, XACK, XPENDING, XCLAIM,
// XAUTOCLAIM, XINFO.
//
// Writes propagate as Redis propagates them: XADD with the ID it generated
// and an approximate trim as '=' with the resulting length or first ID;
// XREADGROUP, XCLAIM and XAUTOCLAIM as XCLAIM ... FORCE JUSTID LASTID for
// each entry whose pending state changed, XGROUP SETID for a NOACK read
// and XGROUP CREATECONSUMER for a consumer a NOACK read created (several
// in one MULTI/EXEC).

package server

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/store"
)

const errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"

// strtoull parses as C's strtoull after Redis's string2ll fails: leading
// spaces, an optional sign (a '-' negates modulo 2^64), digits.
func strtoull(b []byte) (uint64, bool) {
	if v, ok := parseInt(b); ok {
		if v < 0 {
			return 0, false
		}
		return uint64(v), true
	}
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		d := b[i]
		if d < '0' || d > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-uint64(d-'0'))/10 {
			return 0, false
		}
		v = v*10 + uint64(d-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseStreamID is streamGenericParseIDOrReply. seqGiven, when not nil,
// allows the <ms>-* form and reports whether the sequence was given.
func parseStreamID(b []byte, missingSeq uint64, strict bool, seqGiven *bool) (store.StreamID, bool) {
	if len(b) > 127 {
		return store.StreamID{}, false
	}
	if len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		if strict {
			return store.StreamID{}, false
		}
		if seqGiven != nil {
			*seqGiven = true
		}
		if b[0] == '-' {
			return store.StreamID{}, true
		}
		return store.MaxStreamID, true
	}
	if seqGiven != nil {
		*seqGiven = true
	}
	// C string semantics: the text ends at a NUL byte.
	for i, ch := range b {
		if ch == 0 {
			b = b[:i]
			break
		}
	}
	dash := -1
	for i, ch := range b {
		if ch == '-' {
			dash = i
			break
		}
	}
	msPart := b
	if dash >= 0 {
		msPart = b[:dash]
	}
	ms, ok := strtoull(msPart)
	if !ok {
		return store.StreamID{}, false
	}
	seq := missingSeq
	if dash >= 0 {
		rest := b[dash+1:]
		if seqGiven != nil && len(rest) == 1 && rest[0] == '*' {
			seq = 0
			*seqGiven = false
		} else if seq, ok = strtoull(rest); !ok {
			return store.StreamID{}, false
		}
	}
	return store.StreamID{Ms: ms, Seq: seq}, true
}

func (c *Client) streamID(b []byte, missingSeq uint64, strict bool) (store.StreamID, bool) {
	id, ok := parseStreamID(b, missingSeq, strict, nil)
	if !ok {
		c.Error(errInvalidStreamID)
	}
	return id, ok
}

// intervalID parses a range bound with an optional '(' (exclusive).
func (c *Client) intervalID(b []byte, missingSeq uint64) (id store.StreamID, excl, ok bool) {
	if len(b) > 1 && b[0] == '(' {
		id, ok = c.streamID(b[1:], missingSeq, true)
		return id, true, ok
	}
	id, ok = c.streamID(b, missingSeq, false)
	return id, false, ok
}

func (c *Client) lookupStream(key []byte) (*store.Object, bool) {
	return c.lookup(key, store.KindStream)
}

type trimArgs struct {
	byLen, byID bool
	approx      bool
	maxlen      int64
	minid       store.StreamID
	limit       int64
	argIdx      int // the position of the MAXLEN/MINID argument
	noMkstream  bool
	idGiven     bool
	seqGiven    bool
	id          store.StreamID
}

// parseAddTrim is streamParseAddOrTrimArgsOrReply; it returns the position
// of XADD's ID argument, or -1 after replying with an error.
func parseAddTrim(c *Client, argv [][]byte, xadd bool, a *trimArgs) int {
	i := 2
	limitGiven := false
	for ; i < len(argv) && !a.idGiven; i++ {
		more := len(argv) - 1 - i
		opt := argv[i]
		if xadd && len(opt) == 1 && opt[0] == '*' {
			break
		}
		switch {
		case eq(opt, "maxlen") && more > 0, eq(opt, "minid") && more > 0:
			if a.byLen || a.byID {
				c.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return -1
			}
			a.approx = false
			next := argv[i+1]
			if more >= 2 && len(next) == 1 && next[0] == '~' {
				a.approx = true
				i++
			} else if more >= 2 && len(next) == 1 && next[0] == '=' {
				i++
			}
			if eq(opt, "maxlen") {
				v, ok := parseInt(argv[i+1])
				if !ok {
					c.Error(ErrNotInt)
					return -1
				}
				if v < 0 {
					c.Error("ERR The MAXLEN argument must be >= 0.")
					return -1
				}
				a.maxlen, a.byLen = v, true
			} else {
				id, ok := c.streamID(argv[i+1], 0, true)
				if !ok {
					return -1
				}
				a.minid, a.byID = id, true
			}
			i++
			a.argIdx = i
		case eq(opt, "limit") && more > 0:
			v, ok := parseInt(argv[i+1])
			if !ok {
				c.Error(ErrNotInt)
				return -1
			}
			if v < 0 {
				c.Error("ERR The LIMIT argument must be >= 0.")
				return -1
			}
			a.limit, limitGiven = v, true
			i++
		case xadd && eq(opt, "nomkstream"):
			a.noMkstream = true
		case xadd:
			id, ok := parseStreamID(opt, 0, true, &a.seqGiven)
			if !ok {
				c.Error(errInvalidStreamID)
				return -1
			}
			a.id, a.idGiven = id, true
		default:
			c.Error(ErrSyntax)
			return -1
		}
	}
	if a.limit != 0 && !a.byLen && !a.byID {
		c.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return -1
	}
	if a.idGiven {
		i-- // the loop stepped past the ID
	}
	if !xadd && !a.byLen && !a.byID {
		c.Error("ERR syntax error, XTRIM must be called with a trimming strategy")
		return -1
	}
	if c.mustObey() {
		a.limit = 0
	} else if limitGiven {
		if !a.approx {
			c.Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
			return -1
		}
	} else if a.approx {
		a.limit = 100 * int64(c.s.configInt("stream-node-max-entries", store.DefaultLimits.StreamNodeMaxEntries))
		if a.limit <= 0 {
			a.limit = 10000
		}
		if a.limit > 1000000 {
			a.limit = 1000000
		}
	} else {
		a.limit = 0
	}
	return i
}

// mustObey: the client applies its master's stream or the AOF (Redis's
// mustObeyClient).
func (c *Client) mustObey() bool {
	if c.s.loading {
		return true
	}
	return c.repl.master
}

func streamTrim(s *store.Stream, a *trimArgs) int64 {
	if !a.byLen && !a.byID {
		return 0
	}
	return s.Trim(a.byLen, a.maxlen, a.minid, a.approx, a.limit)
}

// trimPropArgv rewrites an approximate trim as '=' with the exact result.
func trimPropArgv(argv [][]byte, s *store.Stream, a *trimArgs) {
	argv[a.argIdx-1] = []byte("=")
	if a.byLen {
		argv[a.argIdx] = itob(int64(s.Len()))
	} else {
		first, _ := s.First()
		argv[a.argIdx] = streamIDBytes(first)
	}
}

func cmdXAdd(c *Client, argv [][]byte) {
	var a trimArgs
	idpos := parseAddTrim(c, argv, true, &a)
	if idpos < 0 {
		return
	}
	fieldPos := idpos + 1
	if len(argv)-fieldPos < 2 || (len(argv)-fieldPos)%2 == 1 {
		c.Error(ErrArity(c.cmd.Name))
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		c.Error("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	o, ok := c.lookupStream(argv[1])
	if !ok {
		return
	}
	if o == nil {
		if a.noMkstream {
			c.Null()
			return
		}
		o = store.NewObject(store.KindStream)
		c.kv().Add(argv[1], o)
	}
	s := o.Stream
	if s.LastID == store.MaxStreamID {
		c.Error("ERR The stream has exhausted the last possible ID, unable to add more items")
		return
	}
	var id store.StreamID
	switch {
	case a.idGiven && a.seqGiven:
		id = a.id
	case a.idGiven:
		if s.LastID.Ms == a.id.Ms {
			if s.LastID.Seq == math.MaxUint64 {
				c.Error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
				return
			}
			id = store.StreamID{Ms: s.LastID.Ms, Seq: s.LastID.Seq + 1}
		} else {
			id = a.id
		}
	default:
		ms := uint64(c.s.clock.NowMs())
		if ms > s.LastID.Ms {
			id = store.StreamID{Ms: ms}
		} else {
			id, _ = s.LastID.Incr()
		}
	}
	if id.Cmp(s.LastID) <= 0 {
		c.Error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
		return
	}
	fields := make([][]byte, len(argv)-fieldPos)
	for i, f := range argv[fieldPos:] {
		fields[i] = copyBytes(f)
	}
	me, mb := o.StreamLimits()
	s.Append(id, fields, me, mb)
	c.streamIDReply(id)
	c.s.dirty++
	c.notify(notifyStream, "xadd", argv[1])
	rewrite := !a.idGiven || !a.seqGiven || a.approx
	if a.byLen || a.byID {
		if streamTrim(s, &a) > 0 {
			c.notify(notifyStream, "xtrim", argv[1])
		}
	}
	if rewrite {
		p := make([][]byte, len(argv))
		copy(p, argv)
		if a.approx {
			trimPropArgv(p, s, &a)
		}
		if !a.idGiven || !a.seqGiven {
			p[idpos] = streamIDBytes(id)
		}
		c.Propagate(p...)
	}
	c.s.streamReady(c.db, argv[1])
}

func cmdXRange(c *Client, argv [][]byte)    { xrangeGeneric(c, argv, false) }
func cmdXRevRange(c *Client, argv [][]byte) { xrangeGeneric(c, argv, true) }

func xrangeGeneric(c *Client, argv [][]byte, rev bool) {
	startArg, endArg := argv[2], argv[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, sx, ok := c.intervalID(startArg, 0)
	if !ok {
		return
	}
	if sx {
		if start, ok = start.Incr(); !ok {
			c.Error("ERR invalid start ID for the interval")
			return
		}
	}
	end, ex, ok := c.intervalID(endArg, math.MaxUint64)
	if !ok {
		return
	}
	if ex {
		if end, ok = end.Decr(); !ok {
			c.Error("ERR invalid end ID for the interval")
			return
		}
	}
	count := int64(-1)
	for j := 4; j < len(argv); j++ {
		if eq(argv[j], "COUNT") && j+1 < len(argv) {
			v, ok := parseInt(argv[j+1])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			if v < 0 {
				v = 0
			}
			count = v
			j++
		} else {
			c.Error(ErrSyntax)
			return
		}
	}
	o, ok := c.lookupStream(argv[1])
	if !ok {
		return
	}
	if o == nil {
		c.Array(0)
		return
	}
	if count == 0 {
		c.NullArray()
		return
	}
	if count < 0 {
		count = 0
	}
	replyRange(c, o.Stream, start, end, count, rev)
}

// replyRange replies with the entries in [start, end] (at most count, 0:
// all).
func replyRange(c *Client, s *store.Stream, start, end store.StreamID, count int64, rev bool) {
	var ents []*store.StreamEntry
	s.Range(start, end, rev, func(e *store.StreamEntry) bool {
		ents = append(ents, e)
		return count == 0 || int64(len(ents)) < count
	})
	c.Array(len(ents))
	for _, e := range ents {
		c.entryReply(e)
	}
}

func cmdXLen(c *Client, argv [][]byte) {
	o, ok := c.lookupStream(argv[1])
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(o.Stream.Len()))
}

func cmdXDel(c *Client, argv [][]byte) {
	o, ok := c.lookupStream(argv[1])
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	ids, ok := c.streamIDs(argv[2:])
	if !ok {
		return
	}
	var n int64
	for _, id := range ids {
		if o.Stream.Delete(id) {
			n++
		}
	}
	c.s.dirty += n
	if n > 0 {
		c.notify(notifyStream, "xdel", argv[1])
	}
	c.Int(n)
}

func cmdXTrim(c *Client, argv [][]byte) {
	var a trimArgs
	if parseAddTrim(c, argv, false, &a) < 0 {
		return
	}
	o, ok := c.lookupStream(argv[1])
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	n := streamTrim(o.Stream, &a)
	if n > 0 {
		c.notify(notifyStream, "xtrim", argv[1])
		if a.approx {
			p := make([][]byte, len(argv))
			copy(p, argv)
			trimPropArgv(p, o.Stream, &a)
			c.Propagate(p...)
		}
		c.s.dirty += n
	}
	c.Int(n)
}

func cmdXSetID(c *Client, argv [][]byte) {
	id, ok := c.streamID(argv[2], 0, true)
	if !ok {
		return
	}
	entriesAdded := int64(-1)
	var maxDel store.StreamID
	for i := 3; i < len(argv); i++ {
		more := len(argv) - 1 - i
		switch {
		case eq(argv[i], "ENTRIESADDED") && more > 0:
			v, ok := parseInt(argv[i+1])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			if v < 0 {
				c.Error("ERR entries_added must be positive")
				return
			}
			entriesAdded = v
			i++
		case eq(argv[i], "MAXDELETEDID") && more > 0:
			if maxDel, ok = c.streamID(argv[i+1], 0, true); !ok {
				return
			}
			if id.Cmp(maxDel) < 0 {
				c.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			i++
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	o, ok := c.lookupStream(argv[1])
	if !ok {
		return
	}
	if o == nil {
		c.Error(ErrNoKey)
		return
	}
	s := o.Stream
	if s.Len() > 0 {
		if id.Cmp(s.LastValid()) < 0 {
			c.Error("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if entriesAdded != -1 && int64(s.Len()) > entriesAdded {
			c.Error("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	s.LastID = id
	if entriesAdded != -1 {
		s.EntriesAdded = entriesAdded
	}
	if !maxDel.IsZero() {
		s.MaxDeletedEntryID = maxDel
	}
	c.OK()
	c.s.dirty++
	c.notify(notifyStream, "xsetid", argv[1])
}

// ---- XREAD / XREADGROUP ----

// xreadArgs is a parsed XREAD/XREADGROUP.
type xreadArgs struct {
	timeout  int64 // ms; -1: no BLOCK
	count    int64
	keys     [][]byte
	ids      []store.StreamID
	group    []byte
	consumer []byte
	noack    bool
}

func cmdXRead(c *Client, argv [][]byte) {
	xreadgroup := len(argv[0]) == 10
	a := xreadArgs{timeout: -1}
	streamsArg := 0
	for i := 1; i < len(argv); i++ {
		more := len(argv) - i - 1
		o := argv[i]
		switch {
		case eq(o, "BLOCK") && more > 0:
			if c.inScript {
				c.Error("ERR " + cstr(argv[0]) + " command is not allowed with BLOCK option from scripts")
				return
			}
			i++
			t, ok := parseInt(argv[i])
			if !ok {
				c.Error("ERR timeout is not an integer or out of range")
				return
			}
			if t < 0 {
				c.Error("ERR timeout is negative")
				return
			}
			a.timeout = t
		case eq(o, "COUNT") && more > 0:
			i++
			v, ok := parseInt(argv[i])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			if v < 0 {
				v = 0
			}
			a.count = v
		case eq(o, "STREAMS") && more > 0:
			streamsArg = i + 1
			n := len(argv) - streamsArg
			if n%2 != 0 {
				c.Error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return
			}
			i = len(argv)
		case eq(o, "GROUP") && more >= 2:
			if !xreadgroup {
				c.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			a.group, a.consumer = argv[i+1], argv[i+2]
			i += 2
		case eq(o, "NOACK"):
			if !xreadgroup {
				c.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			a.noack = true
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if streamsArg == 0 {
		c.Error(ErrSyntax)
		return
	}
	if xreadgroup && a.group == nil {
		c.Error("ERR Missing GROUP option for XREADGROUP")
		return
	}
	n := (len(argv) - streamsArg) / 2
	a.keys = argv[streamsArg : streamsArg+n]
	a.ids = make([]store.StreamID, n)
	var groups []*store.StreamCG
	if a.group != nil {
		groups = make([]*store.StreamCG, n)
	}
	for i := 0; i < n; i++ {
		key := a.keys[i]
		arg := argv[streamsArg+n+i]
		o, ok := c.lookupStream(key)
		if !ok {
			return
		}
		if a.group != nil {
			var g *store.StreamCG
			if o != nil {
				g = o.Stream.Group(string(a.group))
			}
			if g == nil {
				c.Error("NOGROUP No such key '" + cstr(key) + "' or consumer group '" + cstr(a.group) + "' in XREADGROUP with GROUP option")
				return
			}
			groups[i] = g
		}
		if string(arg) == "$" {
			if xreadgroup {
				c.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			if o != nil {
				a.ids[i] = o.Stream.LastID
			}
			continue
		} else if string(arg) == ">" {
			if !xreadgroup {
				c.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			a.ids[i] = store.MaxStreamID
			continue
		}
		id, ok := c.streamID(arg, 0, true)
		if !ok {
			return
		}
		a.ids[i] = id
	}
	c.Propagate() // only the group state changes propagate, below
	served := 0
	var body Client // replies of the served streams, counted first
	body.s, body.proto, body.db, body.id = c.s, c.proto, c.db, c.id
	c.s.beginBlock()
	for i := 0; i < n; i++ {
		o := c.kv().Get(a.keys[i])
		if o == nil {
			continue
		}
		s := o.Stream
		gt := a.ids[i]
		sync, history := false, false
		if groups != nil {
			if gt != store.MaxStreamID {
				sync, history = true, true
			} else if s.Len() > 0 && s.LastValid().Cmp(groups[i].LastID) > 0 {
				sync = true
				gt = groups[i].LastID
			}
		} else if s.Len() > 0 && s.LastValid().Cmp(gt) > 0 {
			sync = true
		}
		if !sync {
			continue
		}
		served++
		start, _ := gt.Incr()
		if c.proto == 2 {
			body.Array(2)
		}
		body.Bulk(a.keys[i])
		var g *store.StreamCG
		var cons *store.StreamConsumer
		if groups != nil {
			g = groups[i]
			cons = streamConsumer(c, g, a.keys[i], a.group, string(a.consumer), a.noack)
		}
		streamServe(&body, c, s, start, a.count, a.keys[i], g, cons, a.group, a.noack, history)
		if groups != nil {
			c.s.dirty++
		}
	}
	c.s.endBlock()
	if served > 0 {
		if c.proto == 2 {
			c.Array(served) // [key, entries] pairs
		} else {
			c.Map(served)
		}
		c.Raw(body.out)
		return
	}
	if a.timeout != -1 {
		if c.denyBlocking() {
			c.NullArray()
			return
		}
		c.blockXRead(&a)
		return
	}
	c.NullArray()
}

// ---- consumer groups ----

func subcommandSyntax(c *Client, argv [][]byte, cmd string) {
	c.Error("ERR unknown subcommand or wrong number of arguments for '" + trunc(argv[1], 128) + "'. Try " + cmd + " HELP.")
}

func cmdXGroup(c *Client, argv [][]byte) {
	opt := strings.ToUpper(string(argv[1]))
	mkstream := false
	entriesRead := int64(-1)
	var s *store.Stream
	var o *store.Object
	var grp string
	var g *store.StreamCG
	if len(argv) >= 4 {
		for i := 5; i < len(argv); {
			switch {
			case opt == "CREATE" && eq(argv[i], "MKSTREAM"):
				mkstream = true
				i++
			case (opt == "CREATE" || opt == "SETID") && eq(argv[i], "ENTRIESREAD") && i+1 < len(argv):
				v, ok := parseInt(argv[i+1])
				if !ok {
					c.Error(ErrNotInt)
					return
				}
				if v < 0 && v != -1 {
					c.Error("ERR value for ENTRIESREAD must be positive or -1")
					return
				}
				entriesRead = v
				i += 2
			default:
				subcommandSyntax(c, argv, "XGROUP")
				return
			}
		}
		var ok bool
		if o, ok = c.lookupStream(argv[2]); !ok {
			return
		}
		if o != nil {
			s = o.Stream
		}
		grp = string(argv[3])
	}
	if len(argv) >= 4 && !mkstream {
		if s == nil {
			c.Error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
			return
		}
		if g = s.Group(grp); g == nil && (opt == "SETID" || opt == "CREATECONSUMER" || opt == "DELCONSUMER") {
			c.Error("NOGROUP No such consumer group '" + grp + "' for key name '" + cstr(argv[2]) + "'")
			return
		}
	}
	dirty := c.s.dirty
	switch {
	case len(argv) == 2 && opt == "HELP":
		helpReply(c, "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"CREATE <key> <groupname> <id|$> [option]",
			"    Create a new consumer group. Options are:",
			"    * MKSTREAM",
			"      Create the empty stream if it does not exist.",
			"    * ENTRIESREAD entries_read",
			"      Set the group's entries_read counter (internal use).",
			"CREATECONSUMER <key> <groupname> <consumer>",
			"    Create a new consumer in the specified group.",
			"DELCONSUMER <key> <groupname> <consumer>",
			"    Remove the specified consumer.",
			"DESTROY <key> <groupname>",
			"    Remove the specified group.",
			"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
			"    Set the current group ID and entries_read counter.",
			"HELP",
			"    Prints this help.")
	case opt == "CREATE" && len(argv) >= 5 && len(argv) <= 8:
		var id store.StreamID
		if string(argv[4]) == "$" {
			if s != nil {
				id = s.LastID
			}
		} else {
			var ok bool
			if id, ok = c.streamID(argv[4], 0, true); !ok {
				return
			}
		}
		if s == nil {
			o = store.NewObject(store.KindStream)
			c.kv().Add(argv[2], o)
			s = o.Stream
		}
		if s.CreateGroup(grp, id, entriesRead) == nil {
			c.Error("BUSYGROUP Consumer Group name already exists")
		} else {
			c.OK()
			c.s.dirty++
			c.notify(notifyStream, "xgroup-create", argv[2])
		}
	case opt == "SETID" && (len(argv) == 5 || len(argv) == 7):
		var id store.StreamID
		if string(argv[4]) == "$" {
			id = s.LastID
		} else {
			var ok bool
			if id, ok = c.streamID(argv[4], 0, false); !ok {
				return
			}
		}
		g.LastID = id
		g.EntriesRead = entriesRead
		c.OK()
		c.s.dirty++
		c.notify(notifyStream, "xgroup-setid", argv[2])
	case opt == "DESTROY" && len(argv) == 4:
		if g == nil {
			c.Int(0)
			return
		}
		s.DestroyGroup(grp)
		c.Int(1)
		c.s.dirty++
		c.notify(notifyStream, "xgroup-destroy", argv[2])
		c.s.streamReady(c.db, argv[2])
	case opt == "CREATECONSUMER" && len(argv) == 5:
		if g.CreateConsumer(string(argv[4]), c.s.clock.NowMs()) != nil {
			c.s.dirty++
			c.notify(notifyStream, "xgroup-createconsumer", argv[2])
			c.Int(1)
		} else {
			c.Int(0)
		}
	case opt == "DELCONSUMER" && len(argv) == 5:
		var pending int64
		if cons := g.Consumer(string(argv[4])); cons != nil {
			pending = int64(len(cons.Pending()))
			g.DeleteConsumer(cons)
			c.s.dirty++
			c.notify(notifyStream, "xgroup-delconsumer", argv[2])
		}
		c.Int(pending)
	default:
		subcommandSyntax(c, argv, "XGROUP")
		return
	}
	if c.s.dirty != dirty {
		// The XGROUP container is not flagged write (its subcommands
		// are), so the command path leaves propagation to the handler.
		c.s.propagate(c.db, argv)
		c.s.touch(c.db, argv[2])
	}
}

func cmdXAck(c *Client, argv [][]byte) {
	o, ok := c.lookupStream(argv[1])
	if !ok {
		return
	}
	var g *store.StreamCG
	if o != nil {
		g = o.Stream.Group(string(argv[2]))
	}
	if g == nil {
		c.Int(0)
		return
	}
	ids, ok := c.streamIDs(argv[3:])
	if !ok {
		return
	}
	var n int64
	for _, id := range ids {
		if g.Ack(id) {
			n++
		}
	}
	c.s.dirty += n
	c.Int(n)
}

func cmdXPending(c *Client, argv [][]byte) {
	justInfo := len(argv) == 3
	if len(argv) != 3 && (len(argv) < 6 || len(argv) > 9) {
		c.Error(ErrSyntax)
		return
	}
	var start, end store.StreamID
	var count, minIdle int64
	var consumer []byte
	if len(argv) >= 6 {
		si := 3
		if eq(argv[3], "IDLE") {
			v, ok := parseInt(argv[4])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			minIdle = v
			if len(argv) < 8 {
				c.Error(ErrSyntax)
				return
			}
			si += 2
		}
		v, ok := parseInt(argv[si+2])
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		count = max(v, 0)
		var sx, ex bool
		if start, sx, ok = c.intervalID(argv[si], 0); !ok {
			return
		}
		if sx {
			if start, ok = start.Incr(); !ok {
				c.Error("ERR invalid start ID for the interval")
				return
			}
		}
		if end, ex, ok = c.intervalID(argv[si+1], math.MaxUint64); !ok {
			return
		}
		if ex {
			if end, ok = end.Decr(); !ok {
				c.Error("ERR invalid end ID for the interval")
				return
			}
		}
		if si+3 < len(argv) {
			consumer = argv[si+3]
		}
	}
	o, ok := c.lookupStream(argv[1])
	if !ok {
		return
	}
	var g *store.StreamCG
	if o != nil {
		g = o.Stream.Group(string(argv[2]))
	}
	if g == nil {
		c.Error("NOGROUP No such key '" + cstr(argv[1]) + "' or consumer group '" + cstr(argv[2]) + "'")
		return
	}
	if justInfo {
		pend := g.Pending()
		c.Array(4)
		c.Int(int64(len(pend)))
		if len(pend) == 0 {
			c.Null()
			c.Null()
			c.NullArray()
			return
		}
		c.streamIDReply(pend[0].ID)
		c.streamIDReply(pend[len(pend)-1].ID)
		var cs []*store.StreamConsumer
		for _, cons := range g.Consumers() {
			if len(cons.Pending()) > 0 {
				cs = append(cs, cons)
			}
		}
		c.Array(len(cs))
		for _, cons := range cs {
			c.Array(2)
			c.BulkString(cons.Name)
			c.BulkString(strconv.Itoa(len(cons.Pending())))
		}
		return
	}
	var pend []*store.StreamNACK
	if consumer != nil {
		cons := g.Consumer(string(consumer))
		if cons == nil {
			c.Array(0)
			return
		}
		pend = cons.PendingFrom(start)
	} else {
		pend = g.PendingFrom(start)
	}
	now := c.s.clock.NowMs()
	var out []*store.StreamNACK
	for _, p := range pend {
		if count == 0 || p.ID.Cmp(end) > 0 {
			break
		}
		if minIdle != 0 && now-p.DeliveryTime < minIdle {
			continue
		}
		out = append(out, p)
		count--
	}
	c.Array(len(out))
	for _, p := range out {
		c.Array(4)
		c.streamIDReply(p.ID)
		c.BulkString(p.Consumer.Name)
		c.Int(max(now-p.DeliveryTime, 0))
		c.Int(p.DeliveryCount)
	}
}

func cmdXClaim(c *Client, argv [][]byte) {
	o, ok := c.lookupStream(argv[1])
	if !ok {
		return
	}
	var g *store.StreamCG
	if o != nil {
		g = o.Stream.Group(string(argv[2]))
	}
	if g == nil {
		c.Error("NOGROUP No such key '" + cstr(argv[1]) + "' or consumer group '" + cstr(argv[2]) + "'")
		return
	}
	minIdle, ok := parseInt(argv[4])
	if !ok {
		c.Error("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	var ids []store.StreamID
	j := 5
	for ; j < len(argv); j++ {
		id, ok := parseStreamID(argv[j], 0, true, nil)
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	now := c.s.clock.NowMs()
	retry, delivery := int64(-1), int64(-1)
	force, justid := false, false
	var lastID store.StreamID
	for ; j < len(argv); j++ {
		more := len(argv) - 1 - j
		opt := argv[j]
		switch {
		case eq(opt, "FORCE"):
			force = true
		case eq(opt, "JUSTID"):
			justid = true
		case eq(opt, "IDLE") && more > 0:
			j++
			v, ok := parseInt(argv[j])
			if !ok {
				c.Error("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			delivery = now - v
		case eq(opt, "TIME") && more > 0:
			j++
			v, ok := parseInt(argv[j])
			if !ok {
				c.Error("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			delivery = v
		case eq(opt, "RETRYCOUNT") && more > 0:
			j++
			v, ok := parseInt(argv[j])
			if !ok {
				c.Error("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
			retry = v
		case eq(opt, "LASTID") && more > 0:
			j++
			if lastID, ok = c.streamID(argv[j], 0, true); !ok {
				return
			}
		default:
			c.Error("ERR Unrecognized XCLAIM option '" + cstr(opt) + "'")
			return
		}
	}
	propLast := false
	if lastID.Cmp(g.LastID) > 0 {
		g.LastID = lastID
		propLast = true
	}
	if delivery != -1 {
		if delivery < 0 || delivery > now {
			delivery = now
		}
	} else {
		delivery = now
	}
	c.Propagate()
	s := o.Stream
	var cons *store.StreamConsumer
	var body Client
	body.s, body.proto, body.db, body.id = c.s, c.proto, c.db, c.id
	n := 0
	c.s.beginBlock()
	for i, id := range ids {
		nack := g.NACK(id)
		e := s.Get(id)
		if e == nil {
			if nack != nil {
				propagateXClaimRaw(c, argv[1], g, argv[2], argv[5+i], nack)
				propLast = false
				c.s.dirty++
				g.Ack(id)
			}
			continue
		}
		if force && nack == nil {
			nack = g.AddNACK(id, now)
		}
		if nack == nil {
			continue
		}
		if nack.Consumer != nil && minIdle != 0 && now-nack.DeliveryTime < minIdle {
			continue
		}
		if cons == nil {
			cons = streamConsumerNoProp(c, g, argv[1], string(argv[3]))
		}
		nack.DeliveryTime = delivery
		if retry >= 0 {
			nack.DeliveryCount = retry
		} else if !justid {
			nack.DeliveryCount++
		}
		g.Claim(nack, cons)
		if justid {
			body.streamIDReply(id)
		} else {
			body.entryReply(e)
		}
		n++
		propagateXClaimRaw(c, argv[1], g, argv[2], argv[5+i], nack)
		propLast = false
		c.s.dirty++
	}
	if propLast {
		propagateGroupID(c, argv[1], g, argv[2])
		c.s.dirty++
	}
	c.s.endBlock()
	c.Array(n)
	c.Raw(body.out)
}

func cmdXAutoClaim(c *Client, argv [][]byte) {
	minIdle, ok := parseInt(argv[4])
	if !ok {
		c.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, sx, ok := c.intervalID(argv[5], 0)
	if !ok {
		return
	}
	if sx {
		if start, ok = start.Incr(); !ok {
			c.Error("ERR invalid start ID for the interval")
			return
		}
	}
	count := int64(100)
	justid := false
	for j := 6; j < len(argv); j++ {
		more := len(argv) - 1 - j
		switch {
		case eq(argv[j], "COUNT") && more > 0:
			v, ok := parseInt(argv[j+1])
			if !ok || v < 1 || v > math.MaxInt64/16 {
				c.Error("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case eq(argv[j], "JUSTID"):
			justid = true
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	o, ok := c.lookupStream(argv[1])
	if !ok {
		return
	}
	var g *store.StreamCG
	if o != nil {
		g = o.Stream.Group(string(argv[2]))
	}
	if g == nil {
		c.Error("NOGROUP No such key '" + cstr(argv[1]) + "' or consumer group '" + cstr(argv[2]) + "'")
		return
	}
	c.Propagate()
	s := o.Stream
	attempts := count * 10
	now := c.s.clock.NowMs()
	var cons *store.StreamConsumer
	var body Client
	body.s, body.proto, body.db, body.id = c.s, c.proto, c.db, c.id
	var deleted []store.StreamID
	n := 0
	cur := start
	c.s.beginBlock()
	var next *store.StreamNACK
	for {
		pend := g.PendingFrom(cur)
		if attempts <= 0 || count <= 0 {
			if len(pend) > 0 {
				next = pend[0]
			}
			break
		}
		attempts--
		if len(pend) == 0 {
			break
		}
		nack := pend[0]
		id := nack.ID
		cur, _ = id.Incr()
		if id == store.MaxStreamID {
			cur = id // handled below: nothing can follow
		}
		e := s.Get(id)
		if e == nil {
			propagateXClaim(c, argv[1], g, argv[2], id, nack)
			c.s.dirty++
			g.Ack(id)
			deleted = append(deleted, id)
			count--
		} else if minIdle == 0 || now-nack.DeliveryTime >= minIdle {
			if cons == nil {
				cons = streamConsumerNoProp(c, g, argv[1], string(argv[3]))
			}
			nack.DeliveryTime = now
			if !justid {
				nack.DeliveryCount++
			}
			g.Claim(nack, cons)
			if justid {
				body.streamIDReply(id)
			} else {
				body.entryReply(e)
			}
			n++
			count--
			propagateXClaim(c, argv[1], g, argv[2], id, nack)
			c.s.dirty++
		}
		if id == store.MaxStreamID {
			break
		}
	}
	c.s.endBlock()
	c.Array(3)
	if next != nil {
		c.streamIDReply(next.ID)
	} else {
		c.streamIDReply(store.StreamID{})
	}
	c.Array(n)
	c.Raw(body.out)
	c.Array(len(deleted))
	for _, id := range deleted {
		c.streamIDReply(id)
	}
}

func cmdXInfo(c *Client, argv [][]byte) {
	if eq(argv[1], "HELP") {
		if len(argv) != 2 {
			subcommandSyntax(c, argv, "XINFO")
			return
		}
		helpReply(c, "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"CONSUMERS <key> <groupname>",
			"    Show consumers of <groupname>.",
			"GROUPS <key>",
			"    Show the stream consumer groups.",
			"STREAM <key> [FULL [COUNT <count>]",
			"    Show information about the stream.",
			"HELP",
			"    Prints this help.")
		return
	} else if len(argv) < 3 {
		subcommandSyntax(c, argv, "XINFO")
		return
	}
	o, ok := c.lookupStream(argv[2])
	if !ok {
		return
	}
	if o == nil {
		c.Error(ErrNoKey)
		return
	}
	s := o.Stream
	switch {
	case eq(argv[1], "CONSUMERS") && len(argv) == 4:
		g := s.Group(string(argv[3]))
		if g == nil {
			c.Error("NOGROUP No such consumer group '" + cstr(argv[3]) + "' for key name '" + cstr(argv[2]) + "'")
			return
		}
		now := c.s.clock.NowMs()
		cs := g.Consumers()
		c.Array(len(cs))
		for _, cons := range cs {
			c.Map(3)
			c.BulkString("name")
			c.BulkString(cons.Name)
			c.BulkString("pending")
			c.Int(int64(len(cons.Pending())))
			c.BulkString("idle")
			c.Int(max(now-cons.SeenTime, 0))
		}
	case eq(argv[1], "GROUPS") && len(argv) == 3:
		gs := s.Groups()
		c.Array(len(gs))
		for _, g := range gs {
			c.Map(6)
			c.BulkString("name")
			c.BulkString(g.Name)
			c.BulkString("consumers")
			c.Int(int64(g.NumConsumers()))
			c.BulkString("pending")
			c.Int(int64(len(g.Pending())))
			c.BulkString("last-delivered-id")
			c.streamIDReply(g.LastID)
			c.BulkString("entries-read")
			entriesReadReply(c, g)
			c.BulkString("lag")
			lagReply(c, s, g)
		}
	case eq(argv[1], "STREAM"):
		xinfoStream(c, argv, s)
	default:
		subcommandSyntax(c, argv, "XINFO")
	}
}

func entriesReadReply(c *Client, g *store.StreamCG) {
	if g.EntriesRead != -1 {
		c.Int(g.EntriesRead)
	} else {
		c.Null()
	}
}

func lagReply(c *Client, s *store.Stream, g *store.StreamCG) {
	if lag, ok := s.Lag(g); ok {
		c.Int(lag)
	} else {
		c.Null()
	}
}

// raxNodes approximates the radix tree's node count for keys 128-bit IDs.
func raxNodes(s *store.Stream) int {
	if s.Nodes() == 0 {
		return 1
	}
	return s.Nodes() + 1
}

func xinfoStream(c *Client, argv [][]byte, s *store.Stream) {
	full := false
	count := int64(10)
	opts := argv[3:]
	if len(opts) > 0 {
		if len(opts) != 1 && len(opts) != 3 {
			subcommandSyntax(c, argv, "XINFO")
			return
		}
		if !eq(opts[0], "full") {
			subcommandSyntax(c, argv, "XINFO")
			return
		}
		if len(opts) == 3 {
			if !eq(opts[1], "count") {
				subcommandSyntax(c, argv, "XINFO")
				return
			}
			v, ok := parseInt(opts[2])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			if v < 0 {
				v = 10
			}
			count = v
		}
		full = true
	}
	if full {
		c.Map(9)
	} else {
		c.Map(10)
	}
	c.BulkString("length")
	c.Int(int64(s.Len()))
	c.BulkString("radix-tree-keys")
	c.Int(int64(s.Nodes()))
	c.BulkString("radix-tree-nodes")
	c.Int(int64(raxNodes(s)))
	c.BulkString("last-generated-id")
	c.streamIDReply(s.LastID)
	c.BulkString("max-deleted-entry-id")
	c.streamIDReply(s.MaxDeletedEntryID)
	c.BulkString("entries-added")
	c.Int(s.EntriesAdded)
	c.BulkString("recorded-first-entry-id")
	c.streamIDReply(s.FirstID)
	if !full {
		c.BulkString("groups")
		c.Int(int64(s.NumGroups()))
		c.BulkString("first-entry")
		if id, ok := s.First(); ok {
			c.entryReply(s.Get(id))
		} else {
			c.Null()
		}
		c.BulkString("last-entry")
		if id, ok := s.Last(); ok {
			c.entryReply(s.Get(id))
		} else {
			c.Null()
		}
		return
	}
	c.BulkString("entries")
	replyRange(c, s, store.StreamID{}, store.MaxStreamID, count, false)
	c.BulkString("groups")
	gs := s.Groups()
	c.Array(len(gs))
	for _, g := range gs {
		c.Map(7)
		c.BulkString("name")
		c.BulkString(g.Name)
		c.BulkString("last-delivered-id")
		c.streamIDReply(g.LastID)
		c.BulkString("entries-read")
		entriesReadReply(c, g)
		c.BulkString("lag")
		lagReply(c, s, g)
		c.BulkString("pel-count")
		c.Int(int64(len(g.Pending())))
		c.BulkString("pending")
		pend := g.Pending()
		if count > 0 && int64(len(pend)) > count {
			pend = pend[:count]
		}
		c.Array(len(pend))
		for _, p := range pend {
			c.Array(4)
			c.streamIDReply(p.ID)
			c.BulkString(p.Consumer.Name)
			c.Int(p.DeliveryTime)
			c.Int(p.DeliveryCount)
		}
		c.BulkString("consumers")
		cs := g.Consumers()
		c.Array(len(cs))
		for _, cons := range cs {
			c.Map(4)
			c.BulkString("name")
			c.BulkString(cons.Name)
			c.BulkString("seen-time")
			c.Int(cons.SeenTime)
			c.BulkString("pel-count")
			c.Int(int64(len(cons.Pending())))
			c.BulkString("pending")
			cp := cons.Pending()
			if count > 0 && int64(len(cp)) > count {
				cp = cp[:count]
			}
			c.Array(len(cp))
			for _, p := range cp {
				c.Array(3)
				c.streamIDReply(p.ID)
				c.Int(p.DeliveryTime)
				c.Int(p.DeliveryCount)
			}
		}
	}
}

// ---- blocking XREAD / XREADGROUP ----

// blockXRead parks c on a's streams (Redis's blockForKeys BLOCKED_STREAM).
func (c *Client) blockXRead(a *xreadArgs) {
	b := &blockedOn{kind: store.KindStream, count: a.count, xids: make(map[string]store.StreamID, len(a.keys))}
	if b.count == 0 {
		b.count = 1000
	}
	if a.group != nil {
		b.xgroup, b.xconsumer, b.xnoack = copyBytes(a.group), copyBytes(a.consumer), a.noack
	}
	for i, k := range a.keys {
		if _, dup := b.xids[string(k)]; !dup {
			b.xids[string(k)] = a.ids[i]
		}
	}
	c.block(b, a.keys, time.Duration(a.timeout)*time.Millisecond)
}

// xreadKeys finds the keys of XREAD/XREADGROUP: the first half of the
// arguments after STREAMS.
func xreadKeys(argv [][]byte) []int {
	for i := 1; i < len(argv); i++ {
		if eq(argv[i], "STREAMS") {
			n := (len(argv) - i - 1) / 2
			out := make([]int, n)
			for k := range out {
				out[k] = i + 1 + k
			}
			return out
		}
	}
	return nil
}

// subKey: the key of a container's subcommand at argv[2] (XGROUP, XINFO).
func subKey(argv [][]byte) []int {
	if len(argv) < 3 {
		return nil
	}
	return []int{2}
}

// streamIDs parses the strict IDs of XDEL and XACK (every one is checked
// before anything changes, as Redis does); it replied when ok is false.
func (c *Client) streamIDs(args [][]byte) ([]store.StreamID, bool) {
	ids := make([]store.StreamID, 0, len(args))
	for _, a := range args {
		id, ok := c.streamID(a, 0, true)
		if !ok {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// streamCommands are the stream family's specs (arity, flags and keys as
// Redis 7.0's commands/x*.json); COMMAND INFO shows Redis's key specs.
func streamCommands() []*Command {
	x := func(name string, arity int, flags Flag, h Handler) *Command {
		return newCmd(name, arity, flags, 1, 1, 1, h, "stream").withRedisInfoSpecs("")
	}
	// Subcommands in the order Redis 7.0's COMMAND lists them; their key
	// is argv[2] (XGROUP CREATE key ...).
	xsub := func(name string, arity int, flags Flag) *Command {
		sc := sub(name, arity, flags).withKey(2).withRedisInfoSpecs("")
		sc.Group = "stream"
		return sc
	}
	help := sub("help", 2, FlagLoading|FlagStale)
	help.Group = "stream"
	help2 := *help
	return []*Command{
		x("xadd", -5, FlagWrite|FlagDenyOOM|FlagFast, cmdXAdd).withRedisInfoSpecs("UPDATE instead of INSERT because of the optional trimming feature"),
		x("xrange", -4, FlagReadonly, cmdXRange),
		x("xrevrange", -4, FlagReadonly, cmdXRevRange),
		x("xlen", 2, FlagReadonly|FlagFast, cmdXLen),
		x("xdel", -3, FlagWrite|FlagFast, cmdXDel),
		x("xtrim", -4, FlagWrite, cmdXTrim),
		x("xsetid", -3, FlagWrite|FlagDenyOOM|FlagFast, cmdXSetID),
		x("xack", -4, FlagWrite|FlagFast, cmdXAck),
		x("xpending", -3, FlagReadonly, cmdXPending),
		x("xclaim", -6, FlagWrite|FlagFast, cmdXClaim),
		x("xautoclaim", -6, FlagWrite|FlagFast, cmdXAutoClaim),
		newCmd("xread", -4, FlagReadonly|FlagBlocking|FlagMovableKeys, 0, 0, 0, cmdXRead, "stream").withKeys(xreadKeys).withRedisInfoSpecs(""),
		newCmd("xreadgroup", -7, FlagWrite|FlagBlocking|FlagMovableKeys, 0, 0, 0, cmdXRead, "stream").withKeys(xreadKeys).withRedisInfoSpecs(""),
		newCmd("xgroup", -2, 0, 0, 0, 0, cmdXGroup, "stream").withKeys(subKey).withACL("@slow").withSubs(
			xsub("destroy", 4, FlagWrite), xsub("createconsumer", 5, FlagWrite|FlagDenyOOM), xsub("create", -5, FlagWrite|FlagDenyOOM),
			xsub("delconsumer", 5, FlagWrite), xsub("setid", -5, FlagWrite), help),
		newCmd("xinfo", -2, 0, 0, 0, 0, cmdXInfo, "stream").withKeys(subKey).withACL("@slow").withSubs(
			xsub("groups", 3, FlagReadonly), xsub("stream", -3, FlagReadonly), &help2,
			xsub("consumers", 4, FlagReadonly)),
	}
}
