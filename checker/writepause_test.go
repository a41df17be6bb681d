package checker

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/redline-dev/redline/harness/history"
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
		add(history.Op{Time: end, Process: history.Nemesis, Type: history.Info, F: "start-migrate", Detail: b})
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

	r := WritePause().Check(context.Background(), ops)
	if r.Valid != Valid {
		t.Fatalf("verdict %v", r.Valid)
	}
	atomic := r.Figures["atomic"].(map[string]any)
	classic := r.Figures["classic"].(map[string]any)
	if g := atomic["longest_gap_ms"].(map[string]any)["max"]; g != 210.0 {
		t.Fatalf("atomic longest gap %v ms, want 210: the last write 10 ms before the hole (%v)", g, r.Figures)
	}
	if g := classic["longest_gap_ms"].(map[string]any)["max"]; g != 710.0 {
		t.Fatalf("classic longest gap %v ms, want 710 (%v)", g, r.Figures)
	}
	if classic["unmeasured"] != 1 || atomic["unmeasured"] != 0 {
		t.Fatalf("unmeasured: %v", r.Figures)
	}
	per := r.Figures["per_migration"].([]map[string]any)
	if len(per) != 2 || per[0]["server_write_pause_ms"] == nil {
		t.Fatalf("per migration: %v", per)
	}
}

// TestWritePauseNoMigration: without migrations nothing is measured.
func TestWritePauseNoMigration(t *testing.T) {
	r := WritePause().Check(context.Background(), nil)
	if r.Valid != Valid || r.Figures["migrations"] != 0 || r.Figures["atomic"] != nil {
		t.Fatalf("%v %v", r.Valid, r.Figures)
	}
}
