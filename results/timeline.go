package results

import (
	"bytes"
	"fmt"
	"html/template"
	"sort"
	"strconv"

	"github.com/redline-dev/redline/harness/history"
)

// timelineMaxOps bounds timeline.html: one element per op, so a 1M-op
// run would weigh ~250 MB (about 250 bytes an op); past the bound the page shows the first ops
// and says how many it left out (the history file has them all).
const timelineMaxOps = 10000

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
	Boxes      []timelineBox
	Faults     []timelineBox
	Height     float64
	ColWidth   int
	Width      int
	Shown, All int
	PxPerS     float64
	Ticks      []timelineTick
}

type timelineTick struct {
	Top   float64
	Label string
}

// writeTimeline renders timeline.html, Jepsen's timeline: one column per
// process, time downwards, each op a box from invocation to completion
// (ok green, fail red, info orange), the nemesis's faults in a column of
// their own.
func (d *runData) writeTimeline(r *Run) error {
	seen := map[history.Process]bool{}
	var procs []history.Process
	var boxes []timelineBox
	var boxProc []history.Process
	total := 0
	end := d.duration()
	pxPerS := 200.0
	if end*pxPerS > 30000 { // keep the page scrollable: at most 30000 px tall
		pxPerS = 30000 / end
	}
	d.eachOp(func(inv, op *history.Op) {
		total++
		if len(boxes) >= timelineMaxOps {
			return
		}
		if !seen[op.Process] {
			seen[op.Process] = true
			procs = append(procs, op.Process)
		}
		t0, t1 := float64(inv.Time)/1e9, float64(op.Time)/1e9
		title := fmt.Sprintf("%d %s %s %s → %s %s (%.1f ms", inv.Index, inv.F, inv.Key, string(inv.Value), op.Type, string(op.Value), (t1-t0)*1000)
		if op.Node != "" {
			title += ", " + d.name(op.Node)
		}
		title += ")"
		if e := op.ErrorText(); e != "" {
			title += " " + clip(e, 120)
		}
		boxes = append(boxes, timelineBox{Top: t0 * pxPerS, Height: max(2, (t1-t0)*pxPerS), Class: op.Type.String(), Title: clip(title, 400), Label: inv.F})
		boxProc = append(boxProc, op.Process)
	})
	// Columns in process order; column 0 is the nemesis.
	sort.Slice(procs, func(i, j int) bool { return procs[i] < procs[j] })
	col := map[history.Process]int{}
	names := make([]string, len(procs))
	for i, p := range procs {
		col[p] = i + 1
		names[i] = strconv.FormatInt(int64(p), 10)
	}
	for i := range boxes {
		boxes[i].Col = col[boxProc[i]]
	}
	var faults []timelineBox
	for _, w := range d.windows() {
		faults = append(faults, timelineBox{Col: 0, Top: w.Start * pxPerS, Height: max(2, (w.End-w.Start)*pxPerS), Class: "fault", Title: w.title(), Label: w.label()})
	}
	colWidth := 90
	if n := len(names) + 1; n*colWidth > 1360 {
		colWidth = max(14, 1360/n)
	}
	td := timelineData{Test: d.run.Test, Processes: names, Boxes: boxes, Faults: faults, Height: end*pxPerS + 20,
		ColWidth: colWidth, Width: (len(names) + 1) * colWidth, Shown: len(boxes), All: total, PxPerS: pxPerS}
	step := niceStep(end, int(end*pxPerS/150)+1)
	for t := 0.0; t <= end; t += step {
		td.Ticks = append(td.Ticks, timelineTick{Top: t * pxPerS, Label: trimFloat(t) + " s"})
	}
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
	"inc":   func(i int) int { return i + 1 },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>timeline {{.Test}}</title><style>
body{font-family:system-ui,sans-serif;margin:1em;color:#222}
#ops{position:relative;height:{{px .Height}}px;width:{{.Width}}px;margin-left:0}
.op{position:absolute;overflow:hidden;font-size:10px;line-height:11px;border-radius:2px;box-sizing:border-box;padding:0 2px;white-space:nowrap}
.ok{background:#a5d6a7}.fail{background:#ef9a9a}.info{background:#ffcc80}.fault{background:#e0e0e0;border:1px solid #999}
.head{position:sticky;top:0;background:#fff;height:18px;width:{{.Width}}px;position:relative;font-size:11px;font-weight:bold}
.head span{position:absolute;overflow:hidden;white-space:nowrap}
.tick{position:absolute;left:0;font-size:10px;color:#777;border-top:1px solid #eee;width:{{.Width}}px}
</style></head><body>
<h1>{{.Test}}: ops per process over time</h1>
<p>Each box is one op from its invocation to its completion, in the column of its process: <span class="op ok" style="position:static">ok</span> <span class="op fail" style="position:static">fail</span> <span class="op info" style="position:static">info (outcome unknown)</span>; the first column shows the faults. Time runs downwards, {{px .PxPerS}} px per second; hover a box for the op.
{{if lt .Shown .All}}<strong id="clipped">Showing the first {{.Shown}} of {{.All}} ops; the history file has them all (<code>redline history cat</code> prints it).</strong>{{end}}</p>
<div class="head"><span style="left:50px;width:{{$.ColWidth}}px">nemesis</span>{{range $i, $p := .Processes}}<span style="left:{{left (inc $i) $.ColWidth}}px;width:{{$.ColWidth}}px">{{$p}}</span>{{end}}</div>
<div id="ops">{{range .Ticks}}<div class="tick" style="top:{{px .Top}}px">{{.Label}}</div>{{end}}
{{range .Faults}}<div class="op fault" style="left:{{left .Col $.ColWidth}}px;width:{{inner $.ColWidth}}px;top:{{px .Top}}px;height:{{px .Height}}px" title="{{.Title}}">{{.Label}}</div>{{end}}
{{range .Boxes}}<div class="op {{.Class}}" style="left:{{left .Col $.ColWidth}}px;width:{{inner $.ColWidth}}px;top:{{px .Top}}px;height:{{px .Height}}px" title="{{.Title}}">{{.Label}}</div>{{end}}
</div></body></html>
`))
