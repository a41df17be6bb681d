package bench

// Capacity planning: the load per slot and per shard as the clients saw it
// (ok ops and key+value bytes by slot, the hottest slots, the skew across
// the primaries), and, where the server supports it, CLUSTER SLOT-STATS of
// every primary beside it (Redis 8.2+, the reference server): key-count
// always, cpu-usec and network bytes with cluster-slot-stats-enabled. A
// capacity change (adding a shard, resharding) should move the hot slots
// and even out the shard imbalance this shows.

import (
	"context"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redline-dev/redline/workloads/client"
)

// slotCounts are a worker's cumulative per-slot figures (whole run; not
// drained per second). Allocated on the first recorded op.
type slotCounts struct {
	ops   [numSlots]int64
	bytes [numSlots]int64
	// byNode are the ok ops by the node that answered them (after any
	// redirect), by router node number.
	byNode []int64
}

// topSlotsShown is how many hot slots the summary and report list.
const topSlotsShown = 10

// LoadReport is the capacity-planning view of a run.
type LoadReport struct {
	SlotsTouched int `json:"slots_touched"`
	// TopSlots are the busiest slots by client ops, with the server's
	// figures for the same slot where it reported them.
	TopSlots []SlotLoad `json:"top_slots"`
	// Shards are the primaries as at the start (each initial primary's
	// slots), busiest first.
	Shards []ShardLoad `json:"shards"`
	// ShardSkew is the busiest shard's ops over the mean per shard (1 =
	// even); SlotSkew the busiest slot's over the mean per touched slot.
	ShardSkew float64 `json:"shard_skew"`
	SlotSkew  float64 `json:"slot_skew"`
	// Server is CLUSTER SLOT-STATS per current primary, when supported.
	Server []ServerShard `json:"server,omitempty"`
	// ServerTop are the server's busiest slots (by cpu-usec when counted,
	// else key-count), across primaries.
	ServerTop []ServerSlot `json:"server_top,omitempty"`
	// ServerNote says why server figures are missing or partial.
	ServerNote string `json:"server_note,omitempty"`
	// SlotsMoved counts the slots whose primary at the end is not their
	// primary at the start (a plan's scale-out, reshard or failover, a
	// nemesis); Nodes then says which node answered the ops, since the
	// shards above are the start's.
	SlotsMoved int          `json:"slots_moved"`
	Nodes      []NodeServed `json:"nodes,omitempty"`
}

// NodeServed is one node's part of a run whose slots changed hands: the
// ok ops it answered (after any MOVED or ASK), and the slots it owned as
// primary at the start and at the end.
type NodeServed struct {
	Node       string  `json:"node"`
	Addr       string  `json:"addr"`
	SlotsStart int     `json:"slots_start"`
	SlotsEnd   int     `json:"slots_end"`
	Ops        int64   `json:"ops"`
	OpsPerS    float64 `json:"ops_per_s"` // over the whole run
	Share      float64 `json:"share"`     // of all ok ops
}

// SlotLoad is one slot's client-side load.
type SlotLoad struct {
	Slot    int         `json:"slot"`
	Shard   string      `json:"shard"`
	Ops     int64       `json:"ops"`
	OpsPerS float64     `json:"ops_per_s"`
	Bytes   int64       `json:"bytes"`
	Share   float64     `json:"share"` // of all ok ops
	Server  *ServerSlot `json:"server,omitempty"`
}

// ShardLoad is one shard's client-side load.
type ShardLoad struct {
	Shard        string  `json:"shard"`
	Slots        int     `json:"slots"` // owned at the start
	SlotsTouched int     `json:"slots_touched"`
	Ops          int64   `json:"ops"`
	OpsPerS      float64 `json:"ops_per_s"`
	Bytes        int64   `json:"bytes"`
	Share        float64 `json:"share"`
}

