package nemesis

import (
	"slices"
	"strings"
	"testing"
)

// Parse is the one reading of a --nemesis list: the command line refuses
// with its words before anything starts, and New reads the same names
// the same way (its test: TestNewChecksNamesAgainstTheTarget).
func TestParseReadsTheListOnce(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string // a part of the error; "" for none
	}{
		{nil, "empty: choose from none, partition"},
		{[]string{"bogus"}, `unknown fault "bogus": choose from none`},
		{[]string{"bogus:x"}, `unknown fault "bogus:x"`},
		{[]string{"Partition"}, `unknown fault "Partition"`},
		{[]string{"partition:bogus"}, `unknown mode "bogus" of fault partition: choose from isolate-one`},
		{[]string{"none", "kill"}, `"none" cannot be combined with other faults`},
		{[]string{"all", "none"}, `"none" cannot be combined`},
		{[]string{"none"}, ""},
		{[]string{"all"}, ""},
		{[]string{"partition:one-way", "kill", "partition:halves"}, ""},
	} {
		_, err := Parse(c.names)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Parse(%q) = %v, want %q", c.names, err, c.want)
		}
	}
	s, err := Parse([]string{"partition:one-way", "kill", "partition:halves", "all"})
	if err != nil || !s.All || s.None || !slices.Equal(s.Want, []string{"partition", "kill", "partition"}) ||
		!slices.Equal(s.Only["partition"], []string{"one-way", "halves"}) {
		t.Fatalf("Parse = %+v, %v", s, err)
	}
}
