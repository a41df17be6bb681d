package suite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ClientRow is one run of a suite that compares clients (--client as a
// matrix axis): what the client's application would have lived through.
type ClientRow struct {
	Client  string `json:"client"`
	Library string `json:"library,omitempty"` // library and version, from the run's config.json
	Fault   string `json:"fault"`
	Verdict string `json:"verdict"`
	// Lost acknowledged writes (counter increments and set elements).
	Lost int64 `json:"lost"`
	// DoubleApplied is the counter's unexpected: the amount by which
	// final values exceed every increment attempted once, a lower bound
	// of what was applied more than once.
	DoubleApplied int64 `json:"double_applied"`
	// Resent counts adds the library sent again after an attempt of
	// unknown outcome (only where redline sees its sends).
	Resent int64 `json:"resent"`
	// StaleReads are replica reads below what was acknowledged before
	// them; ReplicaReads all reads a replica served.
	StaleReads   int64 `json:"stale_reads"`
	ReplicaReads int64 `json:"replica_reads"`
	// WriteGapMS is the longest time a key went without an acknowledged
	// write while writes were wanted (ms; 0 when not measured).
	WriteGapMS float64 `json:"longest_write_gap_ms"`
	Dir        string  `json:"dir,omitempty"`
}

// ClientRows is the client comparison of a suite: nil unless the suite
// varies --client.
func (s *Summary) ClientRows() []ClientRow {
	varies := false
	for _, k := range s.varying() {
		varies = varies || k == "client"
	}
	if !varies {
		return nil
	}
	var rows []ClientRow
	for _, r := range s.Runs {
		row := ClientRow{Client: r.Params.Get("client"), Fault: r.Params.Get("nemesis"), Verdict: r.Verdict, Dir: r.Dir}
		if row.Client == "" {
			row.Client = "redline"
		}
		row.Library = libraryOf(r.Dir)
		for name, c := range r.Checkers {
			base := name[strings.LastIndex(name, "/")+1:]
			res := c.Result(name)
			counts := res.Counts()
			switch base {
			case "counter", "set":
				row.Lost += int64(counts.Lost.N())
			}
			if base == "counter" {
				row.DoubleApplied += int64(counts.Unexpected.N())
				row.Resent += int64(counts.ResentAdds.N())
				if g := res.LongestWriteGapMs(); g > row.WriteGapMS {
					row.WriteGapMS = g
				}
			}
			if base == "counter" || base == "linearizable" {
				row.StaleReads += int64(counts.StaleReads.N())
				row.ReplicaReads += int64(counts.ReplicaReads.N())
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// libraryOf reads the client library and version a run recorded.
func libraryOf(dir string) string {
	if dir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return ""
	}
	var cfg struct {
		Lib *struct {
			Library string `json:"library"`
			Version string `json:"version"`
		} `json:"client_library"`
	}
	if json.Unmarshal(b, &cfg) != nil || cfg.Lib == nil {
		return ""
	}
	return cfg.Lib.Library + " " + cfg.Lib.Version
}

// ClientsMarkdown renders the comparison as clients.md: one row per run,
// then one per client summed over its runs.
func ClientsMarkdown(name string, rows []ClientRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: client comparison\n\n", name)
	b.WriteString("lost = acknowledged writes missing at the end; double-applied = counter's unexpected (a lower bound of increments " +
		"applied more than once), resent = adds the library sent again after an attempt of unknown outcome (where redline sees its sends); " +
		"stale = replica reads below what was acknowledged before them (of all replica reads); write gap = the longest time one key went " +
		"without an acknowledged write while writes were wanted.\n\n")
	b.WriteString("| client | library | fault | verdict | lost | double-applied | resent | stale / replica reads | longest write gap |\n")
	b.WriteString("|---|---|---|---|---:|---:|---:|---:|---:|\n")
	type total struct {
		runs                               int
		lost, double, resent, stale, reads int64
		gap                                float64
	}
	totals := map[string]*total{}
	var order []string
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %d | %d / %d | %s |\n", r.Client, r.Library, r.Fault, r.Verdict,
			r.Lost, r.DoubleApplied, r.Resent, r.StaleReads, r.ReplicaReads, gapText(r.WriteGapMS))
		t := totals[r.Client]
		if t == nil {
			t = &total{}
			totals[r.Client] = t
			order = append(order, r.Client)
		}
		t.runs++
		t.lost += r.Lost
		t.double += r.DoubleApplied
		t.resent += r.Resent
		t.stale += r.StaleReads
		t.reads += r.ReplicaReads
		t.gap = max(t.gap, r.WriteGapMS)
	}
	b.WriteString("\n| client | runs | lost | double-applied | resent | stale / replica reads | longest write gap |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range order {
		t := totals[c]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d / %d | %s |\n", c, t.runs, t.lost, t.double, t.resent, t.stale, t.reads, gapText(t.gap))
	}
	return b.String()
}

func gapText(ms float64) string {
	if ms <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f s", ms/1000)
}
