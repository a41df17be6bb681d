package results

// The report's charts are drawn by results/plot, the one plotting library
// of the run report, the compare page and the load driver's report. What
// stays here is what only a run's history knows: its fault windows as
// bands, in the colours of their kinds.

import (
	"strconv"

	"github.com/redline-dev/redline/results/plot"
)

// newPlot starts a chart over a run's seconds, 0 to t1, against a linear
// or log10 y axis from y0 to y1, titled yLabel.
func newPlot(id string, t1 float64, y0, y1 float64, logY bool, yLabel string) *plot.Chart {
	return plot.Time(id, yLabel, t1, plot.Axis{Min: y0, Max: y1, Log: logY})
}

// shadeFaults draws a run's fault windows as labelled bands behind the data.
func shadeFaults(p *plot.Chart, ws []faultWindow) {
	bands := make([]plot.Band, len(ws))
	for i, w := range ws {
		bands[i] = plot.Band{From: w.Start, To: w.End, Color: faultColor(w.Fault), Label: w.label(), Title: w.title()}
	}
	p.Bands(bands)
}

// shadeFaultsAs draws one run's fault windows in the run's colour (the
// compare page overlays several runs), labelled in its tooltip.
func shadeFaultsAs(p *plot.Chart, ws []faultWindow, color, run string) {
	bands := make([]plot.Band, len(ws))
	for i, w := range ws {
		bands[i] = plot.Band{From: w.Start, To: w.End, Color: color, Title: run + ": " + w.title()}
	}
	p.FaintBands(bands)
}

func trimFloat(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

var faultColors = map[string]string{
	"partition": "#e53935", "kill": "#8e24aa", "pause": "#fb8c00", "clock": "#3949ab",
	"migrate": "#00897b", "failover": "#6d4c41", "member": "#546e7a", "delay": "#fdd835", "loss": "#c0ca33",
	"power": "#212121", "disk": "#795548",
	"slow-link": "#f06292", "slow": "#5d4037",
}

func faultColor(f string) string {
	if c, ok := faultColors[f]; ok {
		return c
	}
	return "#e57373"
}
