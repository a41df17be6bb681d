package results

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results/plot"
)

// timelineMaxOps bounds timeline.html: one element per op, so a 1M-op
// run would weigh ~250 MB (about 250 bytes an op). A run with more ops
// shows windows of ops around what a reader comes for: each fault's start
// and stop and the first anomalies, each window narrowed around its moment
// until all fit the bound (the history file has them all).
const timelineMaxOps = 10000

const (
	// timelineBefore and timelineAfter are a window's extent around its
	// moment before narrowing: the second after a fault starts is when
	// clients see it, the half second before is the baseline.
	timelineBefore = 0.5
	timelineAfter  = 1.5
	// timelineFirstAnomalies is how many of the first anomalies get a
	// window of their own.
	timelineFirstAnomalies = 3
	// timelineMaxMoments bounds the windows of a run with many faults.
	timelineMaxMoments = 40
)

// timelineBox is one op: a box in its process's column from invocation to
// completion, coloured by outcome, with the op in its tooltip.
type timelineBox struct {
	Col          int
	Top, Height  float64 // px
	Class, Title string
	Label        string
}

type timelineData struct {
	Test       string
	Processes  []string
	Segments   []timelineSegment
	ColWidth   int
	Width      int
	Shown, All int
	Whole      bool // the whole run is shown as one segment
}

// timelineSegment is one span of the run drawn with its own scale.
type timelineSegment struct {
	From, To float64 // s
	Title    string  // what the span is around, in words
	Boxes    []timelineBox
	Faults   []timelineBox
	Moments  []timelineTick // the moments the span is around, as lines
	Ticks    []timelineTick
	Height   float64
	PxPerS   float64
}

type timelineTick struct {
	Top   float64
	Label string
}

// timelineMoment is a time a reader comes to the timeline for.
type timelineMoment struct {
	t     float64
	label string
}

// timelineMoments are the starts and stops of the fault windows and the
// first anomalies (acknowledgements and reads the attribution names, lost
// writes the checkers list), in time order.
func (d *runData) timelineMoments(windows []faultWindow) []timelineMoment {
	var out []timelineMoment
	for _, w := range windows {
		out = append(out, timelineMoment{w.Start, w.label() + " starts"})
		if !w.Open {
			out = append(out, timelineMoment{w.End, w.label() + " stops"})
		}
	}
	var anomalies []timelineMoment
	for _, a := range d.sum.Attribution {
		switch {
		case a.Unserved != nil:
			// An outage the fault explains is no anomaly; one that never
			// recovered or that nothing explains is.
			if a.Verdict != checker.FaultOutage {
				anomalies = append(anomalies, timelineMoment{a.Unserved.FromS, "shard of " + a.Unserved.Shard + " unserved"})
			}
		case a.Ack != nil:
			anomalies = append(anomalies, timelineMoment{a.Ack.TimeS, fmt.Sprintf("%s: %s of %s acknowledged (op %d)", a.Checker, a.Kind, a.Key, a.Ack.Index)})
		case a.Miss != nil:
			anomalies = append(anomalies, timelineMoment{a.Miss.TimeS, fmt.Sprintf("%s: %s of %s (op %d)", a.Checker, a.Kind, a.Key, a.Miss.Index)})
		}
	}
	if len(anomalies) == 0 {
		// No attribution (a run from before it): the lost writes the
		// checkers list one by one.
		lost, _ := d.losses()
		for _, l := range lost {
			anomalies = append(anomalies, timelineMoment{l.t, l.title})
		}
	}
	sort.SliceStable(anomalies, func(i, j int) bool { return anomalies[i].t < anomalies[j].t })
	out = append(out, anomalies[:min(len(anomalies), timelineFirstAnomalies)]...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].t < out[j].t })
	return out[:min(len(out), timelineMaxMoments)]
}

// span is a part of the run the timeline shows, around its moments.
type span struct {
	from, to float64
	moments  []timelineMoment
}

