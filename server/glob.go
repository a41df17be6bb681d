package server

// GlobMatch matches s against a Redis glob pattern (*, ?, [abc], [^a-z],
// backslash escapes), as KEYS, SCAN MATCH and CONFIG GET use.
func GlobMatch(pat, s []byte) bool {
	var noLonger bool
	return globMatch(pat, s, 0, &noLonger)
}

// globMatch reports whether pat matches s. Once the pattern after a '*'
// has failed against every suffix of s, *noLonger tells the enclosing '*'
// loops that trying later starts is pointless too (Redis's
// skipLongerMatches): without it "*a*a*a*...b" takes exponential time.
func globMatch(pat, s []byte, depth int, noLonger *bool) bool {
	if depth > 1000 {
		return false
	}
	for len(pat) > 0 {
		switch pat[0] {
		case '*':
			for len(pat) > 1 && pat[1] == '*' {
				pat = pat[1:]
			}
			if len(pat) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globMatch(pat[1:], s[i:], depth+1, noLonger) {
					return true
				}
				if *noLonger {
					return false
				}
			}
			*noLonger = true
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			pat = pat[1:]
			not := false
			if len(pat) > 0 && pat[0] == '^' {
				not = true
				pat = pat[1:]
			}
			match := false
			for {
				if len(pat) == 0 {
					break
				}
				if pat[0] == '\\' && len(pat) >= 2 {
					pat = pat[1:]
					if pat[0] == s[0] {
						match = true
					}
				} else if pat[0] == ']' {
					break
				} else if len(pat) >= 3 && pat[1] == '-' {
					lo, hi := pat[0], pat[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					if s[0] >= lo && s[0] <= hi {
						match = true
					}
					pat = pat[2:]
				} else if pat[0] == s[0] {
					match = true
				}
				pat = pat[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
			if len(pat) == 0 {
				return len(s) == 0
			}
		case '\\':
			if len(pat) >= 2 {
				pat = pat[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || pat[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		pat = pat[1:]
	}
	return len(s) == 0
}
