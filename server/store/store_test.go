package store

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

func fixedClock(ms int64) *Clock {
	return NewClock(func() time.Time { return time.UnixMilli(ms) })
}

// TestScanGuarantee: keys present during the whole scan are returned at
// least once even while other keys are added and removed between calls.
func TestScanGuarantee(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for round := 0; round < 50; round++ {
		db := New(fixedClock(1000), Hooks{})
		stable := map[string]bool{}
		for i := 0; i < 200; i++ {
			k := fmt.Sprintf("s%d", i)
			db.Add([]byte(k), &Object{Kind: KindString})
			stable[k] = true
		}
		churn := 0
		seen := map[string]bool{}
		cur := uint64(0)
		for {
			cur = db.Scan(cur, 1+r.Intn(20), func(o *Object) { seen[o.Key()] = true })
			// churn: add and remove non-stable keys
			for j := 0; j < 5; j++ {
				k := fmt.Sprintf("c%d", churn)
				churn++
				db.Add([]byte(k), &Object{Kind: KindString})
				if r.Intn(2) == 0 {
					db.Delete([]byte(fmt.Sprintf("c%d", r.Intn(churn))))
				}
			}
			if cur == 0 {
				break
			}
		}
		for k := range stable {
			if !seen[k] {
				t.Fatalf("round %d: scan missed %s", round, k)
			}
		}
	}
}

func TestExpiry(t *testing.T) {
	ms := int64(10_000)
	clk := NewClock(func() time.Time { return time.UnixMilli(ms) })
	var expired []string
	db := New(clk, Hooks{Expired: func(k string) { expired = append(expired, k) }})
	for i := 0; i < 100; i++ {
		o := &Object{Kind: KindString, ExpireAt: 10_500}
		db.Add([]byte(fmt.Sprint(i)), o)
	}
	db.Add([]byte("keep"), &Object{Kind: KindString})
	if db.VolatileLen() != 100 || db.Len() != 101 {
		t.Fatalf("len %d volatile %d", db.Len(), db.VolatileLen())
	}
	clk.SetOffset(1000)
	db.Tick()
	if db.Get([]byte("7")) != nil {
		t.Fatal("lazy expiry")
	}
	for db.VolatileLen() > 0 {
		db.ActiveExpire(16)
	}
	if db.Len() != 1 || len(expired) != 100 || db.ExpiredKeys != 100 {
		t.Fatalf("after active expiry: len %d expired %d", db.Len(), len(expired))
	}
}

func TestZSet(t *testing.T) {
	z := NewZSet()
	z.Add("b", 2)
	z.Add("a", 2)
	z.Add("c", 1)
	z.Add("b", 0)
	want := []string{"b", "c", "a"}
	for i, w := range want {
		if z.At(i).Member != w {
			t.Fatalf("rank %d = %s, want %s", i, z.At(i).Member, w)
		}
	}
	if r, _ := z.Rank("a"); r != 2 {
		t.Fatalf("rank a = %d", r)
	}
	z.Remove("c")
	if z.Len() != 2 || z.FirstAtLeast(1, false) != 1 {
		t.Fatal("remove/search")
	}
}

func TestList(t *testing.T) {
	var l List
	for i := 0; i < 20; i++ {
		l.PushBack([]byte{byte(i)})
		l.PushFront([]byte{byte(100 + i)})
	}
	if l.Len() != 40 || l.At(0)[0] != 119 || l.At(39)[0] != 19 {
		t.Fatal("push")
	}
	if l.PopFront()[0] != 119 || l.PopBack()[0] != 19 || l.Len() != 38 {
		t.Fatal("pop")
	}
}

func TestDumpRoundTrip(t *testing.T) {
	objs := []*Object{
		{Kind: KindString, Str: []byte("hello")},
		NewObject(KindList), NewObject(KindSet), NewObject(KindHash), NewObject(KindZSet),
	}
	objs[1].List.PushBack([]byte("x"))
	objs[2].SetAdd("m")
	objs[3].HashSet("f", []byte("v"))
	objs[4].ZSet.Add("z", -1.5)
	for _, o := range objs {
		p := Dump(o)
		back, err := Restore(p)
		if err != nil {
			t.Fatalf("%v: %v", o.Kind, err)
		}
		if string(Dump(back)) != string(p) {
			t.Fatalf("%v: round trip differs", o.Kind)
		}
		for i := range p {
			bad := append([]byte(nil), p...)
			bad[i] ^= 1
			if _, err := Restore(bad); err == nil {
				t.Fatalf("%v: corruption at byte %d not detected", o.Kind, i)
			}
		}
	}
}
