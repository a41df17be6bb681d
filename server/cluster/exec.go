package cluster

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/keyslot"
)

// Reply values returned by Exec, for the RESP layer to encode:
//
//	Status     simple string (+OK, +BUMPED 3)
//	Verbatim   bulk string (RESP3: verbatim "txt")
//	string     bulk string
//	int64      integer
//	[]any      array
//	Map        RESP3 map / RESP2 flat array of key, value, ...
//	error      error reply; Error() is the text without the leading '-'
type (
	Status   string
	Verbatim string
	Map      []any
)

// Env gives Exec what only the engine knows. Nil functions count as an empty
// keyspace.
type Env struct {
	// CountKeysInSlot returns the number of keys in slot.
	CountKeysInSlot func(slot int) int
	// GetKeysInSlot returns up to count keys of slot.
	GetKeysInSlot func(slot, count int) []string
	// DBEmpty reports whether the keyspace holds no key.
	DBEmpty func() bool
}

func (e Env) keys(slot int) int {
	if e.CountKeysInSlot == nil {
		return 0
	}
	return e.CountKeysInSlot(slot)
}

func (e Env) empty() bool { return e.DBEmpty == nil || e.DBEmpty() }

// Arities of the CLUSTER subcommands (Redis 7.0 command table: negative
// means at least). The server checks them from its command table before
// Exec runs (cmd_cluster.go); Exec checks them again because it is also
// called directly (tests, other owners of a Node) and indexes args by them.
var clusterArity = map[string]int{
	"addslots": -3, "addslotsrange": -4, "bumpepoch": 2, "count-failure-reports": 3, "countkeysinslot": 3,
	"delslots": -3, "delslotsrange": -4, "failover": -2, "flushslots": 2, "forget": 3, "getkeysinslot": 4,
	"help": 2, "info": 2, "keyslot": 3, "links": 2, "meet": -4, "myid": 2, "nodes": 2, "replicas": 3,
	"replicate": 3, "reset": -2, "saveconfig": 2, "set-config-epoch": 3, "setslot": -4, "shards": 2,
	"slaves": 3, "slots": 2,
}

var helpLines = []any{
	"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ADDSLOTS <slot> [<slot> ...]", "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"BUMPEPOCH", "COUNT-FAILURE-REPORTS <node-id>", "COUNTKEYSINSLOT <slot>", "DELSLOTS <slot> [<slot> ...]",
	"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]", "FAILOVER [FORCE|TAKEOVER]",
	"FORGET <node-id>", "FLUSHSLOTS", "GETKEYSINSLOT <slot> <count>", "INFO", "KEYSLOT <key>", "LINKS",
	"MEET <ip> <port> [<bus-port>]", "MYID", "NODES", "REPLICATE <node-id>", "RESET [HARD|SOFT]",
	"SET-CONFIG-EPOCH <epoch>", "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
	"REPLICAS <node-id>", "SAVECONFIG", "SHARDS", "SLOTS", "HELP",
}

func parseSlot(s string) (int, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v >= NumSlots {
		return 0, errors.New("ERR Invalid or out of range slot")
	}
	return int(v), nil
}

var errNotInt = errors.New("ERR value is not an integer or out of range")

