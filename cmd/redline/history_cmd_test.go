package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// `redline history cat` prints the JSON lines of either format, from a run
// directory or a file; a torn end exits 2 naming the torn bytes after
// printing every whole entry; garbage and a missing history exit 254.
func TestHistoryCat(t *testing.T) {
	lines := `{"index":0,"time":0,"process":0,"type":"invoke","f":"add","key":"p:counter:0","value":1}
{"index":1,"time":10,"process":0,"type":"ok","f":"add","key":"p:counter:0","value":1}
`
	more := `{"index":2,"time":20,"process":"nemesis","type":"info","f":"final-reads"}
`
	var z bytes.Buffer
	fw, err := history.NewFrameWriter(&z)
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.WriteFrame([]byte(lines), 2); err != nil {
		t.Fatal(err)
	}
	first := z.Len()
	if err := fw.WriteFrame([]byte(more), 1); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	garbled := bytes.Clone(z.Bytes())
	garbled[first+20] ^= 0xff
	for _, tc := range []struct {
		name, arg, out, err string
		code                int
	}{
		{"compressed run dir", write(history.FileName, z.Bytes()), lines + more, "", exitValid},
		{"old run dir", write(history.JSONLinesName, []byte(lines+more)), lines + more, "", exitValid},
		{"compressed file", filepath.Join(write(history.FileName, z.Bytes()), history.FileName), lines + more, "", exitValid},
		{"torn frame", write(history.FileName, z.Bytes()[:z.Len()-3]), lines, "frame cut mid-write", exitUnknown},
		{"garbled frame", write(history.FileName, garbled), lines, "frame 2", exitBadArgs},
		{"no history", t.TempDir(), "", "holds no history", exitBadArgs},
		{"no such path", filepath.Join(t.TempDir(), "nope"), "", "no such file", exitBadArgs},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"history", "cat", tc.arg}, &out, &errb)
		if code != tc.code || out.String() != tc.out || !strings.Contains(errb.String(), tc.err) {
			t.Errorf("%s: exit %d (want %d), stdout %q (want %q), stderr %q (want it to say %q)",
				tc.name, code, tc.code, out.String(), tc.out, errb.String(), tc.err)
		}
	}
	if code := run([]string{"history", "cat"}, new(bytes.Buffer), new(bytes.Buffer)); code != exitBadArgs {
		t.Errorf("history cat without an argument: exit %d", code)
	}
}
