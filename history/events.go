package history

import "strings"

// The nemesis process's entries (Process Nemesis) and their "f" names: the
// one list of them. The runner, the nemeses and the cluster admin write
// them; the checkers, the report and bench's result read them. doc.go says
// what each one means and carries.
const (
	// NodesEvent maps node names to addresses (detail a NodesDetail),
	// recorded by the runner before traffic starts: fault events name
	// nodes, client ops record addresses.
	NodesEvent = "nodes"
	// FinalReads marks the start of the final read phase, after healing.
	FinalReads = "final-reads"
	// Heal is the nemesis's healing at the end of the run (an invoke/info
	// pair, the nodes it touched on the info).
	Heal = "heal"
	// Journal is one step of the topology journal: a failover, a slot
	// move, a repair redline made, as it happened.
	Journal = "journal"
	// Compose is one step of a fault composition (strike, heal, census ...).
	Compose = "compose"
	// Handoff is one step of a slot handoff composed with another fault.
	Handoff = "handoff"
	// Audit is the foreign-data audit of a cluster redline did not create.
	Audit = "audit"
	// CensusEvent carries the end phase's key census (census.go).
	CensusEvent = "census"
)

// Fault events: a fault's start and stop are the entries "start-<fault>"
// and "stop-<fault>" (e.g. "start-partition"), each an invoke/info pair
// naming the nodes it touched.
const (
	startPrefix = "start-"
	stopPrefix  = "stop-"
)

// StartOf is the f of fault's start entry ("start-partition").
func StartOf(fault string) string { return startPrefix + fault }

// StopOf is the f of fault's stop entry ("stop-partition").
func StopOf(fault string) string { return stopPrefix + fault }

// StartedFault is the fault whose start f names ("partition" of
// "start-partition"); ok is false when f is no fault's start.
func StartedFault(f string) (fault string, ok bool) { return strings.CutPrefix(f, startPrefix) }

// StoppedFault is the fault whose stop f names; ok is false when f is no
// fault's stop.
func StoppedFault(f string) (fault string, ok bool) { return strings.CutPrefix(f, stopPrefix) }

// NodesDetail is the detail of a NodesEvent entry.
type NodesDetail struct {
	Addrs map[string]string `json:"addrs"` // node name -> "ip:port"
}

// Placement is the record of one slot a move moved (atomic task or classic
// move, done or not), in the detail of the migrate fault's start
// completion ({"placement":[...]}): the keys its source held before the
// move and the keys of source and destination after it, read with CLUSTER
// GETKEYSINSLOT once both sides had ended the move. The cluster admin
// writes it; the handoff checker reads it.
type Placement struct {
	Slot   int      `json:"slot"`
	From   string   `json:"from"`
	To     string   `json:"to"`
	Method string   `json:"method"`
	State  string   `json:"state"`
	Task   string   `json:"task,omitempty"`
	Before []string `json:"before"`
	Src    []string `json:"src"`
	Dst    []string `json:"dst"`
	Error  string   `json:"error,omitempty"`
	// Truncated: some side held more keys than were listed (not judged).
	Truncated bool `json:"truncated,omitempty"`
}
