package checker

import (
	"bytes"
	"context"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// The premise of checking in bounded memory (issue 42): a per-key
// checker run on each key partition of a spilled history, one at a time,
// finds what it finds on the whole history. Here the linearizability
// search: the anomalous keys of the partitions are those of the whole,
// the keys and ops add up, and the merged verdict is the whole's, on a
// history with planted anomalies (a false valid would show as a key
// missing) and on the same history clean.
func TestPartitionedLinearizableAgreesWithWhole(t *testing.T) {
	for _, plant := range []bool{false, true} {
		ops := genRegister(11, 24, 150, 4, 0.03)
		if plant {
			// A read of a value no write produced, on two keys.
			for _, key := range []string{"r5", "r17"} {
				for i := range ops {
					if op := &ops[i]; op.Key == key && op.Type == history.OK && op.F == "read" {
						op.Value = rawInt(99)
						break
					}
				}
			}
		}
		var buf bytes.Buffer
		fw, err := history.NewFrameWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		var lines bytes.Buffer
		for i := range ops {
			if err := history.Encode(&lines, &ops[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := fw.WriteFrame(lines.Bytes(), len(ops)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), history.FileName)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		const n = 5
		p, err := history.Spill(path, t.TempDir(), n, func(op *history.Op) int {
			h := fnv.New32a()
			h.Write([]byte(op.Key))
			return int(h.Sum32() % n)
		})
		if err != nil {
			t.Fatal(err)
		}
		c := Linearizable(LinearizableOptions{Timeout: time.Minute, NoVisualization: true})
		whole := c.Check(context.Background(), NewHistory(ops))
		var anomalous []string
		keys, nops, verdict := 0, 0, Valid
		for i := range p.N() {
			part, err := p.Load(i)
			if err != nil {
				t.Fatal(err)
			}
			r := c.Check(context.Background(), NewHistory(part))
			anomalous = append(anomalous, fig[[]string](t, r, "anomalous_keys")...)
			keys += fig[int](t, r, "keys")
			nops += fig[int](t, r, "ops")
			verdict = Merge(verdict, r.Valid)
		}
		slices.Sort(anomalous)
		want := fig[[]string](t, whole, "anomalous_keys")
		if !slices.Equal(anomalous, want) || keys != fig[int](t, whole, "keys") || nops != fig[int](t, whole, "ops") || verdict != whole.Valid {
			t.Fatalf("planted %v: partitions found %v on %d keys, %d ops, %v; the whole %v on %v keys, %v ops, %v",
				plant, anomalous, keys, nops, verdict, want, whole.Values()["keys"], whole.Values()["ops"], whole.Valid)
		}
		if plant != (whole.Valid == Invalid) || plant && len(want) != 2 {
			t.Fatalf("planted %v: the whole history is %v with anomalous keys %v", plant, whole.Valid, want)
		}
	}
}