// timelineSpans are the windows around the moments, each narrowed around
// its moment until its ops fit its share of timelineMaxOps, then merged
// where they overlap: every moment keeps a span.
func timelineSpans(moments []timelineMoment, t0, t1 []float64, end float64) []span {
	if len(moments) == 0 {
		return nil
	}
	share := timelineMaxOps / len(moments)
	spans := make([]span, 0, len(moments))
	for _, m := range moments {
		sp := span{from: max(0, m.t-timelineBefore), to: min(end, m.t+timelineAfter), moments: []timelineMoment{m}}
		for scale := 0.5; count(t0, t1, sp.from, sp.to) > share && scale > 1e-4; scale /= 2 {
			sp.from, sp.to = max(0, m.t-timelineBefore*scale), min(end, m.t+timelineAfter*scale)
		}
		spans = append(spans, sp)
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp.from <= last.to {
			last.to = max(last.to, sp.to)
			last.moments = append(last.moments, sp.moments...)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// count is how many ops overlap [from, to].
func count(t0, t1 []float64, from, to float64) int {
	n := 0
	for i := range t0 {
		if t0[i] <= to && t1[i] >= from {
			n++
		}
	}
	return n
}

// writeTimeline renders timeline.html, Jepsen's timeline: one column per
// process, time downwards, each op a box from invocation to completion
// (ok green, fail red, info orange), the nemesis's faults in a column of
// their own. A run of more than timelineMaxOps ops shows the spans around
// its faults' starts and stops and its first anomalies, each with its own
// scale.
func (d *runData) writeTimeline(r *Run) error {
	end := d.duration()
	windows := d.windows()
	var t0, t1 []float64
	d.eachOp(func(inv, op *history.Op) {
		t0, t1 = append(t0, float64(inv.Time)/1e9), append(t1, float64(op.Time)/1e9)
	})
	total := len(t0)
	var spans []span
	whole := total <= timelineMaxOps
	if whole {
		spans = []span{{from: 0, to: end, moments: d.timelineMoments(windows)}}
	} else {
		spans = timelineSpans(d.timelineMoments(windows), t0, t1, end)
		if len(spans) == 0 {
			// No fault and no anomaly: the start of the run.
			sp := span{from: 0, to: end}
			for sp.to > 0 && count(t0, t1, sp.from, sp.to) > timelineMaxOps {
				sp.to /= 2
			}
			spans = []span{sp}
		}
	}
	segs := make([]timelineSegment, len(spans))
	for i, sp := range spans {
		seg := &segs[i]
		seg.From, seg.To = sp.from, sp.to
		dur := max(sp.to-sp.from, 1e-3)
		seg.PxPerS = 200.0
		if whole {
			if end*seg.PxPerS > 30000 { // keep the page scrollable: at most 30000 px tall
				seg.PxPerS = 30000 / max(end, 1e-3)
			}
		} else {
			seg.PxPerS = min(2000, 1500/dur) // each span about a screen or two
		}
		var around []string
		for _, m := range sp.moments {
			around = append(around, m.label)
			seg.Moments = append(seg.Moments, timelineTick{Top: (m.t - sp.from) * seg.PxPerS, Label: fmt.Sprintf("%s at %.2f s", m.label, m.t)})
		}
		seg.Title = fmt.Sprintf("%.2f – %.2f s", sp.from, sp.to)
		if len(around) > 0 {
			seg.Title += ": " + strings.Join(around, "; ")
		}
		seg.Height = dur*seg.PxPerS + 20
		step := plot.NiceStep(dur, int(dur*seg.PxPerS/150)+1)
		for t := math.Ceil(sp.from/step) * step; t <= sp.to; t += step {
			seg.Ticks = append(seg.Ticks, timelineTick{Top: (t - sp.from) * seg.PxPerS, Label: trimFloat(round2(t)) + " s"})
		}
		for _, w := range windows {
			if w.Start > sp.to || w.End < sp.from {
				continue
			}
			a, b := max(w.Start, sp.from), min(w.End, sp.to)
			seg.Faults = append(seg.Faults, timelineBox{Col: 0, Top: (a - sp.from) * seg.PxPerS, Height: max(2, (b-a)*seg.PxPerS), Class: "fault", Title: w.title(), Label: w.label()})
		}
	}
	seen := map[history.Process]bool{}
	var procs []history.Process
	type placed struct {
		seg int
		box timelineBox
		p   history.Process
	}
	var boxes []placed
	d.eachOp(func(inv, op *history.Op) {
		a, b := float64(inv.Time)/1e9, float64(op.Time)/1e9
		for i, sp := range spans {
			if a > sp.to || b < sp.from {
				continue
			}
			if !seen[op.Process] {
				seen[op.Process] = true
				procs = append(procs, op.Process)
			}
			px := segs[i].PxPerS
			title := fmt.Sprintf("%d %s %s %s → %s %s (%.1f ms", inv.Index, inv.F, inv.Key, string(inv.Value), op.Type, string(op.Value), (b-a)*1000)
			if op.Node != "" {
				title += ", " + d.name(op.Node)
			}
			title += ")"
			if e := op.ErrorText(); e != "" {
				title += " " + clip(e, 120)
			}
			top, bot := max(a, sp.from), min(b, sp.to)
			boxes = append(boxes, placed{i, timelineBox{Top: (top - sp.from) * px, Height: max(2, (bot-top)*px), Class: op.Type.String(), Title: clip(title, 400), Label: inv.F}, op.Process})
			break
		}
	})
	// Columns in process order; column 0 is the nemesis.
	sort.Slice(procs, func(i, j int) bool { return procs[i] < procs[j] })
	col := map[history.Process]int{}
	names := make([]string, len(procs))
	for i, p := range procs {
		col[p] = i + 1
		names[i] = strconv.FormatInt(int64(p), 10)
	}
	for _, b := range boxes {
		b.box.Col = col[b.p]
		segs[b.seg].Boxes = append(segs[b.seg].Boxes, b.box)
	}
	colWidth := 90
	if n := len(names) + 1; n*colWidth > 1360 {
		colWidth = max(14, 1360/n)
	}
	td := timelineData{Test: d.run.Test, Processes: names, Segments: segs, ColWidth: colWidth, Width: (len(names) + 1) * colWidth,
		Shown: len(boxes), All: total, Whole: whole}
	var buf bytes.Buffer
	if err := timelineTmpl.Execute(&buf, td); err != nil {
		return err
	}
	return r.WriteFile("timeline.html", buf.Bytes())
}

var timelineTmpl = template.Must(template.New("timeline").Funcs(template.FuncMap{
	"left":  func(col, w int) int { return col*w + 50 },
	"inner": func(w int) int { return max(w-2, 4) },
	"px":    func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"sec":   func(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) },
	"inc":   func(i int) int { return i + 1 },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>timeline {{.Test}}</title><style>
body{font-family:system-ui,sans-serif;margin:1em;color:#222}
.ops{position:relative;width:{{.Width}}px;margin-left:0}
.op{position:absolute;overflow:hidden;font-size:10px;line-height:11px;border-radius:2px;box-sizing:border-box;padding:0 2px;white-space:nowrap}
.ok{background:#a5d6a7}.fail{background:#ef9a9a}.info{background:#ffcc80}.fault{background:#e0e0e0;border:1px solid #999}
.head{position:sticky;top:0;background:#fff;height:18px;width:{{.Width}}px;position:relative;font-size:11px;font-weight:bold;z-index:2}
.head span{position:absolute;overflow:hidden;white-space:nowrap}
.tick{position:absolute;left:0;font-size:10px;color:#777;border-top:1px solid #eee;width:{{.Width}}px}
.moment{position:absolute;left:0;font-size:11px;color:#b71c1c;border-top:2px solid #b71c1c;width:{{.Width}}px;z-index:1;pointer-events:none;padding-left:52px}
.segment h2{font-size:15px;margin:1.2em 0 .3em}
</style></head><body>
<h1>{{.Test}}: ops per process over time</h1>
<p>Each box is one op from its invocation to its completion, in the column of its process: <span class="op ok" style="position:static">ok</span> <span class="op fail" style="position:static">fail</span> <span class="op info" style="position:static">info (outcome unknown)</span>; the first column shows the faults, red lines the moments a span is around. Time runs downwards; hover a box for the op.
{{if not .Whole}}<strong id="clipped">The run has {{.All}} ops, too many for one page: shown are {{.Shown}}, in {{len .Segments}} spans around each fault's start and stop and the first anomalies, each span with its own scale; the history file has them all (<code>redline history cat</code> prints it).</strong>{{end}}</p>
{{range $s := .Segments}}<section class="segment" data-from="{{sec .From}}" data-to="{{sec .To}}">{{if not $.Whole}}<h2>{{.Title}}</h2>{{end}}
<p class="scale">{{px .PxPerS}} px per second</p>
<div class="head"><span style="left:50px;width:{{$.ColWidth}}px">nemesis</span>{{range $i, $p := $.Processes}}<span style="left:{{left (inc $i) $.ColWidth}}px;width:{{$.ColWidth}}px">{{$p}}</span>{{end}}</div>
<div class="ops" style="height:{{px .Height}}px">{{range .Ticks}}<div class="tick" style="top:{{px .Top}}px">{{.Label}}</div>{{end}}
{{range .Moments}}<div class="moment" style="top:{{px .Top}}px">{{.Label}}</div>{{end}}
{{range .Faults}}<div class="op fault" style="left:{{left .Col $.ColWidth}}px;width:{{inner $.ColWidth}}px;top:{{px .Top}}px;height:{{px .Height}}px" title="{{.Title}}">{{.Label}}</div>{{end}}
{{range .Boxes}}<div class="op {{.Class}}" style="left:{{left .Col $.ColWidth}}px;width:{{inner $.ColWidth}}px;top:{{px .Top}}px;height:{{px .Height}}px" title="{{.Title}}">{{.Label}}</div>{{end}}
</div></section>{{end}}
</body></html>
`))
