package adversary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/redline-dev/redline/history"
)

// Lies of the witnesses the checkers believe: the census, the heal
// record, the topology samples, the history file itself.

// census decodes the run's census (the history entry) for editing.
func (r *Run) census() (*history.Census, bool) {
	c := history.CensusOf(r.Ops)
	if c == nil {
		return nil, false
	}
	// CensusOf may share maps with the entry's decoded form: decode a
	// private copy.
	var own history.Census
	b, _ := json.Marshal(c)
	if json.Unmarshal(b, &own) != nil {
		return nil, false
	}
	return &own, true
}

// setCensus writes c back where the runner writes it: the history's
// census entry and census.json, alike.
func (r *Run) setCensus(c *history.Census) {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	if i := r.nemesisEntry(history.CensusEvent, history.Info); i >= 0 {
		r.Ops[i].SetDetail(b)
	}
	if _, ok := r.Files[CensusFile]; ok {
		r.Files[CensusFile] = b
	}
}

// censusKey is one key the census found on a primary.
type censusKey struct {
	node int
	key  string
}

func primaryKeys(c *history.Census, keep func(history.CensusKey) bool) []censusKey {
	var out []censusKey
	for i, n := range c.Nodes {
		if n.Role != "primary" {
			continue
		}
		for _, k := range sortedKeys(n.Keys) {
			if keep(n.Keys[k]) {
				out = append(out, censusKey{i, k})
			}
		}
	}
	return out
}

// writtenBy says which kind of op wrote key in the run: "register"
// (write/cas), "add" (counter or set) or "".
func (r *Run) writtenBy() map[string]string {
	out := map[string]string{}
	for i := range r.Ops {
		op := &r.Ops[i]
		if op.Process == history.Nemesis || op.Type != history.Invoke {
			continue
		}
		switch op.F {
		case "write", "cas":
			out[op.Key] = "register"
		case "add":
			if out[op.Key] == "" {
				out[op.Key] = "add"
			}
		}
	}
	return out
}