// ServerSlot is one slot's CLUSTER SLOT-STATS entry (-1: not reported).
type ServerSlot struct {
	Slot        int    `json:"slot"`
	Node        string `json:"node"`
	KeyCount    int64  `json:"key_count"`
	CPUUsec     int64  `json:"cpu_usec"`
	MemoryBytes int64  `json:"memory_bytes"`
	NetIn       int64  `json:"network_bytes_in"`
	NetOut      int64  `json:"network_bytes_out"`
}

// ServerShard sums one primary's CLUSTER SLOT-STATS.
type ServerShard struct {
	Node      string `json:"node"`
	Supported bool   `json:"supported"`
	Error     string `json:"error,omitempty"`
	Slots     int    `json:"slots"`
	// Counted: cluster-slot-stats-enabled was on (CPU and network figures).
	Counted     bool  `json:"counted"`
	KeyCount    int64 `json:"key_count"`
	CPUUsec     int64 `json:"cpu_usec"`
	MemoryBytes int64 `json:"memory_bytes"`
	NetIn       int64 `json:"network_bytes_in"`
	NetOut      int64 `json:"network_bytes_out"`
}

// loadReport sums the workers' per-slot counts (after traffic).
func (e *engine) loadReport(elapsed time.Duration) *LoadReport {
	if e.slotShard == nil {
		return nil
	}
	var ops, bytes [numSlots]int64
	for _, w := range e.workers {
		w.stats.mu.Lock()
		if sc := w.stats.slots; sc != nil {
			for s := 0; s < numSlots; s++ {
				ops[s] += sc.ops[s]
				bytes[s] += sc.bytes[s]
			}
		}
		w.stats.mu.Unlock()
	}
	return buildLoad(ops[:], bytes[:], e.slotShard, e.gaps.names, elapsed.Seconds())
}

// addServed adds, when slots changed hands during the run, the ops by
// the node that answered them and each node's slots at the start and at
// the end (topo, refreshed by serverSlotStats just before), over secs of
// traffic.
func (e *engine) addServed(r *LoadReport, topo *client.Client, secs float64) {
	if r == nil {
		return
	}
	var served []int64
	for _, w := range e.workers {
		w.stats.mu.Lock()
		if sc := w.stats.slots; sc != nil {
			for n, v := range sc.byNode {
				if n >= len(served) {
					served = append(served, make([]int64, n+1-len(served))...)
				}
				served[n] += v
			}
		}
		w.stats.mu.Unlock()
	}
	start := make([]string, numSlots)
	end := make([]string, numSlots)
	for s := 0; s < numSlots; s++ {
		start[s] = e.shardAddrs[e.slotShard[s]]
		end[s] = topo.Primary(s)
	}
	byAddr := map[string]int64{}
	for n, v := range served {
		byAddr[e.router.addr(uint32(n))] += v
	}
	r.addServed(start, end, byAddr, e.nameOf, secs)
}

// nameOf names a node by address: the run's name for it (n7 for a node a
// scale-out added), else its address.
func (e *engine) nameOf(addr string) string {
	if e.o.NameOf != nil {
		if n := e.o.NameOf(addr); n != "" {
			return n
		}
	}
	if n, ok := e.o.NodeNames[addr]; ok {
		return n
	}
	return addr
}

// addServed is the pure part: start and end are each slot's primary
// ("" for none), served the ok ops by the address that answered them.
func (r *LoadReport) addServed(start, end []string, served map[string]int64, name func(string) string, secs float64) {
	r.SlotsMoved = 0
	for s := range start {
		if start[s] != end[s] {
			r.SlotsMoved++
		}
	}
	if r.SlotsMoved == 0 {
		return
	}
	nodes := map[string]*NodeServed{}
	get := func(a string) *NodeServed {
		if nodes[a] == nil {
			nodes[a] = &NodeServed{Node: name(a), Addr: a}
		}
		return nodes[a]
	}
	for s := range start {
		if start[s] != "" {
			get(start[s]).SlotsStart++
		}
		if end[s] != "" {
			get(end[s]).SlotsEnd++
		}
	}
	var total int64
	for a, v := range served {
		get(a).Ops += v
		total += v
	}
	secs = max(secs, 1e-9)
	r.Nodes = r.Nodes[:0]
	for _, n := range nodes {
		n.OpsPerS = float64(n.Ops) / secs
		if total > 0 {
			n.Share = float64(n.Ops) / float64(total)
		}
		r.Nodes = append(r.Nodes, *n)
	}
	slices.SortFunc(r.Nodes, func(a, b NodeServed) int { return strings.Compare(nodeOrder(a.Node), nodeOrder(b.Node)) })
}

