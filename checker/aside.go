package checker

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/history"
)

// Set-aside copies. On a cluster redline created, a key with a different
// copy on each side of a move keeps the destination's copy under its name
// and gets the source's beside it in the same slot (history.AsideName, a
// journalled "set-aside" step): a write that only the source's copy held
// is then missing from the key's final read but is not lost, it is kept
// under another name. The census lists those copies under their key; a
// checker counts such a write as "set aside", a named outcome of its own,
// and says where it is.

// asideCopy is one set-aside copy of a key, as the census found it.
type asideCopy struct {
	name, node, role string
	value            *string
	members          map[int64]bool
}

// where names the copy for a reader: "NAME on n1 (primary)".
func (c asideCopy) where() string {
	s := c.name + " on " + c.node
	if c.role != "" {
		s += " (" + c.role + ")"
	}
	return s
}

// asides are the set-aside copies of the run's keys, by key, primaries'
// copies first.
type asides map[string][]asideCopy

// asidesOf indexes a census' set-aside copies (nil census: none).
func asidesOf(c *history.Census) asides {
	if c == nil {
		return nil
	}
	out := asides{}
	for _, n := range c.Nodes {
		for key, as := range n.Asides {
			for _, a := range as {
				ac := asideCopy{name: a.Name, node: n.Name, role: n.Role, value: a.Value}
				if a.Type == "set" {
					ac.members = make(map[int64]bool, len(a.Members))
					for _, m := range a.Members {
						if v, err := strconv.ParseInt(m, 10, 64); err == nil {
							ac.members[v] = true
						}
					}
				}
				out[key] = append(out[key], ac)
			}
		}
	}
	for _, cs := range out {
		slices.SortStableFunc(cs, func(a, b asideCopy) int {
			if (a.role == "primary") != (b.role == "primary") {
				if a.role == "primary" {
					return -1
				}
				return 1
			}
			if a.node != b.node {
				return strings.Compare(a.node, b.node)
			}
			return strings.Compare(a.name, b.name)
		})
	}
	return out
}

// elemAt is where a set-aside copy of key holds element v ("" when none
// does), a primary's copy before a replica's.
func (as asides) elemAt(key string, v int64) string {
	for _, c := range as[key] {
		if c.members[v] {
			return c.where()
		}
	}
	return ""
}

// describeAsides names the first set-aside elements and where each is.
func describeAsides(ex []map[string]any) string {
	var parts []string
	for _, e := range capList(ex, 3) {
		parts = append(parts, fmt.Sprintf("key %v op %v element %v in %v", e["key"], e["index"], e["element"], e["kept_in"]))
	}
	if len(ex) > 3 {
		parts = append(parts, "...")
	}
	return strings.Join(parts, ", ")
}