var witnessMutations = []Mutation{
	{
		Name: "census-impossible-value", Kind: Lie, Checker: "census",
		Class: "the census holds a value no write could have produced",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, ok := r.census()
			if !ok {
				return "", ErrNotApplicable
			}
			by := r.writtenBy()
			ks := primaryKeys(c, func(k history.CensusKey) bool { return k.Value != nil || len(k.Members) > 0 })
			var judged []censusKey
			for _, k := range ks {
				if by[k.key] != "" {
					judged = append(judged, k)
				}
			}
			k, ok := pick(rng, judged)
			if !ok {
				return "", ErrNotApplicable
			}
			ck := c.Nodes[k.node].Keys[k.key]
			switch {
			case len(ck.Members) > 0:
				ck.Members = append(ck.Members, strconv.Itoa(neverWritten))
			case by[k.key] == "register":
				s := strconv.Itoa(neverWritten)
				ck.Value = &s
			default:
				// A counter: above the sum of every add sent.
				var sum int64
				for i := range r.Ops {
					if op := &r.Ops[i]; op.Type == history.Invoke && op.F == "add" && op.Key == k.key {
						d, _ := op.Int()
						sum += d
					}
				}
				s := strconv.FormatInt(sum+neverWritten, 10)
				ck.Value = &s
			}
			c.Nodes[k.node].Keys[k.key] = ck
			r.setCensus(c)
			return fmt.Sprintf("census: %s on %s now holds %v%v", k.key, c.Nodes[k.node].Name, deref(ck.Value), ck.Members), nil
		},
	},
	{
		Name: "census-key-off-its-owner", Kind: Lie, Checker: "end-phase",
		Class: "the census finds a key on a primary that does not own its slot (disagrees with the slot map)",
		Gap:   noEndPhase,
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, ok := r.census()
			if !ok {
				return "", ErrNotApplicable
			}
			k, ok := pick(rng, primaryKeys(c, func(history.CensusKey) bool { return true }))
			if !ok {
				return "", ErrNotApplicable
			}
			var others []int
			for i, n := range c.Nodes {
				if n.Role == "primary" && i != k.node {
					others = append(others, i)
				}
			}
			to, ok := pick(rng, others)
			if !ok {
				return "", ErrNotApplicable
			}
			from := c.Nodes[k.node]
			c.Nodes[to].Keys[k.key] = from.Keys[k.key]
			delete(from.Keys, k.key)
			r.setCensus(c)
			return fmt.Sprintf("census: %s (slot %d) moved from its owner %s to %s", k.key, history.Keyslot(k.key), from.Name, c.Nodes[to].Name), nil
		},
	},
	{
		Name: "census-slot-two-owners", Kind: Lie, Checker: "end-phase",
		Class: "the census shows two primaries claiming a slot that holds a key, while the heal record says clean",
		Gap:   noEndPhase,
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, ok := r.census()
			if !ok {
				return "", ErrNotApplicable
			}
			k, ok := pick(rng, primaryKeys(c, func(history.CensusKey) bool { return true }))
			if !ok {
				return "", ErrNotApplicable
			}
			slot := history.Keyslot(k.key)
			owner := c.Nodes[k.node].ID
			var other string
			for _, n := range c.Nodes {
				if n.Role == "primary" && n.ID != owner {
					other = n.ID
					break
				}
			}
			if other == "" {
				return "", ErrNotApplicable
			}
			// Every node's view (the other primary's own included) says
			// both own it.
			for i := range c.Nodes {
				for j := range c.Nodes[i].View {
					if p := &c.Nodes[i].View[j]; p.ID == other {
						p.Ranges = append(p.Ranges, [2]int{slot, slot})
					}
				}
			}
			r.setCensus(c)
			return fmt.Sprintf("census: slot %d (key %s) now claimed by %s beside its owner %s", slot, k.key, other, owner), nil
		},
	},
	{
		Name: "census-slot-left-open", Kind: Lie, Checker: "end-phase",
		Class: "the census finds a slot holding a key left MIGRATING, while the heal record says clean",
		Gap:   noEndPhase,
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, ok := r.census()
			if !ok {
				return "", ErrNotApplicable
			}
			k, ok := pick(rng, primaryKeys(c, func(history.CensusKey) bool { return true }))
			if !ok {
				return "", ErrNotApplicable
			}
			slot := history.Keyslot(k.key)
			n := &c.Nodes[k.node]
			var peer string
			for _, o := range c.Nodes {
				if o.Role == "primary" && o.ID != n.ID {
					peer = o.ID
				}
			}
			n.Migrating = append(n.Migrating, slot)
			n.Open = append(n.Open, fmt.Sprintf("slot %d MIGRATING to %s", slot, peer))
			r.setCensus(c)
			return fmt.Sprintf("census: slot %d (key %s) left migrating on its owner %s", slot, k.key, n.Name), nil
		},
	},
	{
		Name: "census-missing", Kind: Lie, Checker: "census",
		Class: "the census is gone (no history entry, no census.json)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			i := r.nemesisEntry(history.CensusEvent, history.Info)
			if i < 0 {
				return "", ErrNotApplicable
			}
			r.remove(i)
			delete(r.Files, CensusFile)
			return "census entry and census.json removed", nil
		},
	},
	{
		Name: "heal-unhealed-without-problem", Kind: Lie, Checker: "end-phase",
		Class: "the heal record says not healed and names no problem",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			return r.editEndPhase(func(ep map[string]any) string {
				ep["healed"] = false
				ep["problems"] = []any{}
				return "end_phase healed:false, problems []"
			})
		},
	},
	{
		Name: "heal-record-missing", Kind: Lie, Checker: "end-phase",
		Class: "the heal record is gone (the end phase said nothing)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			i := r.nemesisEntry(history.Heal, history.Info)
			if i < 0 {
				return "", ErrNotApplicable
			}
			r.remove(i)
			return "heal info entry removed", nil
		},
	},
}

// noEndPhase is the gap of the census' slot-map lies in a run without
// faults.
const noEndPhase = "a run without faults has no end phase, and only the end-phase checker reads the census' slot map: " +
	"in such a run the slot map is not cross-examined"

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// editEndPhase edits the end_phase object of the heal info entry.
func (r *Run) editEndPhase(edit func(map[string]any) string) (string, error) {
	i := r.nemesisEntry(history.Heal, history.Info)
	if i < 0 {
		return "", ErrNotApplicable
	}
	var d map[string]any
	if json.Unmarshal(r.Ops[i].DetailRaw(), &d) != nil {
		return "", ErrNotApplicable
	}
	ep, ok := d["end_phase"].(map[string]any)
	if !ok {
		return "", ErrNotApplicable
	}
	what := edit(ep)
	b, _ := json.Marshal(d)
	r.Ops[i].SetDetail(b)
	return what, nil
}

// encodeOps is the history file of r.Ops.
func (r *Run) encodeOps() []byte {
	var buf bytes.Buffer
	for i := range r.Ops {
		if err := history.Encode(&buf, &r.Ops[i]); err != nil {
			panic(err)
		}
	}
	return buf.Bytes()
}
