package server

import (
	"fmt"
	"sort"
	"strings"
)

// maxErrorCodes bounds INFO errorstats as Redis does (128 distinct codes).
const maxErrorCodes = 128

// countError counts an error reply by its code, the text up to the first
// space ("ERR", "MOVED", "WRONGTYPE"), for INFO errorstats. Only error
// replies pay for it.
func (s *Server) countError(msg string) {
	code := msg
	if i := strings.IndexByte(msg, ' '); i >= 0 {
		code = msg[:i]
	}
	if s.stats.errCodes == nil {
		s.stats.errCodes = map[string]int64{}
	}
	if _, ok := s.stats.errCodes[code]; !ok && len(s.stats.errCodes) >= maxErrorCodes {
		return
	}
	s.stats.errCodes[code]++
}

// errorstatsInfo is INFO errorstats: errorstat_<CODE>:count=<n>, by code.
func (s *Server) errorstatsInfo() string {
	codes := make([]string, 0, len(s.stats.errCodes))
	for c := range s.stats.errCodes {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	var b strings.Builder
	for _, c := range codes {
		fmt.Fprintf(&b, "errorstat_%s:count=%d\r\n", c, s.stats.errCodes[c])
	}
	return b.String()
}
