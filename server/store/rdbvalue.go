package store

import "github.com/redline-dev/redline/server/rdb"

// ErrEmptyKey is a value with no element (a set, list, hash or sorted set
// of length 0): Redis's loader skips such a key (RDB_LOAD_ERR_EMPTY_KEY)
// where RESTORE refuses it.
var ErrEmptyKey = rdbError("empty key")

type rdbError string

func (e rdbError) Error() string { return string(e) }

// DecodeValue reads a value of type t (an RDB file's type byte) from r into
// a new object with db's encoding limits, as RDB loading does. It returns
// ErrEmptyKey for an empty aggregate and rdb.ErrFormat for anything else
// it cannot decode (module values included).
func (db *DB) DecodeValue(r *rdb.Reader, t byte) (*Object, error) {
	o, err := decodeValue(r, t, db.limits)
	if err != nil || r.Err != nil {
		return nil, rdb.ErrFormat
	}
	if o.Kind != KindString && o.Kind != KindStream && o.Len() == 0 {
		return nil, ErrEmptyKey
	}
	return o, nil
}

// EachStored calls fn for every stored key, expired or not (an RDB file
// holds keys whose time has passed but that were not yet deleted, as
// Redis's rdbSaveDb), until fn returns false.
func (db *DB) EachStored(fn func(o *Object) bool) {
	for _, o := range db.order {
		if !fn(o) {
			return
		}
	}
}
