package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const okVersion = `#define REDIS_VERSION "7.0.15"` + "\n"

const okGet = `{"GET": {"summary": "Get the value of a key", "complexity": "O(1)", "group": "string", "since": "1.0.0",
 "arity": 2, "command_flags": ["READONLY", "FAST"], "acl_categories": ["STRING"],
 "key_specs": [{"flags": ["RO", "ACCESS"], "begin_search": {"index": {"pos": 1}},
  "find_keys": {"range": {"lastkey": 0, "step": 1, "limit": 0}}}],
 "arguments": [{"name": "key", "type": "key", "key_spec_index": 0}]}}`

const okClientKill = `{"KILL": {"summary": "Kill the connection of a client", "complexity": "O(N)", "group": "connection",
 "since": "2.4.0", "container": "CLIENT", "command_flags": ["ADMIN", "NOSCRIPT"], "acl_categories": ["CONNECTION"]}}`

// okSource is a small Redis 7.0.15 source, as paths under its top directory.
func okSource() map[string]string {
	return map[string]string{
		"src/version.h":                 okVersion,
		"src/commands/get.json":         okGet,
		"src/commands/client-kill.json": okClientKill,
		"src/server.c":                  "not read",
	}
}

// tarball gzips files under one top directory, as a Redis release is.
func tarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "redis-7.0.15/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeTarball(t *testing.T, files map[string]string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "redis.tar.gz")
	if err := os.WriteFile(name, tarball(t, files), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestTreeAndTarballReadAlike: a source tree and its tarball give the same
// commands, by full name, and nothing but src/commands is read as one.
func TestTreeAndTarballReadAlike(t *testing.T) {
	fromTar, err := loadCommands(context.Background(), writeTarball(t, okSource()))
	if err != nil {
		t.Fatal(err)
	}
	fromTree, err := loadCommands(context.Background(), writeTree(t, okSource()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromTar, fromTree) {
		t.Fatalf("tarball and tree differ:\n%v\n%v", fromTar, fromTree)
	}
	if len(fromTar) != 2 || fromTar["get"].Summary != "Get the value of a key" || fromTar["client|kill"].Group != "connection" {
		t.Fatalf("read %v", fromTar)
	}
}

// TestSourceThatLiesIsRefused: a source that is not Redis 7.0.15's, or
// whose command files are missing, broken or contradict each other, is an
// error, never a generated file with less (or other) metadata.
func TestSourceThatLiesIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(map[string]string)
	}{
		{"another version", "not Redis 7.0.15's", func(f map[string]string) { f["src/version.h"] = `#define REDIS_VERSION "7.2.4"` }},
		{"no version.h", "no src/version.h", func(f map[string]string) { delete(f, "src/version.h") }},
		{"no command files", "no src/commands", func(f map[string]string) {
			delete(f, "src/commands/get.json")
			delete(f, "src/commands/client-kill.json")
		}},
		{"torn JSON", "get.json", func(f map[string]string) { f["src/commands/get.json"] = okGet[:len(okGet)/2] }},
		{"a field of the wrong type", "get.json", func(f map[string]string) {
			f["src/commands/get.json"] = strings.Replace(okGet, `"since": "1.0.0"`, `"since": 1`, 1)
		}},
		{"an empty command file", "no command", func(f map[string]string) { f["src/commands/get.json"] = `{}` }},
		{"one command twice", `"get" is described twice`, func(f map[string]string) { f["src/commands/get2.json"] = okGet }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := okSource()
			tc.edit(files)
			for kind, src := range map[string]string{"tarball": writeTarball(t, files), "tree": writeTree(t, files)} {
				cmds, err := loadCommands(context.Background(), src)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: got %d commands, error %v; want an error with %q", kind, len(cmds), err, tc.want)
				}
			}
		})
	}
	if _, err := loadCommands(context.Background(), filepath.Join(t.TempDir(), "nothing")); err == nil {
		t.Error("a source path that does not exist was accepted")
	}
	notGzip := filepath.Join(t.TempDir(), "x.tar.gz")
	os.WriteFile(notGzip, []byte("plain text"), 0o644)
	if _, err := loadCommands(context.Background(), notGzip); err == nil {
		t.Error("a file that is no gzip was accepted as a tarball")
	}
}

// TestPinnedTarballDownloadsOnceAndChecksTheSum: the first call downloads
// and caches; the next reads the cache without the network.
func TestPinnedTarballDownloadsOnceAndChecksTheSum(t *testing.T) {
	body := tarball(t, okSource())
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		w.Write(body)
	}))
	dir := t.TempDir()
	got, err := pinnedTarball(context.Background(), srv.Client(), srv.URL+"/redis.tar.gz", sum(body), dir)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(got); !bytes.Equal(data, body) {
		t.Fatal("the cached tarball is not what was served")
	}
	srv.Close()
	if again, err := pinnedTarball(context.Background(), srv.Client(), srv.URL+"/redis.tar.gz", sum(body), dir); err != nil || again != got {
		t.Fatalf("second call: %q, %v; want the cached %q", again, err, got)
	}
	if hits != 1 {
		t.Fatalf("%d downloads, want 1", hits)
	}
}

// TestPinnedTarballWithAnotherSumIsRefused: a download, or a cached file,
// whose SHA-256 is not the pinned one is an error naming both sums, and a
// bad download leaves nothing in the cache.
func TestPinnedTarballWithAnotherSumIsRefused(t *testing.T) {
	body := tarball(t, okSource())
	pinned := sum([]byte("the tarball we pinned"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	dir := t.TempDir()
	_, err := pinnedTarball(context.Background(), srv.Client(), srv.URL+"/redis.tar.gz", pinned, dir)
	if err == nil || !strings.Contains(err.Error(), sum(body)) || !strings.Contains(err.Error(), pinned) {
		t.Fatalf("download with another sum: %v; want an error naming %s and %s", err, sum(body), pinned)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("a refused download left %v in the cache", left)
	}

	cached := filepath.Join(dir, "redis.tar.gz")
	os.WriteFile(cached, body, 0o644)
	_, err = pinnedTarball(context.Background(), srv.Client(), srv.URL+"/redis.tar.gz", pinned, dir)
	if err == nil || !strings.Contains(err.Error(), sum(body)) || !strings.Contains(err.Error(), pinned) {
		t.Fatalf("cached file with another sum: %v; want an error naming %s and %s", err, sum(body), pinned)
	}
}

// TestPinnedTarballHTTPErrorIsAnError: a 404 is not cached as a tarball.
func TestPinnedTarballHTTPErrorIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	dir := t.TempDir()
	if _, err := pinnedTarball(context.Background(), srv.Client(), srv.URL+"/redis.tar.gz", redisSourceSHA256, dir); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("got %v, want a 404 error", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("a failed download left %v in the cache", left)
	}
}
