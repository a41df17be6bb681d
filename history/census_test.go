package history

import (
	"encoding/json"
	"testing"
)

func TestAsideNameKeepsTheSlotAndParsesBack(t *testing.T) {
	for _, k := range []string{"r:traffic:1", "r:{user1}:cart", "r:a{b", "r:", "r:set:{42}", "r:1:2{s0.1}"} {
		got := AsideName(k, "n2")
		if Keyslot(got) != Keyslot(k) {
			t.Errorf("AsideName(%q) = %q: slot %d, want %d", k, got, Keyslot(got), Keyslot(k))
		}
		key, from, ok := AsideOf(got, "r:")
		if !ok || key != k || from != "n2" {
			t.Errorf("AsideOf(%q) = %q, %q, %v; want %q, n2", got, key, from, ok, k)
		}
	}
	for _, name := range []string{"r:1:2{s0.1}", "r:1:2{s0.1}:redline-conflict-from-", "other:x:redline-conflict-from-n1", "{other:x}:redline-conflict-from-n1"} {
		if key, _, ok := AsideOf(name, "r:"); ok {
			t.Errorf("AsideOf(%q) = %q: not a set-aside copy of a key of the run", name, key)
		}
	}
}

// A census decoded from a history lists the set-aside copies under their
// key, not as keys of their own, whether the run's keys carry a hash tag
// (the copy's name starts with the prefix: an older census listed it among
// the keys) or not.
func TestCensusOfAttachesAsides(t *testing.T) {
	v := func(s string) *string { return &s }
	tagged, bare := "r:0:1{s0.1}", "r:reg:7"
	c := Census{Prefix: "r:", Nodes: []CensusNode{{Name: "n1", Keys: map[string]CensusKey{
		tagged:                                   {Type: "set", Len: 1, Members: []string{"3"}},
		AsideName(tagged, "n2"):                  {Type: "set", Len: 2, Members: []string{"4", "5"}},
		AsideName(AsideName(tagged, "n2"), "n3"): {Type: "set", Len: 1, Members: []string{"6"}},
		bare:                                     {Type: "string", Value: v("1")},
		AsideName(bare, "n5"):                    {Type: "string", Value: v("2")},
	}}}}
	b, _ := json.Marshal(c)
	op := Op{Process: Nemesis, Type: Info, F: CensusEvent}
	op.SetDetail(b)
	got := CensusOf([]Op{op})
	if got == nil {
		t.Fatal("no census")
	}
	n := got.Nodes[0]
	if len(n.Keys) != 2 || n.Keys[tagged].Len != 1 || *n.Keys[bare].Value != "1" {
		t.Fatalf("keys %v: want the two keys under their own names only", n.Keys)
	}
	if as := n.Asides[tagged]; len(as) != 2 || as[0].From != "n2" || as[0].Len != 2 || as[1].From != "n3" {
		t.Fatalf("asides of %s: %+v", tagged, as)
	}
	if as := n.Asides[bare]; len(as) != 1 || as[0].From != "n5" || *as[0].Value != "2" || as[0].Name != "{r:reg:7}:redline-conflict-from-n5" {
		t.Fatalf("asides of %s: %+v", bare, as)
	}
	got.AttachAsides()
	if len(got.Nodes[0].Asides[tagged]) != 2 || len(got.Nodes[0].Keys) != 2 {
		t.Fatal("attaching twice changed the census")
	}
}
