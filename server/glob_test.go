package server

import (
	"strings"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true}, {"*a*b", "aXb", true}, {"*a*b", "ab", true}, {"*a*b", "ba", false},
		{"a*b*c", "aXbYc", true}, {"a*b*c", "aXbY", false}, {"*b*", "abc", true}, {"h?llo", "hello", true},
		{"h[^e]llo", "hello", false}, {"h[a-b]llo", "hbllo", true}, {"*x", "", false}, {"a*", "a", true},
	}
	for _, c := range cases {
		if got := GlobMatch([]byte(c.pat), []byte(c.s)); got != c.want {
			t.Errorf("GlobMatch(%q, %q) = %v", c.pat, c.s, got)
		}
	}
}

// TestGlobMatchNoExponentialBacktracking: KEYS or SCAN MATCH with a
// pattern of many stars against a long key must not hang the server (as
// Redis's CVE-2022-36021 fix); before, this call did not return.
func TestGlobMatchNoExponentialBacktracking(t *testing.T) {
	pat := strings.Repeat("*a", 40) + "*b"
	if GlobMatch([]byte(pat), []byte(strings.Repeat("a", 200))) {
		t.Fatal("matched")
	}
}
