package cluster

import (
	"testing"
	"time"
)

func BenchmarkRoute(b *testing.B) {
	nw := newNetwork(&testing.T{}, 6, 1)
	nw.form(3)
	v := nw.nodes[1].n.View()
	r := Request{Slots: []int{6000}, Write: true}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v.Route(r).Verdict != Serve {
			b.Fatal("not served")
		}
	}
}

// BenchmarkSimulatedSecond measures one simulated second (10 ticks) of a
// formed 6-node cluster, all messages through the codec.
func BenchmarkSimulatedSecond(b *testing.B) {
	nw := newNetwork(&testing.T{}, 6, 1)
	nw.form(3)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nw.run(time.Second)
	}
}
