// A client as CLIENT LIST, CLIENT INFO and the ACL log describe it.

package server

import (
	"fmt"
	"strings"
	"time"
)

func (c *Client) infoLine(now time.Time) string {
	multi := -1
	if c.multi {
		multi = len(c.queue)
	}
	cmd := c.lastCmd
	if cmd == "" {
		cmd = "NULL"
	}
	idle := int64(0)
	if la := c.lastActive.Load(); la > 0 {
		idle = (now.UnixMilli() - la) / 1000
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=8 name=%s age=%d idle=%d flags=%s db=%d sub=0 psub=0 ssub=0 multi=%d qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=%d rbp=%d obl=0 oll=0 omem=0 tot-mem=%d events=r cmd=%s user=%s redir=-1 resp=%d",
		c.id, c.addr, c.laddr, c.name, int64(now.Sub(c.created).Seconds()), idle, c.flagsString(), c.db, multi,
		c.replyBufSize(), c.rbufPeak.Load(), len(c.in)+cap(c.out), cmd, c.userName(), c.proto)
}

func (c *Client) flagsString() string {
	f := ""
	if c.monitor {
		f += "O"
	}
	if c.multi {
		f += "x"
	}
	if c.ReadOnly {
		f += "r"
	}
	if c.Asking {
		f += "A"
	}
	if c.blk != nil && !c.blk.served {
		f += "b"
	}
	if c.asmFlag != 0 {
		f += string(c.asmFlag)
	}
	if f == "" {
		f = "N"
	}
	return f
}

func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

// redacted gives the argument positions Redis hides in the slow log.
func redacted(name string, argv [][]byte) map[int]bool {
	out := map[int]bool{}
	switch {
	case name == "auth":
		for i := 1; i < len(argv); i++ {
			out[i] = true
		}
	case name == "hello":
		for i := 2; i < len(argv); i++ {
			if strings.EqualFold(string(argv[i]), "auth") && i+2 < len(argv) {
				out[i+1], out[i+2] = true, true
				i += 2
			}
		}
	case name == "acl|setuser":
		for i := 2; i < len(argv); i++ {
			out[i] = true
		}
	case name == "config|set":
		for i := 2; i+1 < len(argv); i += 2 {
			switch strings.ToLower(string(argv[i])) {
			case "masterauth", "requirepass", "masteruser", "tls-key-file-pass", "tls-client-key-file-pass":
				out[i+1] = true
			}
		}
	case name == "migrate":
		for i := 6; i < len(argv); i++ {
			switch strings.ToLower(string(argv[i])) {
			case "auth":
				out[i+1] = true
				i++
			case "auth2":
				out[i+1], out[i+2] = true, true
				i += 2
			case "keys":
				i = len(argv)
			}
		}
	}
	return out
}
