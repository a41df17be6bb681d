// The engine's keyspace as every command family reads and writes it: the
// client's database, typed lookup (WRONGTYPE, hit and miss counts), create
// on write, delete when emptied, and the string and STORE-result writes
// several families share. Command files stand on these; they never call
// each other.

package server

import "github.com/redline-dev/redline/server/store"

// lookup returns the live object at key, or nil; if it exists with another
// kind than want it replies WRONGTYPE and returns ok=false.
func (c *Client) lookup(key []byte, want store.Kind) (*store.Object, bool) {
	o := c.kv().Get(key)
	if o == nil {
		c.s.stats.keyspaceMisses++
		c.notifyMiss(key)
		return nil, true
	}
	c.s.stats.keyspaceHits++
	if o.Kind != want {
		c.Error(ErrWrongType)
		return nil, false
	}
	return o, true
}

// getOrCreate returns the object at key of kind k, creating it if missing.
func (c *Client) getOrCreate(key []byte, k store.Kind) (*store.Object, bool) {
	o, ok := c.lookup(key, k)
	if !ok {
		return nil, false
	}
	if o == nil {
		o = store.NewObject(k)
		c.kv().Add(key, o)
	}
	return o, true
}

// dropIfEmpty deletes a container that became empty.
func (c *Client) dropIfEmpty(o *store.Object) {
	if o.Len() == 0 {
		c.kv().Remove(o)
		c.notify(notifyGeneric, "del", []byte(o.Key()))
	}
}

// setString stores val at key as a string, reusing an existing string
// object's buffer. keepTTL keeps the old expiry; otherwise it is cleared.
func (c *Client) setString(key, val []byte, keepTTL bool) *store.Object {
	db := c.kv()
	o := db.Get(key)
	if o != nil && o.Kind == store.KindString {
		if cap(o.Str) >= len(val) && cap(o.Str) <= 2*len(val)+64 {
			o.Str = append(o.Str[:0], val...)
		} else {
			o.Str = copyBytes(val)
		}
		if !keepTTL && o.ExpireAt != 0 {
			db.SetExpire(o, 0)
		}
		o.SetRaw(false)
		return o
	}
	n := &store.Object{Kind: store.KindString, Str: copyBytes(val)}
	if o != nil {
		if keepTTL {
			n.ExpireAt = o.ExpireAt
		}
		db.Set(key, n)
	} else {
		db.Add(key, n)
	}
	return n
}

// storeResult replaces whatever is at key with o, or deletes key when o is
// empty, as Redis's *STORE commands do.
func (c *Client) storeResult(key []byte, o *store.Object) {
	db := c.kv()
	if o.Len() == 0 {
		if db.Delete(key) {
			c.s.dirty++
			c.notify(notifyGeneric, "del", key)
		}
		return
	}
	db.Delete(key)
	db.Add(key, o)
	c.s.dirty++
	// The event is the command's name: sinterstore, zunionstore,
	// zrangestore... in the class of the stored type.
	if o.Kind == store.KindSet {
		c.notify(notifySet, c.cmd.Name, key)
	} else {
		c.notify(notifyZSet, c.cmd.Name, key)
	}
}

// alreadyExpired is Redis's checkAlreadyExpired: a write that sets a time
// in the past deletes the key, except while a file loads (an AOF's SET
// PXAT of a key that expired while the server was down: a replica must
// keep it for its master to expire) and on a replica (its master decides).
func (s *Server) alreadyExpired(when, now int64) bool {
	return when <= now && !s.loading && !s.repl.isReplica()
}