// nodeOrder sorts n2 before n10, names before addresses.
func nodeOrder(name string) string {
	if len(name) > 1 && name[0] == 'n' {
		if _, err := fmt.Sscanf(name[1:], "%d", new(int)); err == nil {
			return fmt.Sprintf("n%06s", name[1:])
		}
	}
	return "~" + name
}

// buildLoad is the pure part of loadReport.
func buildLoad(ops, bytes []int64, slotShard []uint16, names []string, secs float64) *LoadReport {
	r := &LoadReport{}
	secs = max(secs, 1e-9)
	shards := make([]ShardLoad, len(names))
	for i, n := range names {
		shards[i].Shard = n
	}
	var total int64
	var touched []int
	for s := 0; s < numSlots; s++ {
		sh := &shards[slotShard[s]]
		sh.Slots++
		if ops[s] == 0 {
			continue
		}
		touched = append(touched, s)
		total += ops[s]
		sh.SlotsTouched++
		sh.Ops += ops[s]
		sh.Bytes += bytes[s]
	}
	r.SlotsTouched = len(touched)
	share := func(n int64) float64 {
		if total == 0 {
			return 0
		}
		return float64(n) / float64(total)
	}
	var busiest int64
	for i := range shards {
		shards[i].OpsPerS = float64(shards[i].Ops) / secs
		shards[i].Share = share(shards[i].Ops)
		busiest = max(busiest, shards[i].Ops)
	}
	if len(shards) > 0 && total > 0 {
		r.ShardSkew = float64(busiest) / (float64(total) / float64(len(shards)))
	}
	slices.SortStableFunc(shards, func(a, b ShardLoad) int { return int(b.Ops - a.Ops) })
	r.Shards = shards
	slices.SortStableFunc(touched, func(a, b int) int {
		if ops[a] != ops[b] {
			if ops[a] > ops[b] {
				return -1
			}
			return 1
		}
		return a - b
	})
	if len(touched) > 0 {
		r.SlotSkew = float64(ops[touched[0]]) / (float64(total) / float64(len(touched)))
	}
	for _, s := range touched[:min(len(touched), topSlotsShown)] {
		r.TopSlots = append(r.TopSlots, SlotLoad{Slot: s, Shard: names[slotShard[s]], Ops: ops[s], OpsPerS: float64(ops[s]) / secs,
			Bytes: bytes[s], Share: share(ops[s])})
	}
	return r
}

// serverSlotStats reads CLUSTER SLOT-STATS SLOTSRANGE 0 16383 from every
// current primary and adds it to r.
func (r *LoadReport) serverSlotStats(ctx context.Context, topo *client.Client) {
	if r == nil {
		return
	}
	if err := topo.Refresh(ctx); err != nil {
		r.ServerNote = "could not read the topology for CLUSTER SLOT-STATS: " + err.Error()
		return
	}
	seen := map[string]bool{}
	var primaries []string
	for s := 0; s < numSlots; s++ {
		if a := topo.Primary(s); a != "" && !seen[a] {
			seen[a] = true
			primaries = append(primaries, a)
		}
	}
	slices.Sort(primaries)
	replies := map[string][]any{}
	errs := map[string]error{}
	for _, addr := range primaries {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := topo.Node(addr).Do(cctx, "cluster", "slot-stats", "slotsrange", 0, numSlots-1).Slice()
		cancel()
		replies[addr], errs[addr] = v, err
	}
	r.mergeServer(primaries, replies, errs)
}

