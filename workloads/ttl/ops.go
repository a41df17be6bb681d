package ttl

import (
	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// Value is the value of a ttl op (the workload writes them; one
// type for every op). Field is set on the hash-field ops (HSET +
// HPEXPIRE, HPERSIST, HPTTL: Redis 7.4's hash-field expiration), empty on
// the key ops (SET ... PX, PEXPIRE, PERSIST, PTTL).
//   - set: invoke {value, ttl_ms} (ttl 0: no expiry); ok the same.
//   - pexpire: invoke {ttl_ms}; ok adds reply (PEXPIRE: 1 set, 0 no key;
//     HPEXPIRE's code for the field: 1 set, -2 no field).
//   - persist: invoke {}; ok adds reply (PERSIST: 1 removed, 0 no key or
//     no expiry; HPERSIST: 1 removed, -1 no expiry, -2 no field).
//   - read: ok {got, pttl} in one MULTI (GET/HGET and PTTL/HPTTL): got
//     absent and pttl -2 when there is no key (field); pttl -1 when it has
//     no expiry.
//   - final: a read, then DEL of the key, in one MULTI: once traffic has
//     ended (the end phase must not see a key expire between the reads of
//     a primary and its replica); no op of its key may follow it.
//   - probe (an init op): ok {hash_field_expiry, missing}: whether the
//     server has HPEXPIRE, HPERSIST and HPTTL (COMMAND INFO).
type Value struct {
	Field string  `json:"field,omitempty"`
	Value string  `json:"value,omitempty"`
	TTLms int64   `json:"ttl_ms,omitempty"`
	Reply *int64  `json:"reply,omitempty"`
	Got   *string `json:"got,omitempty"`
	PTTL  *int64  `json:"pttl,omitempty"`

	HashFieldExpiry *bool    `json:"hash_field_expiry,omitempty"`
	Missing         []string `json:"missing,omitempty"`
}

// The ttl workload's ops, by their "f" (the workload writes them); its
// reads are checker.OpRead.
const (
	// Set sets a key (or hash field) to a unique value, with or
	// without an expiry.
	Set history.OpName = "set"
	// PExpire moves an expiry (PEXPIRE, HPEXPIRE).
	PExpire history.OpName = "pexpire"
	// Persist removes an expiry (PERSIST, HPERSIST).
	Persist history.OpName = "persist"
	// Final reads, then deletes, a key once traffic has ended.
	Final history.OpName = "final"
	// Probe asks whether the server has hash-field expiration (an
	// init op).
	Probe history.OpName = "probe"
)

// The probe only asks COMMAND INFO: it writes nothing to its key, so a
// slot move finds that key on neither side by design (the handoff and
// write-pause checkers skip it).
var _ = checker.ReadOnlyOps(Probe)

// A set leaves its value in the key, as a register's write does: the
// attribution tells which write a read saw by it.
var _ = checker.ValueWrites(Set)
