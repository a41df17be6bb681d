package server

import (
	"strconv"
	"strings"
	"time"
)

// The reply buffer size CLIENT LIST shows as rbs (and its peak, rbp), as
// Redis 7.0's clientsCronResizeOutputBuffer sizes a client's static reply
// buffer: 16 KB at first; each cron tick halves it (to the peak + 1, at
// least 1 KB) while the peak stays under half of it, doubles it (up to
// 16 KB) when a flush filled it; the peak restarts every
// reply-buffer-peak-reset-time (5 s; DEBUG REPLYBUFFER changes it). Here
// replies go to a Go slice whatever rbs says: the figure is the model's,
// so a client's view of an idle or busy connection matches Redis's.
const (
	replyBufMin              = 1024      // PROTO_REPLY_MIN_BYTES
	replyBufChunk            = 16 * 1024 // PROTO_REPLY_CHUNK_BYTES
	replyBufPeakResetDefault = 5000      // REPLY_BUFFER_DEFAULT_PEAK_RESET_TIME, ms
)

// replyBufSize is the modelled buffer size.
func (c *Client) replyBufSize() int64 {
	if n := c.rbufSize.Load(); n > 0 {
		return n
	}
	return replyBufChunk
}

// noteReplyFlush records a flush of n reply bytes: what fit in the
// buffer is its peak's candidate.
func (c *Client) noteReplyFlush(n int) {
	used := min(int64(n), c.replyBufSize())
	for {
		p := c.rbufPeak.Load()
		if used <= p || c.rbufPeak.CompareAndSwap(p, used) {
			return
		}
	}
}

// resizeReplyBuffers is the cron's pass over every client (lock held).
func (s *Server) resizeReplyBuffers(now time.Time) {
	if !s.replyBuf.resizing {
		return
	}
	ms := now.UnixMilli()
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	for _, c := range s.clients {
		size, peak := c.replyBufSize(), c.rbufPeak.Load()
		newSize := int64(0)
		if size/2 >= replyBufMin && peak < size/2 {
			newSize = max(replyBufMin, peak+1)
		} else if size*2 < replyBufChunk*2 && peak == size {
			newSize = min(replyBufChunk, size*2)
		}
		if reset := s.replyBuf.peakResetMs; reset >= 0 && ms-c.rbufPeakReset >= reset {
			c.rbufPeak.Store(0)
			c.rbufPeakReset = ms
		}
		if newSize > 0 {
			c.rbufSize.Store(newSize)
		}
	}
}

// debugReplyBuffer is DEBUG REPLYBUFFER PEAK-RESET-TIME <ms|never|reset>
// and DEBUG REPLYBUFFER RESIZING <0|1>.
func debugReplyBuffer(c *Client, argv [][]byte) {
	s := c.s
	if len(argv) != 4 {
		c.OK() // other forms were accepted and ignored before; Redis's falls through to its help
		return
	}
	arg := string(argv[3])
	switch {
	case strings.EqualFold(string(argv[2]), "peak-reset-time"):
		switch {
		case strings.EqualFold(arg, "never"):
			s.replyBuf.peakResetMs = -1
		case strings.EqualFold(arg, "reset"):
			s.replyBuf.peakResetMs = replyBufPeakResetDefault
		default:
			n, ok := parseInt(argv[3])
			if !ok {
				c.Error("ERR value is not an integer or out of range")
				return
			}
			s.replyBuf.peakResetMs = n
		}
	case strings.EqualFold(string(argv[2]), "resizing"):
		n, _ := strconv.Atoi(arg) // atoi, as Redis
		s.replyBuf.resizing = n != 0
	default:
		c.Error("ERR unknown subcommand or wrong number of arguments for 'REPLYBUFFER'. Try DEBUG HELP.")
		return
	}
	c.OK()
}