// mergeServer adds the primaries' SLOT-STATS replies (or errors) to r.
func (r *LoadReport) mergeServer(primaries []string, replies map[string][]any, errs map[string]error) {
	bySlot := map[int]*ServerSlot{}
	supported := 0
	for _, addr := range primaries {
		sh := ServerShard{Node: addr}
		if err := errs[addr]; err != nil {
			sh.Error = err.Error()
			r.Server = append(r.Server, sh)
			continue
		}
		sh.Supported = true
		supported++
		for _, x := range replies[addr] {
			ss, ok := parseSlotStat(x)
			if !ok {
				continue
			}
			ss.Node = addr
			sh.Slots++
			sh.KeyCount += ss.KeyCount
			if ss.CPUUsec >= 0 {
				sh.Counted = true
				sh.CPUUsec += ss.CPUUsec
				sh.NetIn += max(ss.NetIn, 0)
				sh.NetOut += max(ss.NetOut, 0)
				sh.MemoryBytes += max(ss.MemoryBytes, 0)
			}
			bySlot[ss.Slot] = ss
		}
		r.Server = append(r.Server, sh)
	}
	switch {
	case supported == 0:
		r.Server = nil
		r.ServerNote = "no primary supports CLUSTER SLOT-STATS (Redis 8.2+, the reference server): client-side figures only"
		return
	case supported < len(primaries):
		r.ServerNote = fmt.Sprintf("%d of %d primaries answered CLUSTER SLOT-STATS", supported, len(primaries))
	}
	counted := false
	for _, sh := range r.Server {
		counted = counted || sh.Counted
	}
	if !counted && r.ServerNote == "" {
		r.ServerNote = "cpu-usec and network bytes need cluster-slot-stats-enabled yes (--server-config 'cluster-slot-stats-enabled yes'); key-count only"
	}
	for i := range r.TopSlots {
		r.TopSlots[i].Server = bySlot[r.TopSlots[i].Slot]
	}
	var all []*ServerSlot
	for _, ss := range bySlot {
		all = append(all, ss)
	}
	metric := func(s *ServerSlot) int64 {
		if counted {
			return s.CPUUsec
		}
		return s.KeyCount
	}
	slices.SortFunc(all, func(a, b *ServerSlot) int {
		if metric(a) != metric(b) {
			if metric(a) > metric(b) {
				return -1
			}
			return 1
		}
		return a.Slot - b.Slot
	})
	for _, ss := range all[:min(len(all), topSlotsShown)] {
		if metric(ss) > 0 {
			r.ServerTop = append(r.ServerTop, *ss)
		}
	}
}

// parseSlotStat decodes one [slot, {metric: value}] entry (RESP2 flat
// list or RESP3 map).
func parseSlotStat(x any) (*ServerSlot, bool) {
	pair, ok := x.([]any)
	if !ok || len(pair) != 2 {
		return nil, false
	}
	slot, ok := pair[0].(int64)
	if !ok {
		return nil, false
	}
	m := map[string]int64{}
	switch v := pair[1].(type) {
	case []any:
		for i := 0; i+1 < len(v); i += 2 {
			n, _ := v[i+1].(int64)
			m[fmt.Sprint(v[i])] = n
		}
	case map[any]any:
		for k, val := range v {
			n, _ := val.(int64)
			m[fmt.Sprint(k)] = n
		}
	default:
		return nil, false
	}
	get := func(k string) int64 {
		if n, ok := m[k]; ok {
			return n
		}
		return -1
	}
	return &ServerSlot{Slot: int(slot), KeyCount: get("key-count"), CPUUsec: get("cpu-usec"), MemoryBytes: get("memory-bytes"),
		NetIn: get("network-bytes-in"), NetOut: get("network-bytes-out")}, true
}

