package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// The RDB file around the values, as Redis 7.0's rdbSaveRio writes it and
// rdbLoadRioWithLoadingCtx reads it: the magic "REDIS0010", AUX fields
// (redis-ver, redis-bits, ctime, used-mem, repl-stream-db/repl-id/
// repl-offset when there is replication state, aof-base), the function
// libraries (FUNCTION2), then per non-empty database SELECTDB, RESIZEDB and
// its keys (an optional EXPIRETIME_MS, IDLE or FREQ before each type byte,
// key and value), and EOF with the CRC-64 of everything before it (zero
// when rdbchecksum is off: the loader then skips the check).

// Opcodes of the file (rdb.h).
const (
	OpFunction2  = 245
	OpFunction   = 246 // 7.0 release candidates only
	OpModuleAux  = 247
	OpIdle       = 248
	OpFreq       = 249
	OpAux        = 250
	OpResizeDB   = 251
	OpExpireMs   = 252
	OpExpireSec  = 253
	OpSelectDB   = 254
	OpEOF        = 255
	headerMagic  = "REDIS"
	headerLength = 9
)

// AppendHeader appends "REDIS0010".
func AppendHeader(b []byte) []byte { return fmt.Appendf(b, "%s%04d", headerMagic, Version) }

// AppendAux appends an AUX field; a value that is a canonical integer is
// integer encoded, as rdbSaveAuxFieldStrInt's strings are.
func AppendAux(b []byte, key, val string) []byte {
	b = append(b, OpAux)
	b = AppendString(b, []byte(key), false)
	return AppendString(b, []byte(val), false)
}

// AppendSelectDB appends SELECTDB n.
func AppendSelectDB(b []byte, n int) []byte { return AppendLen(append(b, OpSelectDB), uint64(n)) }

// AppendResizeDB appends the size hint of the selected database.
func AppendResizeDB(b []byte, keys, expires int) []byte {
	return AppendLen(AppendLen(append(b, OpResizeDB), uint64(keys)), uint64(expires))
}

// AppendExpireMs appends the absolute expiry (unix ms) of the next key.
func AppendExpireMs(b []byte, ms int64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, OpExpireMs), uint64(ms))
}

// AppendIdle appends the next key's LRU idle time in seconds.
func AppendIdle(b []byte, seconds int64) []byte {
	return AppendLen(append(b, OpIdle), uint64(max(seconds, 0)))
}

// AppendFreq appends the next key's LFU access counter (0-255).
func AppendFreq(b []byte, counter int64) []byte {
	return append(b, OpFreq, byte(min(max(counter, 0), 255)))
}

// AppendFunction appends one function library (its code, as FUNCTION LOAD
// takes it).
func AppendFunction(b []byte, code []byte) []byte {
	return AppendString(append(b, OpFunction2), code, true)
}

// AppendEOF appends EOF and the CRC-64 of b (of everything from the magic
// on), or 0 when checksum is false.
func AppendEOF(b []byte, checksum bool) []byte {
	b = append(b, OpEOF)
	var crc uint64
	if checksum {
		crc = CRC64(0, b)
	}
	return binary.LittleEndian.AppendUint64(b, crc)
}

// ErrChecksum is a file whose CRC-64 does not match its content.
var ErrChecksum = errors.New("RDB CRC error")

// Entry is one key of a file as the loader meets it: its database, its
// key, its value's type byte and the absolute expiry (unix ms, -1 none);
// Idle (seconds) and Freq are -1 when the file has none. Decode the value
// from R: the next bytes of the file are the value.
type Entry struct {
	DB       int
	Key      []byte
	Type     byte
	ExpireMs int64
	Idle     int64
	Freq     int
	R        *Reader
}

// Loader receives what a file holds, in file order. Any error stops the
// load and is returned by Load.
type Loader struct {
	Aux      func(key, val string)
	SelectDB func(n int) error
	ResizeDB func(keys, expires uint64)
	Function func(code []byte) error
	// Key must consume exactly the value's bytes from e.R.
	Key func(e *Entry) error
}

// Load reads a whole RDB file. verify says whether to check the CRC-64 (a
// stored zero is never checked, as Redis). It reads any version Redis 7.0
// reads (1 to 10); module values and module AUX data are refused.
func Load(data []byte, verify bool, l Loader) (version int, err error) {
	if len(data) < headerLength || string(data[:5]) != headerMagic {
		return 0, errors.New("Wrong signature trying to load DB from file")
	}
	version, err = strconv.Atoi(string(data[5:9]))
	if err != nil || version < 1 || version > Version {
		return version, fmt.Errorf("Can't handle RDB format version %d", version)
	}
	r := &Reader{B: data[headerLength:]}
	db := 0
	e := Entry{R: r}
	reset := func() { e.ExpireMs, e.Idle, e.Freq = -1, -1, -1 }
	reset()
	for {
		t := r.Byte()
		if r.Err != nil {
			return version, errShort
		}
		switch t {
		case OpExpireSec:
			e.ExpireMs = int64(int32(binary.LittleEndian.Uint32(pad(r.Raw(4), 4)))) * 1000
			continue
		case OpExpireMs:
			e.ExpireMs = int64(binary.LittleEndian.Uint64(pad(r.Raw(8), 8)))
			continue
		case OpFreq:
			e.Freq = int(r.Byte())
			continue
		case OpIdle:
			e.Idle = int64(r.Len())
			continue
		case OpEOF:
			if version >= 5 {
				end := len(data) - len(r.B)
				sum := r.Raw(8)
				if r.Err != nil {
					return version, errShort
				}
				if stored := binary.LittleEndian.Uint64(sum); verify && stored != 0 && stored != CRC64(0, data[:end]) {
					return version, ErrChecksum
				}
			}
			return version, nil
		case OpSelectDB:
			db = int(r.Len())
			if r.Err == nil && l.SelectDB != nil {
				if err := l.SelectDB(db); err != nil {
					return version, err
				}
			}
			continue
		case OpResizeDB:
			keys, expires := r.Len(), r.Len()
			if r.Err == nil && l.ResizeDB != nil {
				l.ResizeDB(keys, expires)
			}
			continue
		case OpAux:
			k, v := r.String(), r.String()
			if r.Err == nil && l.Aux != nil {
				l.Aux(string(k), string(v))
			}
			continue
		case OpModuleAux:
			return version, errors.New("The RDB file contains AUX module data I can't load: no matching module")
		case OpFunction:
			return version, errors.New("Pre-GA function format not supported")
		case OpFunction2:
			code := r.String()
			if r.Err != nil {
				return version, errShort
			}
			if l.Function != nil {
				if err := l.Function(code); err != nil {
					return version, err
				}
			}
			continue
		case TypeModule, TypeModule2:
			return version, errors.New("The RDB file contains module data I can't load: no matching module")
		}
		e.DB, e.Type = db, t
		e.Key = r.String()
		if r.Err != nil {
			return version, errShort
		}
		if err := l.Key(&e); err != nil {
			return version, err
		}
		if r.Err != nil {
			return version, errShort
		}
		reset()
	}
}

var errShort = errors.New("Short read or OOM loading DB. Unrecoverable error, aborting now.")

// pad keeps a short read (nil, the error already stuck) from panicking.
func pad(b []byte, n int) []byte {
	if len(b) < n {
		return make([]byte, n)
	}
	return b
}
