// A client as CLIENT LIST, CLIENT INFO and the ACL log describe it.

package server

import (
	"fmt"
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