// Exec runs a CLUSTER command (args[0] is "CLUSTER") on n and returns the
// reply value. The node's owner performs the outputs (config save,
// messages) of Ready before the reply is sent.
func Exec(n *Node, args []string, env Env) any {
	if len(args) < 2 {
		return errors.New("ERR wrong number of arguments for 'cluster' command")
	}
	sub := strings.ToLower(args[1])
	ar, ok := clusterArity[sub]
	if !ok {
		return fmt.Errorf("ERR unknown subcommand '%.128s'. Try CLUSTER HELP.", args[1])
	}
	if (ar > 0 && len(args) != ar) || (ar < 0 && len(args) < -ar) {
		return fmt.Errorf("ERR wrong number of arguments for 'cluster|%s' command", sub)
	}
	syntax := fmt.Errorf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try CLUSTER HELP.", args[1])
	okOr := func(err error) any {
		if err != nil {
			return err
		}
		return Status("OK")
	}
	switch sub {
	case "help":
		return helpLines
	case "meet":
		if len(args) > 5 {
			return syntax
		}
		port, err := strconv.ParseInt(args[3], 10, 64)
		if err != nil {
			return fmt.Errorf("ERR Invalid TCP base port specified: %s", args[3])
		}
		cport := port + 10000
		if len(args) == 5 {
			if cport, err = strconv.ParseInt(args[4], 10, 64); err != nil {
				return fmt.Errorf("ERR Invalid TCP bus port specified: %s", args[4])
			}
		}
		if err := n.Meet(args[2], int(port), int(cport)); err != nil {
			return fmt.Errorf("ERR Invalid node address specified: %s:%s", args[2], args[3])
		}
		return Status("OK")
	case "nodes":
		return Verbatim(n.NodesText())
	case "myid":
		return n.ID()
	case "slots":
		var out []any
		for _, r := range n.Slots() {
			e := []any{int64(r.Start), int64(r.End)}
			for _, sn := range r.Nodes {
				e = append(e, n.slotNodeReply(sn))
			}
			out = append(out, e)
		}
		return out
	case "shards":
		var out []any
		for _, sh := range n.Shards() {
			slots := []any{}
			for _, s := range sh.Slots {
				slots = append(slots, int64(s))
			}
			var nodes []any
			for _, x := range sh.Nodes {
				m := Map{"id", x.ID, "port", int64(x.Port), "ip", x.IP, "endpoint", x.Endpoint}
				if x.Hostname != "" {
					m = append(m, "hostname", x.Hostname)
				}
				nodes = append(nodes, append(m, "role", x.Role, "replication-offset", x.ReplOffset, "health", x.Health))
			}
			out = append(out, Map{"slots", slots, "nodes", nodes})
		}
		return out
	case "flushslots":
		return okOr(n.FlushSlots(env.empty()))
	case "addslots", "delslots":
		var slots []int
		for _, a := range args[2:] {
			s, err := parseSlot(a)
			if err != nil {
				return err
			}
			slots = append(slots, s)
		}
		if sub == "addslots" {
			return okOr(n.AddSlots(slots...))
		}
		return okOr(n.DelSlots(slots...))
	case "addslotsrange", "delslotsrange":
		if len(args)%2 == 1 {
			return fmt.Errorf("ERR wrong number of arguments for 'cluster|%s' command", sub)
		}
		var slots []int
		for i := 2; i < len(args); i += 2 {
			lo, err := parseSlot(args[i])
			if err != nil {
				return err
			}
			hi, err := parseSlot(args[i+1])
			if err != nil {
				return err
			}
			if lo > hi {
				return fmt.Errorf("ERR start slot number %d is greater than end slot number %d", lo, hi)
			}
			slots = append(slots, SlotRangeList(lo, hi)...)
		}
		if sub == "addslotsrange" {
			return okOr(n.AddSlots(slots...))
		}
		return okOr(n.DelSlots(slots...))
	case "setslot":
		if n.self.isSlave() {
			return errors.New("ERR Please use SETSLOT only with masters.")
		}
		slot, err := parseSlot(args[2])
		if err != nil {
			return err
		}
		action := strings.ToLower(args[3])
		bad := errors.New("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
		var a SlotAction
		switch {
		case action == "migrating" && len(args) == 5:
			a = SetSlotMigrating
		case action == "importing" && len(args) == 5:
			a = SetSlotImporting
		case action == "stable" && len(args) == 4:
			a = SetSlotStable
		case action == "node" && len(args) == 5:
			a = SetSlotNode
		default:
			return bad
		}
		id := ""
		if len(args) == 5 {
			id = args[4]
		}
		return okOr(n.SetSlot(slot, a, id, env.keys(slot)))
	case "bumpepoch":
		bumped, ep := n.BumpEpoch()
		if bumped {
			return Status(fmt.Sprintf("BUMPED %d", ep))
		}
		return Status(fmt.Sprintf("STILL %d", ep))
	case "info":
		return Verbatim(n.InfoText())
	case "saveconfig":
		n.SaveConfig()
		return Status("OK")
	case "keyslot":
		return int64(keyslot.Of(args[2]))
	case "countkeysinslot":
		s, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return errNotInt
		}
		if s < 0 || s >= NumSlots {
			return errors.New("ERR Invalid slot")
		}
		return int64(env.keys(int(s)))
	case "getkeysinslot":
		s, err1 := strconv.ParseInt(args[2], 10, 64)
		cnt, err2 := strconv.ParseInt(args[3], 10, 64)
		if err1 != nil || err2 != nil {
			return errNotInt
		}
		if s < 0 || s >= NumSlots || cnt < 0 {
			return errors.New("ERR Invalid slot or number of keys")
		}
		out := []any{}
		if env.GetKeysInSlot != nil {
			for _, k := range env.GetKeysInSlot(int(s), int(cnt)) {
				out = append(out, k)
			}
		}
		return out
	case "forget":
		return okOr(n.Forget(args[2]))
	case "replicate":
		return okOr(n.Replicate(args[2], env.empty()))
	case "slaves", "replicas":
		lines, err := n.ReplicasText(args[2])
		if err != nil {
			return err
		}
		out := []any{}
		for _, l := range lines {
			out = append(out, strings.TrimSuffix(l, "\n"))
		}
		return out
	case "count-failure-reports":
		c, err := n.CountFailureReports(args[2])
		if err != nil {
			return err
		}
		return int64(c)
	case "failover":
		mode := FailoverDefault
		if len(args) == 3 {
			switch strings.ToLower(args[2]) {
			case "force":
				mode = FailoverForce
			case "takeover":
				mode = FailoverTakeover
			default:
				return errors.New("ERR syntax error")
			}
		} else if len(args) > 3 {
			return errors.New("ERR syntax error")
		}
		return okOr(n.Failover(mode))
	case "set-config-epoch":
		ep, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return errNotInt
		}
		return okOr(n.SetConfigEpoch(ep))
	case "reset":
		hard := false
		if len(args) == 3 {
			switch strings.ToLower(args[2]) {
			case "hard":
				hard = true
			case "soft":
			default:
				return errors.New("ERR syntax error")
			}
		} else if len(args) > 3 {
			return errors.New("ERR syntax error")
		}
		return okOr(n.Reset(hard, env.empty()))
	case "links":
		out := []any{}
		for _, l := range n.Links() {
			out = append(out, Map{"direction", l.Direction, "node", l.Node, "create-time", l.CreateTime,
				"events", "rw", "send-buffer-allocated", int64(0), "send-buffer-used", int64(0)})
		}
		return out
	}
	return syntax
}
