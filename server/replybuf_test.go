package server

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReplyBufferSizeLikeRedis follows unit/replybufsize: an idle client's
// rbs shrinks to 1 KB once its peak restarts, and a client fetching a
// 32 KB value while the peak never restarts grows back to 16 KB.
func TestReplyBufferSizeLikeRedis(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes")
	ctl := dialRaw(t, s.Addr().String())
	tc := dialRaw(t, s.Addr().String())
	tc.do(t, splitTest(t, "CLIENT SETNAME test_client"))
	rbs := func() int {
		list := string(ctl.do(t, splitTest(t, "CLIENT LIST")))
		for _, l := range strings.Split(list, "\n") {
			if strings.Contains(l, "name=test_client") {
				m := regexp.MustCompile(`rbs=(\d+)`).FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("no rbs in %q", l)
				}
				n, _ := strconv.Atoi(m[1])
				return n
			}
		}
		t.Fatalf("test_client not in %q", list)
		return 0
	}
	if n := rbs(); n != replyBufChunk {
		t.Fatalf("a new client's rbs is %d, want %d", n, replyBufChunk)
	}
	debug := func(arg string) {
		t.Helper()
		if got := string(ctl.do(t, splitTest(t, "DEBUG REPLYBUFFER peak-reset-time "+arg))); got != "+OK\r\n" {
			t.Fatalf("DEBUG REPLYBUFFER peak-reset-time %s: %q", arg, got)
		}
	}
	debug("100")
	waitRBS := func(lo, hi int, busy bool) {
		t.Helper()
		for i := 0; ; i++ {
			if busy {
				tc.do(t, splitTest(t, "GET bigval"))
			}
			if n := rbs(); n >= lo && n < hi {
				return
			} else if i > 200 {
				t.Fatalf("rbs %d, want [%d, %d)", n, lo, hi)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitRBS(1024, 2046, false)
	ctl.do(t, [][]byte{[]byte("SET"), []byte("bigval"), []byte(strings.Repeat("x", 32768))})
	debug("never")
	waitRBS(16384, 32768, true)
	debug("reset")
}