func dash(n int64) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// print writes the load tables of the summary.
func (r *LoadReport) print(w io.Writer) {
	if r == nil || len(r.Shards) == 0 {
		return
	}
	fmt.Fprintf(w, "\nload per shard (client side, ok ops; skew: busiest shard %.2fx the mean, busiest slot %.1fx the mean of %d slots touched)\n",
		r.ShardSkew, r.SlotSkew, r.SlotsTouched)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SHARD\tSLOTS\tTOUCHED\tOPS/S\tSHARE\tKB")
	for _, s := range r.Shards {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.1f%%\t%.1f\n", s.Shard, s.Slots, s.SlotsTouched, s.OpsPerS, 100*s.Share, float64(s.Bytes)/1024)
	}
	tw.Flush()
	if !r.skewed() {
		fmt.Fprintln(w, "keys spread evenly: no hot-slot table (shown when the busiest shard carries 25% over the mean or a slot 5% of the ops)")
	} else {
		r.printHot(w)
	}
	r.printNodes(w)
	r.printServer(w)
}

// printNodes writes, when slots changed hands, who answered the ops.
func (r *LoadReport) printNodes(w io.Writer) {
	if r.SlotsMoved == 0 {
		return
	}
	fmt.Fprintf(w, "%s changed primary during the run (the shards above are the start's): ok ops by the node that answered them\n", slots(r.SlotsMoved))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tADDRESS\tSLOTS AT START\tAT END\tOPS/S (RUN)\tSHARE")
	for _, n := range r.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f%%\n", n.Node, n.Addr, Count(float64(n.SlotsStart)), Count(float64(n.SlotsEnd)), Count(n.OpsPerS), 100*n.Share)
	}
	tw.Flush()
}

// slots says n slots, for people.
func slots(n int) string { return Count(float64(n)) + " slot" + plural(n) }

func (r *LoadReport) printHot(w io.Writer) {
	fmt.Fprintln(w, "hot slots (client side, beside the server's CLUSTER SLOT-STATS of the slot where reported)")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLOT\tSHARD\tOPS/S\tSHARE\tKB\tSRV KEYS\tSRV CPU US\tSRV IN B\tSRV OUT B")
	for _, s := range r.TopSlots {
		k, c, in, out := "-", "-", "-", "-"
		if ss := s.Server; ss != nil {
			k, c, in, out = dash(ss.KeyCount), dash(ss.CPUUsec), dash(ss.NetIn), dash(ss.NetOut)
		}
		fmt.Fprintf(tw, "%d\t%s\t%.0f\t%.1f%%\t%.1f\t%s\t%s\t%s\t%s\n", s.Slot, s.Shard, s.OpsPerS, 100*s.Share, float64(s.Bytes)/1024, k, c, in, out)
	}
	tw.Flush()
}

