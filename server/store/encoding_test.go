package store

import (
	"slices"
	"strings"
	"testing"
)

func TestHashKeepsListpackOrderUntilItOutgrowsIt(t *testing.T) {
	o := NewObject(KindHash)
	for _, f := range []string{"c", "a", "b"} {
		o.HashSet(f, []byte("v"))
	}
	o.HashSet("a", []byte("new value")) // an update keeps its place
	o.HashDel("c")
	o.HashSet("c", []byte("v")) // re-added: at the end
	if got := o.HashFields(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("order %q", got)
	}
	if o.Encoding() != "listpack" {
		t.Fatalf("encoding %s", o.Encoding())
	}
	o.HashSet("long", []byte(strings.Repeat("x", DefaultLimits.HashMaxListpackValue+1)))
	if o.Encoding() != "hashtable" {
		t.Fatalf("a long value keeps %s", o.Encoding())
	}
	o.HashDel("long") // conversion is for good, as in Redis
	if o.Encoding() != "hashtable" || !slices.Equal(o.HashFields(), []string{"a", "b", "c"}) {
		t.Fatalf("after delete: %s %q", o.Encoding(), o.HashFields())
	}
	big := NewObject(KindHash)
	for i := 0; i <= DefaultLimits.HashMaxListpackEntries; i++ {
		big.HashSet(strings.Repeat("f", i+1), nil)
	}
	if big.Encoding() != "hashtable" {
		t.Fatalf("%d fields: %s", big.Len(), big.Encoding())
	}
}

func TestIntsetOrderAndConversion(t *testing.T) {
	o := NewObject(KindSet)
	for _, m := range []string{"10", "-5", "2", "9223372036854775807", "-9223372036854775808"} {
		o.SetAdd(m)
	}
	if got := o.SetMembers(); !slices.Equal(got, []string{"-9223372036854775808", "-5", "2", "10", "9223372036854775807"}) {
		t.Fatalf("intset order %q", got)
	}
	if o.Encoding() != "intset" {
		t.Fatalf("encoding %s", o.Encoding())
	}
	for _, notInt := range []string{"01", "+1", "-0", "a"} {
		s := NewObject(KindSet)
		s.SetAdd("1")
		s.SetAdd(notInt)
		if s.Encoding() != "hashtable" {
			t.Errorf("%q kept the intset", notInt)
		}
	}
}
