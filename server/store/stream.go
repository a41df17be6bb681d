package store

import (
	"math"
	"sort"
	"strconv"
)

// StreamID is a stream entry ID, <ms>-<seq>.
type StreamID struct{ Ms, Seq uint64 }

// MaxStreamID is the largest ID (the "+" of a range).
var MaxStreamID = StreamID{math.MaxUint64, math.MaxUint64}

// Cmp compares a and b (-1, 0, 1).
func (a StreamID) Cmp(b StreamID) int {
	switch {
	case a.Ms < b.Ms:
		return -1
	case a.Ms > b.Ms:
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// IsZero reports whether a is 0-0.
func (a StreamID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Incr returns the next ID; ok is false on overflow (then 0-0).
func (a StreamID) Incr() (StreamID, bool) {
	if a.Seq == math.MaxUint64 {
		if a.Ms == math.MaxUint64 {
			return StreamID{}, false
		}
		return StreamID{a.Ms + 1, 0}, true
	}
	return StreamID{a.Ms, a.Seq + 1}, true
}

// Decr returns the previous ID; ok is false on underflow (then max).
func (a StreamID) Decr() (StreamID, bool) {
	if a.Seq == 0 {
		if a.Ms == 0 {
			return MaxStreamID, false
		}
		return StreamID{a.Ms - 1, math.MaxUint64}, true
	}
	return StreamID{a.Ms, a.Seq - 1}, true
}

// Append appends the text form "<ms>-<seq>" to b.
func (a StreamID) Append(b []byte) []byte {
	b = strconv.AppendUint(b, a.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, a.Seq, 10)
}

// String is the text form.
func (a StreamID) String() string { return string(a.Append(nil)) }

// StreamEntry is one entry: its ID and field/value pairs (alternating).
type StreamEntry struct {
	ID     StreamID
	Fields [][]byte
}

// streamNode models one of Redis's listpack nodes (a radix tree key): the
// live entries it holds in ID order, how many were appended to it in all
// (live and deleted: the node-full rule counts both), and its size, so
// that approximate trimming (MAXLEN ~, MINID ~) removes exactly the
// entries Redis removes, whole nodes at a time.
type streamNode struct {
	master  StreamID
	ents    []StreamEntry
	total   int // entries appended, deleted ones included
	deleted int
	fields  [][]byte // the master entry's fields
	bytes   int      // listpack bytes, without the count/deleted integers
}

func (n *streamNode) lpBytes() int {
	return n.bytes + lpIntSize(int64(len(n.ents))) + lpIntSize(int64(n.deleted))
}

// Stream is a stream value: entries in ID order, in nodes (a B-tree-like
// slice of chunks: O(log n) seek), and the stream's metadata and consumer
// groups.
type Stream struct {
	nodes []*streamNode
	// length is the number of live entries.
	length            int
	LastID            StreamID
	FirstID           StreamID
	MaxDeletedEntryID StreamID
	EntriesAdded      int64
	groups            map[string]*StreamCG
}

// NewStream returns an empty stream.
func NewStream() *Stream { return &Stream{} }

// Len is the number of entries.
func (s *Stream) Len() int { return s.length }

// Nodes is the number of nodes (XINFO radix-tree-keys).
func (s *Stream) Nodes() int { return len(s.nodes) }

// listpack element sizes (Redis's listpack.c encodings plus backlen).
func lpIntSize(v int64) int {
	var n int
	switch {
	case v >= 0 && v <= 127:
		n = 1
	case v >= -4096 && v <= 4095:
		n = 2
	case v >= -32768 && v <= 32767:
		n = 3
	case v >= -8388608 && v <= 8388607:
		n = 4
	case v >= -2147483648 && v <= 2147483647:
		n = 5
	default:
		n = 9
	}
	return n + 1
}

func lpBacklen(n int) int {
	switch {
	case n <= 127:
		return 1
	case n < 16383:
		return 2
	case n < 2097151:
		return 3
	case n < 268435455:
		return 4
	}
	return 5
}

func lpStrSize(b []byte) int {
	if len(b) > 0 && len(b) <= 20 {
		if v, err := strconv.ParseInt(string(b), 10, 64); err == nil && strconv.FormatInt(v, 10) == string(b) {
			return lpIntSize(v)
		}
	}
	var n int
	switch {
	case len(b) < 64:
		n = 1 + len(b)
	case len(b) < 4096:
		n = 2 + len(b)
	default:
		n = 5 + len(b)
	}
	return n + lpBacklen(n)
}

// Append adds an entry with id (greater than LastID: the caller checks)
// following the node limits maxEntries and maxBytes (0: none).
func (s *Stream) Append(id StreamID, fields [][]byte, maxEntries, maxBytes int) {
	var tot int
	for _, f := range fields {
		tot += len(f)
	}
	var n *streamNode
	if len(s.nodes) > 0 {
		n = s.nodes[len(s.nodes)-1]
		if maxBytes <= 0 || maxBytes > math.MaxInt32 {
			maxBytes = math.MaxInt32
		}
		if n.lpBytes()+tot >= maxBytes || (maxEntries > 0 && n.total >= maxEntries) {
			n = nil
		}
	}
	if n == nil {
		n = &streamNode{master: id}
		n.bytes = 7 + lpIntSize(int64(len(fields)/2)) + lpIntSize(0)
		for i := 0; i < len(fields); i += 2 {
			n.fields = append(n.fields, fields[i])
			n.bytes += lpStrSize(fields[i])
		}
		s.nodes = append(s.nodes, n)
	}
	same := len(fields)/2 == len(n.fields)
	for i := 0; same && i < len(n.fields); i++ {
		same = string(n.fields[i]) == string(fields[2*i])
	}
	sz := lpIntSize(0) + lpIntSize(int64(id.Ms-n.master.Ms)) + lpIntSize(int64(id.Seq-n.master.Seq))
	cnt := len(fields)/2 + 3
	if !same {
		sz += lpIntSize(int64(len(fields) / 2))
		cnt += len(fields)/2 + 1
		for _, f := range fields {
			sz += lpStrSize(f)
		}
	} else {
		for i := 1; i < len(fields); i += 2 {
			sz += lpStrSize(fields[i])
		}
	}
	sz += lpIntSize(int64(cnt))
	n.bytes += sz
	n.ents = append(n.ents, StreamEntry{ID: id, Fields: fields})
	n.total++
	s.length++
	s.EntriesAdded++
	s.LastID = id
	if s.length == 1 {
		s.FirstID = id
	}
}

// Cursor is a position in a stream (node, entry).
type Cursor struct{ n, e int }

// Seek returns the position of the first entry with ID >= id.
func (s *Stream) Seek(id StreamID) Cursor {
	// the last node whose master <= id
	ni := sort.Search(len(s.nodes), func(i int) bool { return s.nodes[i].master.Cmp(id) > 0 }) - 1
	if ni < 0 {
		return Cursor{0, 0}
	}
	n := s.nodes[ni]
	ei := sort.Search(len(n.ents), func(i int) bool { return n.ents[i].ID.Cmp(id) >= 0 })
	if ei == len(n.ents) {
		return Cursor{ni + 1, 0}
	}
	return Cursor{ni, ei}
}

// Valid reports whether c is at an entry.
func (s *Stream) Valid(c Cursor) bool {
	return c.n >= 0 && c.n < len(s.nodes) && c.e >= 0 && c.e < len(s.nodes[c.n].ents)
}

// At is the entry at c (Valid).
func (s *Stream) At(c Cursor) *StreamEntry { return &s.nodes[c.n].ents[c.e] }

// Next moves c forward.
func (s *Stream) Next(c Cursor) Cursor {
	c.e++
	if c.e >= len(s.nodes[c.n].ents) {
		c.n++
		c.e = 0
	}
	return c
}

// Prev moves c backward (invalid before the first entry).
func (s *Stream) Prev(c Cursor) Cursor {
	c.e--
	for c.e < 0 {
		c.n--
		if c.n < 0 {
			return Cursor{-1, -1}
		}
		c.e = len(s.nodes[c.n].ents) - 1
	}
	return c
}

// SeekLE returns the position of the last entry with ID <= id.
func (s *Stream) SeekLE(id StreamID) Cursor {
	c := s.Seek(id)
	if s.Valid(c) && s.At(c).ID == id {
		return c
	}
	if c.n >= len(s.nodes) {
		c = Cursor{len(s.nodes), 0}
	}
	return s.Prev(c)
}

// Get returns the entry with id, or nil.
func (s *Stream) Get(id StreamID) *StreamEntry {
	c := s.Seek(id)
	if s.Valid(c) && s.At(c).ID == id {
		return s.At(c)
	}
	return nil
}

// Range calls fn for the entries in [start, end], in order (reverse when
// rev), until fn returns false.
func (s *Stream) Range(start, end StreamID, rev bool, fn func(e *StreamEntry) bool) {
	if start.Cmp(end) > 0 {
		return
	}
	if !rev {
		for c := s.Seek(start); s.Valid(c); c = s.Next(c) {
			e := s.At(c)
			if e.ID.Cmp(end) > 0 || !fn(e) {
				return
			}
		}
		return
	}
	for c := s.SeekLE(end); s.Valid(c); c = s.Prev(c) {
		e := s.At(c)
		if e.ID.Cmp(start) < 0 || !fn(e) {
			return
		}
	}
}

// First and Last are the edge entries' IDs (ok false when empty).
func (s *Stream) First() (StreamID, bool) {
	if s.length == 0 {
		return StreamID{}, false
	}
	return s.nodes[0].ents[0].ID, true
}

// Last is the ID of the last live entry.
func (s *Stream) Last() (StreamID, bool) {
	if s.length == 0 {
		return StreamID{}, false
	}
	n := s.nodes[len(s.nodes)-1]
	return n.ents[len(n.ents)-1].ID, true
}

// Delete removes the entry with id, reporting whether it was there (XDEL).
func (s *Stream) Delete(id StreamID) bool {
	c := s.Seek(id)
	if !s.Valid(c) || s.At(c).ID != id {
		return false
	}
	n := s.nodes[c.n]
	n.ents = append(n.ents[:c.e], n.ents[c.e+1:]...)
	n.deleted++
	s.length--
	if len(n.ents) == 0 {
		s.nodes = append(s.nodes[:c.n], s.nodes[c.n+1:]...)
	}
	if id.Cmp(s.MaxDeletedEntryID) > 0 {
		s.MaxDeletedEntryID = id
	}
	if s.length == 0 {
		s.FirstID = StreamID{}
	} else if id == s.FirstID {
		s.FirstID, _ = s.First()
	}
	return true
}

// Trim removes entries from the head: down to maxlen entries (byLen) or
// below minid. approx removes whole nodes only; limit (>0) caps the
// entries removed (counting whole nodes). It returns how many were
// removed (Redis's streamTrim).
func (s *Stream) Trim(byLen bool, maxlen int64, minid StreamID, approx bool, limit int64) int64 {
	var deleted int64
	for len(s.nodes) > 0 {
		if byLen && int64(s.length) <= maxlen {
			break
		}
		n := s.nodes[0]
		entries := int64(len(n.ents))
		if limit > 0 && deleted+entries > limit {
			break
		}
		var whole bool
		if byLen {
			whole = int64(s.length)-entries >= maxlen
		} else {
			whole = n.ents[len(n.ents)-1].ID.Cmp(minid) < 0
		}
		if whole {
			s.nodes = s.nodes[1:]
			s.length -= int(entries)
			deleted += entries
			continue
		}
		if approx {
			break
		}
		k := 0
		for k < len(n.ents) {
			if byLen && int64(s.length) <= maxlen {
				break
			}
			if !byLen && n.ents[k].ID.Cmp(minid) >= 0 {
				break
			}
			k++
			s.length--
		}
		n.ents = append(n.ents[:0:0], n.ents[k:]...)
		n.deleted += k
		deleted += int64(k)
		break
	}
	if s.length == 0 {
		s.FirstID = StreamID{}
	} else if deleted > 0 {
		s.FirstID, _ = s.First()
	}
	return deleted
}

// ---- consumer groups ----

// StreamNACK is a pending entry: delivered to Consumer, not acknowledged.
type StreamNACK struct {
	ID            StreamID
	DeliveryTime  int64
	DeliveryCount int64
	Consumer      *StreamConsumer
}

// pel is a pending entries list, sorted by ID.
type pel struct{ list []*StreamNACK }

func (p *pel) search(id StreamID) int {
	return sort.Search(len(p.list), func(i int) bool { return p.list[i].ID.Cmp(id) >= 0 })
}

func (p *pel) get(id StreamID) *StreamNACK {
	i := p.search(id)
	if i < len(p.list) && p.list[i].ID == id {
		return p.list[i]
	}
	return nil
}

func (p *pel) insert(n *StreamNACK) {
	i := p.search(n.ID)
	if i < len(p.list) && p.list[i].ID == n.ID {
		p.list[i] = n
		return
	}
	p.list = append(p.list, nil)
	copy(p.list[i+1:], p.list[i:])
	p.list[i] = n
}

func (p *pel) remove(id StreamID) {
	i := p.search(id)
	if i < len(p.list) && p.list[i].ID == id {
		p.list = append(p.list[:i], p.list[i+1:]...)
	}
}

// StreamConsumer is a consumer of a group.
type StreamConsumer struct {
	Name     string
	SeenTime int64
	pel      pel
}

// Pending is the consumer's PEL in ID order (do not modify).
func (c *StreamConsumer) Pending() []*StreamNACK { return c.pel.list }

// PendingFrom is the consumer's PEL from the first ID >= id.
func (c *StreamConsumer) PendingFrom(id StreamID) []*StreamNACK { return c.pel.list[c.pel.search(id):] }

// StreamCG is a consumer group.
type StreamCG struct {
	Name        string
	LastID      StreamID
	EntriesRead int64 // -1: unknown
	pel         pel
	consumers   map[string]*StreamConsumer
}

// Pending is the group's PEL in ID order (do not modify).
func (g *StreamCG) Pending() []*StreamNACK { return g.pel.list }

// PendingFrom is the group's PEL from the first ID >= id.
func (g *StreamCG) PendingFrom(id StreamID) []*StreamNACK { return g.pel.list[g.pel.search(id):] }

// NACK returns the pending entry id, or nil.
func (g *StreamCG) NACK(id StreamID) *StreamNACK { return g.pel.get(id) }

// Consumer returns the consumer name, or nil.
func (g *StreamCG) Consumer(name string) *StreamConsumer { return g.consumers[name] }

// NumConsumers is the number of consumers.
func (g *StreamCG) NumConsumers() int { return len(g.consumers) }

// Consumers returns the consumers sorted by name.
func (g *StreamCG) Consumers() []*StreamConsumer {
	out := make([]*StreamConsumer, 0, len(g.consumers))
	for _, c := range g.consumers {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CreateConsumer adds a consumer seen at now; nil if it exists.
func (g *StreamCG) CreateConsumer(name string, now int64) *StreamConsumer {
	if g.consumers[name] != nil {
		return nil
	}
	c := &StreamConsumer{Name: name, SeenTime: now}
	g.consumers[name] = c
	return c
}

// DeleteConsumer removes c and its pending entries.
func (g *StreamCG) DeleteConsumer(c *StreamConsumer) {
	for _, n := range c.pel.list {
		g.pel.remove(n.ID)
	}
	delete(g.consumers, c.Name)
}

// Ack removes the pending entry id, reporting whether it was pending.
func (g *StreamCG) Ack(id StreamID) bool {
	n := g.pel.get(id)
	if n == nil {
		return false
	}
	g.pel.remove(id)
	if n.Consumer != nil {
		n.Consumer.pel.remove(id)
	}
	return true
}

// Deliver records id as delivered to c at now: a new pending entry, or
// one moved to c with its count reset to 1 (XREADGROUP).
func (g *StreamCG) Deliver(id StreamID, c *StreamConsumer, now int64) *StreamNACK {
	if n := g.pel.get(id); n != nil {
		if n.Consumer != nil {
			n.Consumer.pel.remove(id)
		}
		n.Consumer, n.DeliveryTime, n.DeliveryCount = c, now, 1
		c.pel.insert(n)
		return n
	}
	n := &StreamNACK{ID: id, DeliveryTime: now, DeliveryCount: 1, Consumer: c}
	g.pel.insert(n)
	c.pel.insert(n)
	return n
}

// AddNACK inserts a pending entry owned by nobody yet (XCLAIM FORCE).
func (g *StreamCG) AddNACK(id StreamID, now int64) *StreamNACK {
	n := &StreamNACK{ID: id, DeliveryTime: now, DeliveryCount: 1}
	g.pel.insert(n)
	return n
}

// Claim moves n to c.
func (g *StreamCG) Claim(n *StreamNACK, c *StreamConsumer) {
	if n.Consumer == c {
		return
	}
	if n.Consumer != nil {
		n.Consumer.pel.remove(n.ID)
	}
	n.Consumer = c
	c.pel.insert(n)
}

// Group returns the group name, or nil.
func (s *Stream) Group(name string) *StreamCG { return s.groups[name] }

// NumGroups is the number of consumer groups.
func (s *Stream) NumGroups() int { return len(s.groups) }

// Groups returns the groups sorted by name.
func (s *Stream) Groups() []*StreamCG {
	out := make([]*StreamCG, 0, len(s.groups))
	for _, g := range s.groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CreateGroup adds a group; nil if it exists.
func (s *Stream) CreateGroup(name string, last StreamID, entriesRead int64) *StreamCG {
	if s.groups[name] != nil {
		return nil
	}
	if s.groups == nil {
		s.groups = make(map[string]*StreamCG)
	}
	g := &StreamCG{Name: name, LastID: last, EntriesRead: entriesRead, consumers: make(map[string]*StreamConsumer)}
	s.groups[name] = g
	return g
}

// DestroyGroup removes a group, reporting whether it existed.
func (s *Stream) DestroyGroup(name string) bool {
	if s.groups[name] == nil {
		return false
	}
	delete(s.groups, name)
	return true
}

// Clone is a deep copy (COPY).
func (s *Stream) Clone() *Stream {
	n := &Stream{length: s.length, LastID: s.LastID, FirstID: s.FirstID, MaxDeletedEntryID: s.MaxDeletedEntryID, EntriesAdded: s.EntriesAdded}
	for _, nd := range s.nodes {
		c := *nd
		c.ents = make([]StreamEntry, len(nd.ents))
		for i, e := range nd.ents {
			f := make([][]byte, len(e.Fields))
			for j, b := range e.Fields {
				f[j] = append([]byte(nil), b...)
			}
			c.ents[i] = StreamEntry{ID: e.ID, Fields: f}
		}
		n.nodes = append(n.nodes, &c)
	}
	for _, g := range s.groups {
		ng := n.CreateGroup(g.Name, g.LastID, g.EntriesRead)
		for _, c := range g.consumers {
			ng.consumers[c.Name] = &StreamConsumer{Name: c.Name, SeenTime: c.SeenTime}
		}
		for _, p := range g.pel.list {
			np := &StreamNACK{ID: p.ID, DeliveryTime: p.DeliveryTime, DeliveryCount: p.DeliveryCount}
			ng.pel.list = append(ng.pel.list, np)
			if p.Consumer != nil {
				nc := ng.consumers[p.Consumer.Name]
				np.Consumer = nc
				nc.pel.list = append(nc.pel.list, np)
			}
		}
	}
	return n
}

// StreamLimits are the node limits (stream-node-max-entries, -bytes) the
// object follows.
func (o *Object) StreamLimits() (entries, bytes int) {
	l := o.limits()
	return l.StreamNodeMaxEntries, l.StreamNodeMaxBytes
}

// LastValid is the ID of the last live entry, or 0-0 (streamLastValidID).
func (s *Stream) LastValid() StreamID {
	id, _ := s.Last()
	return id
}

// HasTombstones reports whether entries between start and the end were
// deleted (Redis's streamRangeHasTombstones with no end).
func (s *Stream) HasTombstones(start StreamID) bool {
	if s.length == 0 || s.MaxDeletedEntryID.IsZero() {
		return false
	}
	if s.FirstID.Cmp(s.MaxDeletedEntryID) > 0 {
		return false
	}
	return start.Cmp(s.MaxDeletedEntryID) <= 0
}

// EstimateDistance is streamEstimateDistanceFromFirstEverEntry: the
// entries_read of a group whose last ID is id, or -1 when unknown.
func (s *Stream) EstimateDistance(id StreamID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.length == 0 && id.Cmp(s.LastID) < 1 {
		return s.EntriesAdded
	}
	c := id.Cmp(s.LastID)
	if c == 0 {
		return s.EntriesAdded
	} else if c > 0 {
		return -1
	}
	cf := id.Cmp(s.FirstID)
	if s.MaxDeletedEntryID.IsZero() || s.MaxDeletedEntryID.Cmp(s.FirstID) < 0 {
		if cf < 0 {
			return s.EntriesAdded - int64(s.length)
		} else if cf == 0 {
			return s.EntriesAdded - int64(s.length) + 1
		}
	}
	return -1
}

// Lag is a group's lag (ok false: unknown).
func (s *Stream) Lag(g *StreamCG) (int64, bool) {
	if s.EntriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != -1 && !s.HasTombstones(g.LastID) {
		return s.EntriesAdded - g.EntriesRead, true
	}
	if er := s.EstimateDistance(g.LastID); er != -1 {
		return s.EntriesAdded - er, true
	}
	return 0, false
}
