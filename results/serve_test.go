package results_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
	"github.com/redline-dev/redline/results/resultstest"
)

// store writes three runs: two valid on reference, one invalid on redis.
func store(t *testing.T) (string, []*results.Run) {
	t.Helper()
	root := t.TempDir()
	runs, err := resultstest.WriteStore(root, 600)
	if err != nil {
		t.Fatal(err)
	}
	return root, runs
}

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestBrowserPages(t *testing.T) {
	root, runs := store(t)
	srv := httptest.NewServer(results.Browser{Store: results.Store{Root: root}}.Handler())
	defer srv.Close()

	code, page := get(t, srv, "/")
	if code != 200 || strings.Count(page, `<tr class="run">`) != 3 || !strings.Contains(page, "3 of 3 runs") {
		t.Fatalf("runs table: %d\n%s", code, page)
	}
	if !strings.Contains(page, "lost 3, stale reads 1, anomalous keys 1, anomaly types 1") {
		t.Error("the invalid run's key figures are missing from the table")
	}
	for q, want := range map[string]int{"?verdict=invalid": 1, "?verdict=valid": 2, "?target=redis": 1, "?q=SET-PARTITION": 1, "?q=register-none&verdict=invalid": 0, "?q=register-none&target=reference": 2} {
		_, page := get(t, srv, "/"+q)
		if n := strings.Count(page, `<tr class="run">`); n != want {
			t.Errorf("filter %s: %d rows, want %d", q, n, want)
		}
	}
	_, asc := get(t, srv, "/?sort=test&desc=0")
	if strings.Index(asc, "redis-set-partition") > strings.Index(asc, `class="run-link" href="/runs/reference`) {
		t.Error("sorting by test ascending puts redis before reference")
	}

	ts := func(r *results.Run) string { return r.Time.Format(results.TimeLayout) }
	code, page = get(t, srv, "/runs/redis-set-partition/"+ts(runs[1])+"/")
	if code != 200 || !strings.Contains(page, "report.html") || !strings.Contains(page, "history.jsonl") || !strings.Contains(page, "nodes/n1/cluster-nodes-before.txt") {
		t.Fatalf("run page: %d\n%s", code, page)
	}
	code, page = get(t, srv, "/runs/redis-set-partition/"+ts(runs[1])+"/report.html")
	if code != 200 || !strings.Contains(page, `data-plot="latency-raw"`) {
		t.Fatalf("report: %d", code)
	}
	if code, _ := get(t, srv, "/runs/redis-set-partition/"+ts(runs[1])+"/linearizable/register_7.html"); code != 200 {
		t.Errorf("the report's porcupine link is not served: %d", code)
	}
	for _, bad := range []string{"/runs/redis-set-partition/" + ts(runs[1]) + "/../../../etc/passwd", "/runs/..%2f..%2fetc/x/passwd", "/runs/nope/" + ts(runs[1]) + "/"} {
		if code, _ := get(t, srv, bad); code == 200 {
			t.Errorf("%s served", bad)
		}
	}

	code, page = get(t, srv, "/compare?run=reference-register-none/"+ts(runs[0])+"&run=redis-set-partition/"+ts(runs[1]))
	if code != 200 || !strings.Contains(page, `data-plot="compare-throughput"`) || !strings.Contains(page, "set/set.lost") || !strings.Contains(page, `class="differ"`) {
		t.Fatalf("compare: %d\n%s", code, page)
	}
	if code, page := get(t, srv, "/compare?run=reference-register-none/"+ts(runs[0])); code != 400 || !strings.Contains(page, "at least two runs") {
		t.Errorf("compare of one run: %d %s", code, page)
	}
	code, page = get(t, srv, "/suites/")
	if code != 200 || !strings.Contains(page, "No suite has run yet") {
		t.Errorf("suites: %d", code)
	}
	suite := filepath.Join(root, "suites", "release", "20261130T110000.000")
	_ = os.MkdirAll(suite, 0o755)
	_ = os.WriteFile(filepath.Join(suite, "summary.json"), []byte(`{"valid":"unknown","runs":[{},{},{}]}`), 0o644)
	_ = os.WriteFile(filepath.Join(suite, "summary.html"), []byte(`<p>suite</p>`), 0o644)
	code, page = get(t, srv, "/suites/")
	if code != 200 || !strings.Contains(page, "release") || !strings.Contains(page, "3 runs") || !strings.Contains(page, "v-unknown") {
		t.Errorf("suites: %d\n%s", code, page)
	}
	if code, page := get(t, srv, "/suites/release/20261130T110000.000/summary.html"); code != 200 || page != "<p>suite</p>" {
		t.Errorf("suite summary: %d %q", code, page)
	}
	if code, _ := get(t, srv, "/"); code != 200 {
		t.Error("a suites directory must not break the runs table")
	}
}

