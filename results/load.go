package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// runData is everything a report is drawn from: the run's config (kept as
// generic JSON so that new parameters show without a change here), its
// verdicts and its history.
type runData struct {
	run  *Run
	cfg  map[string]any
	sum  checker.Summary
	ops  []history.Op
	torn bool
	// byIndex maps an op index to its position in ops; nil when every
	// entry's index is its position (as the recorder writes them): a map
	// of a 10M-entry history's indexes alone took hundreds of megabytes.
	byIndex  map[int64]int
	nodeName map[string]string // "ip:port" and node id -> n1, n2 ...
	groups   []AnomalyGroup    // the attributions grouped by cause (anomalyGroups)
	// big is what a report of a big history read of it (bounded.go); nil
	// when ops is the whole history.
	big *boundedRead
	// asked, when set, records the indexes op is asked for (reportNeeds).
	asked map[int64]bool
}

func loadRun(r *Run) (*runData, error) {
	return loadRunWith(r, nil)
}

// loadRunWith is loadRun with the history already read (nil: read it from
// the run's history file, history.Path).
func loadRunWith(r *Run, h *history.ReadResult) (*runData, error) {
	d := &runData{run: r, cfg: map[string]any{}}
	sum, err := r.Summary()
	if err != nil {
		return nil, err
	}
	d.sum = sum
	_ = r.ReadJSON("config.json", &d.cfg) // a run without one still gets a report
	if h == nil && bigHistory(history.Path(r.Dir)) {
		d.nodeName = nodeNames(r)
		if err := d.readBounded(history.Path(r.Dir)); err != nil {
			return nil, fmt.Errorf("the report needs a readable history: %w", err)
		}
		d.byIndex = make(map[int64]int, len(d.ops))
		for i := range d.ops {
			d.byIndex[d.ops[i].Index] = i
		}
		return d, nil
	}
	if h == nil {
		if read, err := history.ReadRun(r.Dir); err == nil {
			h = &read
		} else if !os.IsNotExist(err) {
			return nil, fmt.Errorf("the report needs a readable history: %w", err)
		}
	}
	if h != nil {
		d.ops, d.torn = h.Ops, h.TruncatedTail
	}
	dense := true
	for i := range d.ops {
		if d.ops[i].Index != int64(i) {
			dense = false
			break
		}
	}
	if !dense {
		d.byIndex = make(map[int64]int, len(d.ops))
		for i := range d.ops {
			d.byIndex[d.ops[i].Index] = i
		}
	}
	d.nodeName = nodeNames(r)
	return d, nil
}

// pos is the position in ops of the entry with the given index.
func (d *runData) pos(index int64) (int, bool) {
	if d.byIndex == nil {
		if index < 0 || index >= int64(len(d.ops)) {
			return 0, false
		}
		return int(index), true
	}
	i, ok := d.byIndex[index]
	return i, ok
}

// nodeNames maps each node's address and id to its name (n1, n2 ...) from
// the "myself" line of the CLUSTER NODES snapshots under nodes/<name>/.
func nodeNames(r *Run) map[string]string {
	out := map[string]string{}
	dirs, _ := os.ReadDir(r.Path("nodes"))
	for _, e := range dirs {
		if !e.IsDir() {
			continue
		}
		files, _ := filepath.Glob(r.Path("nodes", e.Name(), "cluster-nodes*.txt"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, n := range parseClusterNodes(string(b)) {
				if n.myself {
					out[n.addr] = e.Name()
					out[n.id] = e.Name()
				}
			}
		}
	}
	return out
}

// name returns a node's short name when known, else the address itself.
func (d *runData) name(addrOrID string) string {
	if n, ok := d.nodeName[addrOrID]; ok {
		return n
	}
	return addrOrID
}

func (d *runData) str(key string) string {
	return cfgString(d.cfg, key)
}

func cfgString(cfg map[string]any, key string) string {
	switch v := cfg[key].(type) {
	case nil:
		return ""
	case string:
		return v
	case []any:
		parts := make([]string, 0, len(v))
		for _, x := range v {
			parts = append(parts, fmt.Sprint(x))
		}
		return strings.Join(parts, ",")
	case float64:
		return trimFloat(v)
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// duration is the time of the last history entry, in seconds.
func (d *runData) duration() float64 {
	if d.big != nil {
		return float64(d.big.end) / 1e9
	}
	var end int64
	for i := range d.ops {
		end = max(end, d.ops[i].Time)
	}
	return float64(end) / 1e9
}

// checkerNames returns the checker names sorted.
func (d *runData) checkerNames() []string {
	names := make([]string, 0, len(d.sum.Checkers))
	for n := range d.sum.Checkers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// op returns the history entry with the given index.
func (d *runData) op(index int64) (*history.Op, bool) {
	if d.asked != nil {
		d.asked[index] = true
		return nil, false
	}
	i, ok := d.pos(index)
	if !ok {
		return nil, false
	}
	return &d.ops[i], true
}

// completion returns the completion of the invocation at index, if any.
func (d *runData) completion(index int64) (*history.Op, bool) {
	i, ok := d.pos(index)
	if !ok {
		return nil, false
	}
	inv := &d.ops[i]
	if inv.Type != history.Invoke {
		return inv, true
	}
	for j := i + 1; j < len(d.ops); j++ {
		if d.ops[j].Process == inv.Process {
			return &d.ops[j], true
		}
	}
	return nil, false
}

// num reads a figure as a number.
func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case []any:
		return float64(len(x)), true
	}
	return 0, false
}

// figure reads a numeric figure of a checker's result.
func figure(f map[string]any, key string) float64 {
	v, _ := num(f[key])
	return v
}