func (r *LoadReport) printServer(w io.Writer) {
	if len(r.Server) > 0 {
		fmt.Fprintln(w, "server CLUSTER SLOT-STATS per primary (now)")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NODE\tSLOTS\tKEYS\tCPU MS\tIN KB\tOUT KB\tMEM KB")
		for _, s := range r.Server {
			if !s.Supported {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t(%s)\n", s.Node, s.Error)
				continue
			}
			cpu, in, out, mem := "-", "-", "-", "-"
			if s.Counted {
				cpu, in, out, mem = fmt.Sprintf("%.1f", float64(s.CPUUsec)/1000), fmt.Sprintf("%.1f", float64(s.NetIn)/1024),
					fmt.Sprintf("%.1f", float64(s.NetOut)/1024), fmt.Sprintf("%.1f", float64(s.MemoryBytes)/1024)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\n", s.Node, s.Slots, s.KeyCount, cpu, in, out, mem)
		}
		tw.Flush()
	}
	if len(r.ServerTop) > 0 && r.skewed() {
		var parts []string
		for _, s := range r.ServerTop {
			parts = append(parts, fmt.Sprintf("%d (%s)", s.Slot, s.Node))
		}
		fmt.Fprintf(w, "server's hottest slots: %s\n", strings.Join(parts, ", "))
	}
	if r.ServerNote != "" {
		fmt.Fprintf(w, "  note: %s\n", r.ServerNote)
	}
}

// nodesHTML renders, when slots changed primary, who answered the ops
// (the report shows it whether or not the keys were skewed).
func (r *LoadReport) nodesHTML(name string) string {
	if r == nil || r.SlotsMoved == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<section id='nodes-served'><h2>nodes of %s after the change</h2><p>%s changed primary during the run (the shards above are the start's): ok ops by the node that answered them</p>", html.EscapeString(name), slots(r.SlotsMoved))
	b.WriteString("<table><tr><th>node</th><th>address</th><th>slots at start</th><th>at end</th><th>ops/s (run)</th><th>share</th></tr>")
	for _, n := range r.Nodes {
		fmt.Fprintf(&b, "<tr><td style='text-align:left'>%s</td><td style='text-align:left'>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%.1f%%</td></tr>",
			html.EscapeString(n.Node), html.EscapeString(n.Addr), Count(float64(n.SlotsStart)), Count(float64(n.SlotsEnd)), Count(n.OpsPerS), 100*n.Share)
	}
	b.WriteString("</table></section>")
	return b.String()
}

// html renders the load tables for the report page.
func (r *LoadReport) html(name string) string {
	if r == nil || len(r.Shards) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<h2>load per shard and hot slots of %s</h2><p>client side, ok ops; busiest shard %.2fx the mean, busiest slot %.1fx the mean of %d slots touched</p>",
		html.EscapeString(name), r.ShardSkew, r.SlotSkew, r.SlotsTouched)
	b.WriteString("<table><tr><th>shard</th><th>slots</th><th>touched</th><th>ops/s</th><th>share</th><th>KB</th><th></th></tr>")
	for _, s := range r.Shards {
		fmt.Fprintf(&b, "<tr><td style='text-align:left'>%s</td><td>%d</td><td>%d</td><td>%.0f</td><td>%.1f%%</td><td>%.1f</td><td style='text-align:left'><span style='display:inline-block;background:#1f77b4;height:10px;width:%.0fpx'></span></td></tr>",
			html.EscapeString(s.Shard), s.Slots, s.SlotsTouched, s.OpsPerS, 100*s.Share, float64(s.Bytes)/1024, 300*s.Share)
	}
	b.WriteString("</table><table><tr><th>slot</th><th>shard</th><th>ops/s</th><th>share</th><th>KB</th><th>server keys</th><th>server cpu µs</th><th>server in B</th><th>server out B</th></tr>")
	for _, s := range r.TopSlots {
		k, c, in, out := "-", "-", "-", "-"
		if ss := s.Server; ss != nil {
			k, c, in, out = dash(ss.KeyCount), dash(ss.CPUUsec), dash(ss.NetIn), dash(ss.NetOut)
		}
		fmt.Fprintf(&b, "<tr><td>%d</td><td style='text-align:left'>%s</td><td>%.0f</td><td>%.1f%%</td><td>%.1f</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>",
			s.Slot, html.EscapeString(s.Shard), s.OpsPerS, 100*s.Share, float64(s.Bytes)/1024, k, c, in, out)
	}
	b.WriteString("</table>")
	if len(r.Server) > 0 {
		b.WriteString("<table><tr><th>primary (CLUSTER SLOT-STATS)</th><th>slots</th><th>keys</th><th>cpu ms</th><th>in KB</th><th>out KB</th><th>memory KB</th></tr>")
		for _, s := range r.Server {
			if !s.Supported {
				fmt.Fprintf(&b, "<tr><td style='text-align:left'>%s</td><td colspan=6>%s</td></tr>", html.EscapeString(s.Node), html.EscapeString(s.Error))
				continue
			}
			fmt.Fprintf(&b, "<tr><td style='text-align:left'>%s</td><td>%d</td><td>%d</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td></tr>",
				html.EscapeString(s.Node), s.Slots, s.KeyCount, float64(s.CPUUsec)/1000, float64(s.NetIn)/1024, float64(s.NetOut)/1024, float64(s.MemoryBytes)/1024)
		}
		b.WriteString("</table>")
	}
	if r.ServerNote != "" {
		fmt.Fprintf(&b, "<p>%s</p>", html.EscapeString(r.ServerNote))
	}
	return b.String()
}