func TestCompareText(t *testing.T) {
	_, runs := store(t)
	c, err := results.Compare([]string{runs[0].Dir, runs[1].Dir})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "set/set.lost") || !strings.Contains(b.String(), "valid") {
		t.Errorf("comparison:\n%s", b.String())
	}
	// Prose figures (definitions, notes) are not lined up: no column is
	// padded to the width of a paragraph.
	for _, line := range strings.Split(b.String(), "\n") {
		if len(line) > 160 {
			t.Errorf("a %d-character line: %q", len(line), line)
			break
		}
	}
	if !strings.Contains(b.String(), "config target") || !strings.Contains(b.String(), "(+") {
		t.Errorf("the comparison lacks the settings that differ or the deltas:\n%s", b.String())
	}
	if _, err := results.Compare([]string{runs[0].Dir, "/nonexistent"}); err == nil {
		t.Error("a missing run must be an error")
	}
}

// A run, suite or study directory that links out of the store is not
// served: not its page, not its files.
func TestBrowserRefusesSymlinksOutOfTheStore(t *testing.T) {
	root, _ := store(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("private"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "config.json"), []byte(`{"target":"private"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{filepath.Join(root, "evil", "20260101T000000.000"), filepath.Join(root, "suites", "evil", "20260101T000000.000"),
		filepath.Join(root, "rpo", "20260101T000000.000")} {
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(results.Browser{Store: results.Store{Root: root}}.Handler())
	defer srv.Close()
	for _, path := range []string{"/runs/evil/20260101T000000.000/", "/runs/evil/20260101T000000.000/secret.txt",
		"/suites/evil/20260101T000000.000/secret.txt", "/rpo/20260101T000000.000/secret.txt",
		"/compare?run=evil/20260101T000000.000&run=evil/20260101T000000.000"} {
		code, body := get(t, srv, path)
		if code == 200 || strings.Contains(body, "private") {
			t.Errorf("%s: %d, served what lies outside the store:\n%s", path, code, body)
		}
	}
	// A link that stays inside the store is still served.
	if err := os.Symlink(filepath.Join(root, "latest"), filepath.Join(root, "evil", "20260102T000000.000")); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, srv, "/runs/evil/20260102T000000.000/config.json"); code != 200 {
		t.Errorf("a link inside the store: %d", code)
	}
}

// The browser answers only to loopback names (against DNS rebinding), and
// its server has timeouts.
func TestBrowserChecksHostAndHasTimeouts(t *testing.T) {
	root, _ := store(t)
	b := results.Browser{Store: results.Store{Root: root}}
	h := b.Handler()
	for host, want := range map[string]int{"127.0.0.1:8080": 200, "localhost:8080": 200, "LOCALHOST": 200, "[::1]:8080": 200, "127.0.0.2:9": 200,
		"evil.example:8080": http.StatusMisdirectedRequest, "10.0.0.1:8080": http.StatusMisdirectedRequest, "": http.StatusMisdirectedRequest,
		"localhost.evil.example": http.StatusMisdirectedRequest} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
	}
	s := b.Server()
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 {
		t.Errorf("timeouts: %+v", s)
	}
}

// A run's compressed history is offered for download as it is, and a
// request for history.jsonl (the name older reports and bookmarks link)
// gets its JSON lines, with a closing line when it is torn.
func TestBrowserServesTheCompressedHistory(t *testing.T) {
	root, runs := store(t)
	srv := httptest.NewServer(results.Browser{Store: results.Store{Root: root}}.Handler())
	defer srv.Close()
	r := runs[0]
	lines, err := os.ReadFile(r.Path(history.JSONLinesName))
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	fw, err := history.NewFrameWriter(&z)
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.WriteFrame(lines, bytes.Count(lines, []byte("\n"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.Path(history.FileName), z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(r.Path(history.JSONLinesName)); err != nil {
		t.Fatal(err)
	}
	base := "/runs/" + r.Test + "/" + r.Time.Format(results.TimeLayout) + "/"
	if code, page := get(t, srv, base); code != 200 || !strings.Contains(page, history.FileName) {
		t.Fatalf("run page: %d, no %s listed", code, history.FileName)
	}
	resp, err := http.Get(srv.URL + base + history.FileName)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/zstd" || !bytes.Equal(b, z.Bytes()) {
		t.Fatalf("%s: %d %s, %d bytes of %d", history.FileName, resp.StatusCode, resp.Header.Get("Content-Type"), len(b), z.Len())
	}
	if code, body := get(t, srv, base+history.JSONLinesName); code != 200 || body != string(lines) {
		t.Fatalf("%s from the compressed history: %d, %d bytes of %d", history.JSONLinesName, code, len(body), len(lines))
	}
	if err := os.WriteFile(r.Path(history.FileName), z.Bytes()[:z.Len()-5], 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, srv, base+history.JSONLinesName); code != 200 || !strings.HasSuffix(body, "frame cut mid-write, after 0 whole frames (0 entries)\n") {
		t.Fatalf("torn history: %d, ends %q", code, body[max(0, len(body)-200):])
	}
}
