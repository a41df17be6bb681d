package checker

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// Findings split among partitions in any way and merged are the findings
// of the whole, added in their order: the same classes in the same order,
// counts and first examples, with 0, 1 and 3 examples kept.
func TestFindingsMergeAsWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	classes := []string{"garbage", "lost", "double-hold", "unexpected"}
	for round := range 200 {
		type finding struct {
			p     Pos
			class string
			part  int
		}
		var all []finding
		parts := 1 + r.IntN(5)
		for i := range 1 + r.IntN(40) {
			key := fmt.Sprintf("k%d", r.IntN(6))
			p := Pos{Phase: r.IntN(3), Key: key, At: int64(r.IntN(10)), Seq: int64(i)}
			// A key's findings in one partition, as a slot's keys are.
			all = append(all, finding{p, classes[r.IntN(len(classes))], int(key[1]-'0') % parts})
		}
		for _, max := range []int{0, 1, 3} {
			whole := newAnomalies(max)
			sorted := slices.Clone(all)
			slices.SortStableFunc(sorted, func(a, b finding) int { return a.p.Compare(b.p) })
			for _, f := range sorted {
				whole.add(f.class, map[string]any{"at": f.p.Seq})
			}
			fs := make([]*Findings, parts)
			for i := range fs {
				fs[i] = NewFindings(max)
			}
			for _, f := range all {
				fs[f.part].Add(f.p, f.class, map[string]any{"at": f.p.Seq})
			}
			m := NewFindings(max)
			for _, i := range r.Perm(parts) {
				m.Merge(fs[i])
			}
			got := m.Recorder().a
			if !slices.Equal(got.order, whole.order) || !reflect.DeepEqual(got.count, whole.count) || !reflect.DeepEqual(got.examples, whole.examples) {
				t.Fatalf("round %d, max %d:\nmerged %v %v %v\nwhole  %v %v %v", round, max, got.order, got.count, got.examples, whole.order, whole.count, whole.examples)
			}
		}
	}
}

// Names two partitions use are found; names one partition alone uses
// are not.
func TestSharedNames(t *testing.T) {
	var s SharedNames
	s.Add(map[string]bool{"a": true, "b": true}, map[string]bool{"a": true, "x": true})
	s.Add(map[string]bool{"c": true, "b": true}, map[string]bool{"d": true})
	s.Add(map[string]bool{"x": true}, nil)
	got := s.Shared()
	want := map[uint64]bool{NameHash("b"): true, NameHash("x"): true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("shared %v, want b and x %v", got, want)
	}
	var none SharedNames
	none.Add(map[string]bool{"a": true}, map[string]bool{"a": true, "zz": true})
	none.Add(map[string]bool{"b": true}, nil)
	if got := none.Shared(); got != nil {
		t.Fatalf("shared %v, want none", got)
	}
}
