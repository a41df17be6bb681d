package cluster

import (
	"fmt"
	"os"
	"strings"
)

// Process identifies a redline process by host, pid and start time, so
// that a later redline can tell a cluster whose run died (SIGKILL: nobody
// will tear it down) from one still in use, whichever runtime holds it.
type Process struct {
	Host  string
	PID   int
	Start string // field 22 of /proc/PID/stat: against the pid's reuse
}

// ThisProcess describes the calling process.
func ThisProcess() Process {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return Process{Host: host, PID: pid, Start: ProcessStart(pid)}
}

// Gone says whether p has ended: same host, and no process with its pid
// and start time. known is false for another host's process, which is not
// this one's to judge.
func (p Process) Gone() (gone, known bool) {
	host, _ := os.Hostname()
	if p.Host != host || p.PID <= 0 {
		return false, false
	}
	start := ProcessStart(p.PID)
	return start == "" || start != p.Start, true
}

// ProcessStart is field 22 of /proc/PID/stat (start time in clock ticks
// since boot), "" when the process does not exist.
func ProcessStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces; fields resume after ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}
