package lock

import (
	"encoding/json"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// The lock workload's errors: the workload writes them and its checker
// reads them. Held and NotOwner are the op's own answer, not
// unavailability (checker.ServedError).
const (
	// Held: an acquire refused because the lock was taken (SET NX
	// answered nil): certainly not acquired.
	Held = "lock-held"
	// NotOwner: a release whose compare-and-delete found another
	// token (or none): certainly deleted nothing.
	NotOwner = "not-owner"
	// NotSent: a release never sent, because the run ended during its
	// hold.
	NotSent = "not-sent"
)

var _ = checker.ServedErrors(Held, NotOwner)

// The lock workload's ops, by their "f": the workload writes them and its
// checker reads them.
const (
	// Acquire takes the lock (SET NX PX) with a unique token.
	Acquire history.OpName = "acquire"
	// Release deletes the lock if it still holds the token.
	Release history.OpName = "release"
	// Clear deletes the lock once traffic has ended.
	Clear history.OpName = "clear"
)

// Value is the value of a lock op: an acquire's invocation carries
// Token and TTLms, its ok completion also Fence; a release's invocation
// carries Token and HoldMs (the release is sent HoldMs after its
// invocation: the hold's end), its ok completion the same value.
type Value struct {
	Token  string          `json:"token"`
	TTLms  int64           `json:"ttl_ms,omitempty"`
	HoldMs int64           `json:"hold_ms,omitempty"`
	Fence  json.RawMessage `json:"fence,omitempty"`
}
