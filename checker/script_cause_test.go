package checker

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// Issue 36, class 5: a lost script cache is explained only by a kill of
// the node that answered NOSCRIPT, after it acknowledged SCRIPT LOAD and
// before the NOSCRIPT; and the SHA SCRIPT LOAD answered must be the SHA1 of
// the script body sent.

const scriptBody = `return redis.call('incrby', KEYS[1], ARGV[1])`

func scriptSHA(body string) string {
	s := sha1.Sum([]byte(body))
	return hex.EncodeToString(s[:])
}

// loadedHistory: n1 and n2 acknowledge SCRIPT LOAD at 1-4 ms with the right
// SHA (the body is the invocation's value), an EVALSHA on n1 at 5 ms, then
// events, then n1 answers an EVALSHA with NOSCRIPT at 200 ms.
func loadedHistory(events func(h *hist)) []history.Op {
	h := &hist{}
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2})
	h.call(0, "load", "k1", scriptBody, 1, history.OK, scriptSHA(scriptBody), 2).Node = n1
	h.call(0, "load", "k2", scriptBody, 3, history.OK, scriptSHA(scriptBody), 4).Node = n2
	h.call(1, "add", "k1", 2, 5, history.OK, 2, 6).Node = n1
	if events != nil {
		events(h)
	}
	h.call(1, "add", "k1", 3, 200, history.Fail, 3, 201).Node = n1
	h.withErr("NOSCRIPT No matching script. Please use EVAL.")
	return h.done()
}

func TestScriptLostCacheNeedsAKillOfThatNode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events func(h *hist)
		want   Validity
		words  []string
	}{
		{"no kill", nil, Invalid, []string{"op 7", "forgot"}},
		{"kill of another node", func(h *hist) {
			h.nemesis(50, "start-kill", "n2")
			h.nemesis(100, "stop-kill", "n2")
		}, Invalid, []string{"op 9", "forgot"}},
		{"kill of that node after the NOSCRIPT", func(h *hist) {
			h.nemesis(300, "start-kill", "n1")
			h.nemesis(400, "stop-kill", "n1")
		}, Invalid, []string{"op 7", "forgot"}},
		{"kill of that node in between", func(h *hist) {
			h.nemesis(50, "start-kill", "n1")
			h.nemesis(100, "stop-kill", "n1")
		}, Valid, nil},
		{"kill of that node in between, by address", func(h *hist) {
			h.nemesis(50, "start-kill", n1)
			h.nemesis(100, "stop-kill", n1)
		}, Valid, nil},
		{"composition's kill step of that node in between", func(h *hist) {
			h.event(50, history.Info, history.Compose, []string{"n1", "n2"}, map[string]any{"step": "kill", "node": "n1"})
		}, Valid, nil},
		{"composition's kill step of another node", func(h *hist) {
			h.event(50, history.Info, history.Compose, []string{"n1", "n2"}, map[string]any{"step": "kill", "nodes": []string{"n2"}})
		}, Invalid, []string{"op 8", "forgot"}},
		{"composition's kill step that failed", func(h *hist) {
			h.event(50, history.Info, history.Compose, []string{"n1"}, map[string]any{"step": "kill", "node": "n1", "error": "no such container"})
		}, Unknown, []string{"op 8"}},
		{"kill naming no node", func(h *hist) {
			h.nemesis(50, "start-kill")
			h.nemesis(100, "stop-kill")
		}, Unknown, []string{"op 9", "name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := check(t, Script(), loadedHistory(tc.events))
			wantValid(t, r, tc.want)
			wantWhyNames(t, r, tc.words...)
		})
	}
}

// A kill of the node before it acknowledged SCRIPT LOAD does not explain a
// NOSCRIPT after the load.
func TestScriptKillBeforeTheLoadExplainsNothing(t *testing.T) {
	h := &hist{}
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2})
	h.nemesis(1, "start-kill", "n1")
	h.nemesis(5, "stop-kill", "n1")
	h.call(0, "load", "k1", scriptBody, 10, history.OK, scriptSHA(scriptBody), 12).Node = n1
	h.call(1, "add", "k1", 2, 20, history.OK, 2, 21).Node = n1
	h.call(1, "add", "k1", 3, 200, history.Fail, 3, 201).Node = n1
	h.withErr("NOSCRIPT No matching script. Please use EVAL.")
	r := check(t, Script(), h.done())
	wantValid(t, r, Invalid)
	wantWhyNames(t, r, "op 7")
}

// SCRIPT LOAD answered with a SHA other than the body's SHA1, or no SHA at
// all: garbage, recorded raw, naming the op; the right SHA is valid.
func TestScriptLoadSHAIsChecked(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     any
		sha      any
		want     Validity
		rawInWhy string
	}{
		{"right sha", scriptBody, scriptSHA(scriptBody), Valid, ""},
		{"sha of another body", scriptBody, scriptSHA("return 1"), Invalid, scriptSHA("return 1")},
		{"not a sha", scriptBody, "OK", Invalid, "OK"},
		{"upper-case sha", scriptBody, strings.ToUpper(scriptSHA(scriptBody)), Invalid, ""},
		// A history of the workload before the body was recorded: a
		// value was recorded only when it was not the script's SHA.
		{"old history, sha recorded", nil, "deadbeef", Invalid, "deadbeef"},
		{"old history, nothing recorded", nil, nil, Valid, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hist{}
			h.call(0, "load", "k1", tc.body, 1, history.OK, tc.sha, 2).Node = n1
			h.call(1, "add", "k1", 2, 5, history.OK, 2, 6).Node = n1
			r := check(t, Script(), h.done())
			wantValid(t, r, tc.want)
			if tc.want == Invalid {
				wantWhyNames(t, r, "op 0", "SHA", tc.rawInWhy)
			}
		})
	}
}
