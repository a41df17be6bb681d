package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/redline-dev/redline/history"
)

// TestWritePause: writes on a migrated slot every 10 ms, with a 200 ms hole
// during an atomic migration and a 700 ms hole during a classic one; a
// third migration has no writes around it and stays unmeasured.
func TestWritePause(t *testing.T) {
	const msec = int64(1e6)
	key := "k1"
	slot := history.Keyslot(key)
	var ops []history.Op
	idx := int64(0)
	add := func(op history.Op) {
		op.Index = idx
		idx++
		ops = append(ops, op)
	}
	write := func(at int64) {
		add(history.Op{Time: at, Process: 1, Type: history.Invoke, F: "write", Key: key, Value: []byte("1")})
		add(history.Op{Time: at + msec, Process: 1, Type: history.OK, F: "write", Key: key, Value: []byte("1")})
	}
	nemesis := func(at, end int64, detail map[string]any) {
		b, _ := json.Marshal(detail)
		add(history.Op{Time: at, Process: history.Nemesis, Type: history.Invoke, F: "start-migrate"})
		add(history.Op{Time: end, Process: history.Nemesis, Type: history.Info, F: "start-migrate", Ext: history.NewExt(history.Ext{Detail: b})})
	}
	moved := []map[string]any{{"slot": slot, "from": "n1", "to": "n2", "keys": 1}}
	tm := int64(0)
	for ; tm < 1000*msec; tm += 10 * msec {
		write(tm)
	}
	nemesis(tm, tm+300*msec, map[string]any{"method": "atomic", "moved": moved, "tasks": []map[string]any{{"write_pause_ms": 150}}})
	tm += 200 * msec
	for end := tm + 1000*msec; tm < end; tm += 10 * msec {
		write(tm)
	}
	nemesis(tm, tm+800*msec, map[string]any{"moved": moved})
	tm += 700 * msec
	for end := tm + 1000*msec; tm < end; tm += 10 * msec {
		write(tm)
	}
	nemesis(tm+100*msec, tm+200*msec, map[string]any{"moved": moved})

	r := WritePause().Check(context.Background(), NewHistory(ops))
	if r.Valid != Valid {
		t.Fatalf("verdict %v", r.Valid)
	}
	atomic, classic := typed[*WritePauseFigures](t, r).Atomic, typed[*WritePauseFigures](t, r).Classic
	if g := val(atomic.LongestGapMs.Max); g != 210.0 {
		t.Fatalf("atomic longest gap %v ms, want 210: the last write 10 ms before the hole (%v)", g, r.Figures)
	}
	if g := val(classic.LongestGapMs.Max); g != 710.0 {
		t.Fatalf("classic longest gap %v ms, want 710 (%v)", g, r.Figures)
	}
	if classic.Unmeasured != 1 || atomic.Unmeasured != 0 {
		t.Fatalf("unmeasured: %v", r.Figures)
	}
	per := typed[*WritePauseFigures](t, r).PerMigration
	if len(per) != 2 || per[0]["server_write_pause_ms"] == nil {
		t.Fatalf("per migration: %v", per)
	}
}

// TestWritePauseNoMigration: without migrations nothing is measured.
func TestWritePauseNoMigration(t *testing.T) {
	r := WritePause().Check(context.Background(), NewHistory(nil))
	if r.NotApplicable == "" {
		t.Fatalf("%v %v, want not applicable", r.Valid, r.Figures)
	}
}

// TestWritePausePerTask: one atomic step with two tasks; writes stop for
// 300 ms on the first task's slot only. Each task gets its own gap, and
// each task's server write_pause_ms is reported beside it.
func TestWritePausePerTask(t *testing.T) {
	const msec = int64(1e6)
	k1, k2 := "a1", "b2"
	s1, s2 := history.Keyslot(k1), history.Keyslot(k2)
	var ops []history.Op
	add := func(op history.Op) {
		op.Index = int64(len(ops))
		ops = append(ops, op)
	}
	write := func(at int64, key string) {
		add(history.Op{Time: at, Process: 1, Type: history.Invoke, F: "write", Key: key, Value: []byte("1")})
		add(history.Op{Time: at + msec, Process: 1, Type: history.OK, F: "write", Key: key, Value: []byte("1")})
	}
	for tm := int64(0); tm < 2000*msec; tm += 10 * msec {
		if tm < 1000*msec || tm >= 1300*msec {
			write(tm, k1)
		}
		write(tm+5*msec, k2)
	}
	detail, _ := json.Marshal(map[string]any{"method": "atomic",
		"moved": []map[string]any{{"slot": s1}, {"slot": s2}},
		"tasks": []map[string]any{
			{"id": "t1", "slots_range": fmt.Sprintf("%d-%d", s1, s1), "write_pause_ms": 250},
			{"id": "t2", "slots_range": fmt.Sprintf("%d-%d", s2, s2), "write_pause_ms": 5},
		}})
	ops = append(ops, history.Op{Index: int64(len(ops)), Time: 900 * msec, Process: history.Nemesis, Type: history.Invoke, F: "start-migrate"},
		history.Op{Index: int64(len(ops) + 1), Time: 1400 * msec, Process: history.Nemesis, Type: history.OK, F: "start-migrate", Ext: history.NewExt(history.Ext{Detail: detail})})
	r := WritePause().Check(context.Background(), NewHistory(ops))
	atomic := typed[*WritePauseFigures](t, r).Atomic
	if atomic.Measured != 2 || atomic.Unit != "task" {
		t.Fatalf("figures %v: want two tasks measured", r.Figures)
	}
	per := typed[*WritePauseFigures](t, r).PerMigration
	got := map[any]any{}
	for _, e := range per {
		got[e["task"]] = e["longest_gap_ms"]
		if e["task"] == "t1" && e["server_write_pause_ms"] != int64(250) {
			t.Fatalf("t1 server pause %v", e)
		}
	}
	if got["t1"] != 310.0 || got["t2"] != 10.0 {
		t.Fatalf("per-task gaps %v, want t1 310 ms, t2 10 ms", got)
	}
	if g := val(atomic.ServerWritePauseMs.Max); g != 250.0 {
		t.Fatalf("server pause max %v", g)
	}
}
