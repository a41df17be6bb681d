package checker

// keptStrings keeps one copy of each string a checker holds on to out of a
// scan's buffers (a node's address, a key, an error class), instead of a
// copy per op that names it (issue 42: at 150M entries the copies of the
// same few node addresses and keys held 0.6 GB).
type keptStrings map[string]string

// of is s's kept copy.
func (n keptStrings) of(s string) string {
	if c, ok := n[s]; ok {
		return c
	}
	c := string([]byte(s))
	n[c] = c
	return c
}
