package results

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/redline-dev/redline/checker"
)

// redisLogLine is a line of a Redis (and the reference server's) log:
// "pid:role DD Mon YYYY HH:MM:SS.mmm level message".
var redisLogLine = regexp.MustCompile(`^\d+:[A-Z] (\d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2}\.\d{3}) [.\-*#] (.*)$`)

// ServerLogLines reads the servers' own logs of a run (nodes/<node>/*.log)
// and places each line on the history's timeline: wallStart is the wall
// clock at the history's time zero (the census records it). The servers
// in redline's containers log in UTC. A line whose time cannot be read
// gets time -1 (the attribution leaves it out).
func ServerLogLines(run *Run, wallStart time.Time) []checker.LogLine {
	if run == nil || wallStart.IsZero() {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(run.Dir, "nodes", "*", "*.log"))
	var out []checker.LogLine
	for _, f := range files {
		node := filepath.Base(filepath.Dir(f))
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		out = append(out, parseServerLog(node, b, wallStart)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

func parseServerLog(node string, b []byte, wallStart time.Time) []checker.LogLine {
	var out []checker.LogLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		m := redisLogLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		t, err := time.ParseInLocation("02 Jan 2006 15:04:05.000", m[1], time.UTC)
		if err != nil {
			continue
		}
		out = append(out, checker.LogLine{Node: node, Time: t.Sub(wallStart).Nanoseconds(), Text: m[2]})
	}
	return out
}
