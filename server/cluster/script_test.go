package cluster

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt golden files")

// TestScripts replays the scenarios in testdata/*.txt (etcd/raft's
// interaction tests in spirit): every line starting with "> " is a command,
// the lines after it are its expected output. Run with -update to rewrite.
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			var nw *network
			for _, line := range strings.Split(string(data), "\n") {
				if !strings.HasPrefix(line, "> ") && !strings.HasPrefix(line, "#") {
					continue
				}
				out.WriteString(line + "\n")
				if strings.HasPrefix(line, "#") {
					continue
				}
				res := runScriptCmd(t, &nw, strings.Fields(line[2:]))
				out.WriteString(res)
			}
			got := out.String()
			if *update {
				os.WriteFile(f, []byte(got), 0o644)
				return
			}
			if got != string(data) {
				os.WriteFile(f+".got", []byte(got), 0o644)
				t.Fatalf("%s: output differs; see %s.got (run with -update to accept)", f, f)
			}
			os.Remove(f + ".got")
		})
	}
}

var hexID = regexp.MustCompile(`\b[0-9a-f]{40}\b`)

// normalize replaces node ids by n0..nN and unix-ms timestamps by "T".
func (nw *network) normalize(s string) string {
	names := map[string]string{}
	for i, n := range nw.nodes {
		names[n.n.ID()] = fmt.Sprintf("n%d", i)
	}
	s = hexID.ReplaceAllStringFunc(s, func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return "?"
	})
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		f := strings.Fields(l)
		if len(f) >= 8 {
			for _, k := range []int{4, 5} {
				if f[k] != "0" {
					f[k] = "T"
				}
			}
		}
		lines = append(lines, "  "+strings.Join(f, " "))
	}
	return strings.Join(lines, "\n") + "\n"
}

func runScriptCmd(t *testing.T, nwp **network, f []string) string {
	t.Helper()
	nw := *nwp
	atoi := func(i int) int {
		v, err := strconv.Atoi(f[i])
		if err != nil {
			t.Fatalf("bad number %q", f[i])
		}
		return v
	}
	dur := func(i int) time.Duration {
		d, err := time.ParseDuration(f[i])
		if err != nil {
			t.Fatalf("bad duration %q", f[i])
		}
		return d
	}
	switch f[0] {
	case "new": // new <nodes> <seed>
		*nwp = newNetwork(t, atoi(1), uint64(atoi(2)))
		return ""
	case "form":
		nw.form(atoi(1))
		return fmt.Sprintf("  converged at %v\n", nw.elapsed())
	case "kill":
		nw.nodes[atoi(1)].dead = true
	case "restart":
		nw.restart(atoi(1))
	case "isolate":
		nw.isolate(atoi(1))
	case "heal":
		nw.heal()
	case "run":
		nw.run(dur(1))
	case "failover":
		mode := map[string]FailoverMode{"default": FailoverDefault, "force": FailoverForce, "takeover": FailoverTakeover}[f[2]]
		if err := nw.nodes[atoi(1)].n.Failover(mode); err != nil {
			return "  error: " + err.Error() + "\n"
		}
	case "until": // until <cond...> within <limit>
		limit := dur(len(f) - 1)
		cond := f[1 : len(f)-2]
		took := nw.runUntil(strings.Join(cond, " "), limit, func() bool { return scriptCond(t, nw, cond) })
		return fmt.Sprintf("  after %v\n", took)
	case "nodes":
		return nw.normalize(nw.nodes[atoi(1)].n.NodesText())
	case "hostname": // hostname <i> <name|-> (cluster-announce-hostname)
		n := nw.nodes[atoi(1)].n
		c := n.cfg
		c.Hostname = strings.TrimPrefix(f[2], "-")
		n.Reconfigure(c)
	case "endpoint": // endpoint <i> <ip|hostname|unknown-endpoint>
		n := nw.nodes[atoi(1)].n
		c := n.cfg
		c.PreferredEndpoint = f[2]
		n.Reconfigure(c)
	case "route": // route <i> <slot>: the redirect node i answers for a key of slot
		n := nw.nodes[atoi(1)].n
		n.Ready()
		d := n.View().Route(Request{Slots: []int{atoi(2)}})
		if d.Verdict == Serve {
			return "  serve\n"
		}
		return "  " + d.Error() + "\n"
	case "slots": // slots <i>: CLUSTER SLOTS of node i
		n := nw.nodes[atoi(1)].n
		var b strings.Builder
		for _, r := range n.Slots() {
			for _, sn := range r.Nodes {
				e := n.slotNodeReply(sn)
				var meta []string
				for _, m := range e[3].(Map) {
					meta = append(meta, m.(string))
				}
				ep := "null"
				if s, ok := e[0].(string); ok {
					ep = strconv.Quote(s)
				}
				fmt.Fprintf(&b, "%d-%d %s %d %s {%s}\n", r.Start, r.End, ep, e[1], e[2], strings.Join(meta, ","))
			}
		}
		return nw.normalize(b.String())
	case "shards": // shards <i>: CLUSTER SHARDS of node i (id, endpoint, hostname)
		n := nw.nodes[atoi(1)].n
		var b strings.Builder
		for _, sh := range n.Shards() {
			for _, x := range sh.Nodes {
				fmt.Fprintf(&b, "%s endpoint=%q hostname=%q %s\n", x.ID, x.Endpoint, x.Hostname, x.Role)
			}
		}
		return nw.normalize(b.String())
	case "state":
		var b strings.Builder
		for i, s := range nw.nodes {
			st := "fail"
			if s.n.StateOK() {
				st = "ok"
			}
			if s.dead {
				st = "dead"
			}
			role := "master"
			if !s.n.IsMaster() {
				role = "replica-of-" + strings.TrimSpace(nw.normalize(s.n.MasterID()))
			}
			fmt.Fprintf(&b, "  n%d %s %s epoch=%d\n", i, st, role, s.n.epochOf(s.n.self))
		}
		return b.String()
	default:
		t.Fatalf("unknown command %q", f[0])
	}
	return ""
}

func scriptCond(t *testing.T, nw *network, c []string) bool {
	n := func(s string) int {
		v, err := strconv.Atoi(strings.TrimPrefix(s, "n"))
		if err != nil {
			t.Fatalf("bad node %q", s)
		}
		return v
	}
	switch c[0] {
	case "master": // master nX
		return nw.nodes[n(c[1])].n.IsMaster()
	case "replica": // replica nX of nY
		return nw.nodes[n(c[1])].n.MasterID() == nw.nodes[n(c[3])].n.ID()
	case "flag": // flag <fail|pfail> nX seen-by nY
		f := FlagFail
		if c[1] == "pfail" {
			f = FlagPFail | FlagFail
		}
		return nw.flagsOf(n(c[4]), n(c[2]))&f != 0
	case "down": // down nX
		return !nw.nodes[n(c[1])].n.StateOK()
	case "converged":
		return nw.converged()
	case "hostname": // hostname nX <name|-> seen-by nY
		p, ok := nw.nodes[n(c[4])].n.peers[nw.nodes[n(c[1])].n.ID()]
		return ok && p.hostname == strings.TrimPrefix(c[2], "-")
	}
	t.Fatalf("unknown condition %v", c)
	return false
}
