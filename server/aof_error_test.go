package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/server/aof"
	"github.com/redline-dev/redline/server/store"
)

// faultyFile fails writes and fsyncs with an errno while set, as a full
// (ENOSPC) or failing (EIO) disk does.
type faultyFile struct {
	*os.File
	mu       sync.Mutex
	err      error
	syncOnly bool // writes succeed, fsyncs fail
}

func (f *faultyFile) set(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

func (f *faultyFile) fault() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *faultyFile) Write(p []byte) (int, error) {
	if err := f.fault(); err != nil && !f.syncOnly {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *faultyFile) Sync() error {
	if err := f.fault(); err != nil {
		return err
	}
	return f.File.Sync()
}

// diskTarget is a server whose disk a test fills and frees again.
type diskTarget struct {
	addr       string
	fill, free func()
	exited     func() bool // the process ended
}

const diskValueSize = 16 << 10 // a write that needs new blocks

// checkFullDisk drives t through a full disk as Redis 7.0.15's
// flushAppendOnlyFile and processCommand have it: with appendfsync
// always the server exits before replying to the write it cannot write;
// with everysec or no that write is acknowledged, later writes and PING
// are refused with MISCONF while reads are served on the same connection,
// and once the disk has room the retried write succeeds and writes are
// taken again.
func checkFullDisk(t *testing.T, tg diskTarget, fsync string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: tg.addr, MaxRetries: -1, DisableIdentity: true, PoolSize: 1, ReadTimeout: 5 * time.Second})
	defer c.Close()
	val := strings.Repeat("v", diskValueSize)
	if err := c.Set(ctx, "a", val, 0).Err(); err != nil {
		t.Fatalf("SET before the fault: %v", err)
	}
	tg.fill()
	err := c.Set(ctx, "b", val, 0).Err()
	if fsync == "always" {
		if err == nil || !(errors.Is(err, io.EOF) || strings.Contains(err.Error(), "reset")) {
			t.Fatalf("appendfsync always: SET on a full disk answered %v, want the connection closed (the server exits)", err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !tg.exited() {
			if time.Now().After(deadline) {
				t.Fatal("appendfsync always: the server did not exit after an AOF write error")
			}
			time.Sleep(20 * time.Millisecond)
		}
		return
	}
	if err != nil {
		t.Fatalf("appendfsync %s: the first SET on a full disk: %v, want OK (it fails only when the AOF is written, after the command)", fsync, err)
	}
	const misconf = "MISCONF Errors writing to the AOF file: No space left on device"
	if err := c.Set(ctx, "c", "1", 0).Err(); err == nil || err.Error() != misconf {
		t.Fatalf("appendfsync %s: a write while the AOF cannot be written: %v, want %q", fsync, err, misconf)
	}
	if err := c.Ping(ctx).Err(); err == nil || err.Error() != misconf {
		t.Fatalf("appendfsync %s: PING while the AOF cannot be written: %v, want %q", fsync, err, misconf)
	}
	if v, err := c.Get(ctx, "b").Result(); err != nil || len(v) != diskValueSize {
		t.Fatalf("appendfsync %s: a read while the AOF cannot be written: %d bytes, %v", fsync, len(v), err)
	}
	if v := infoField(c.Info(ctx, "persistence").Val(), "aof_last_write_status"); v != "err" {
		t.Fatalf("appendfsync %s: aof_last_write_status %q while the disk is full", fsync, v)
	}
	tg.free()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := c.Set(ctx, "c", "1", 0).Err()
		if err == nil {
			break
		}
		if !strings.HasPrefix(err.Error(), "MISCONF") || time.Now().After(deadline) {
			t.Fatalf("appendfsync %s: a write after the disk has room again: %v", fsync, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v := infoField(c.Info(ctx, "persistence").Val(), "aof_last_write_status"); v != "ok" {
		t.Fatalf("appendfsync %s: aof_last_write_status %q after the disk has room", fsync, v)
	}
}

// TestAOFWriteErrorAsRedis: the reference server with an AOF file that
// answers ENOSPC. Before, it closed every connection at its next
// command, reads included, until restarted.
func TestAOFWriteErrorAsRedis(t *testing.T) {
	for _, fsync := range []string{"always", "everysec", "no"} {
		t.Run(fsync, func(t *testing.T) {
			var file *faultyFile
			dir := t.TempDir()
			s := startServerWith(t, Options{Log: io.Discard, Clock: store.NewClock(nil), AOFFile: func(f *os.File) aof.File {
				file = &faultyFile{File: f}
				return file
			}}, "--dir", dir, "--appendonly", "yes", "--appendfsync", fsync)
			exited := func() bool {
				select {
				case <-s.Done():
					return s.exited.Load()
				default:
					return false
				}
			}
			checkFullDisk(t, diskTarget{
				addr: s.Addr().String(), exited: exited,
				fill: func() { file.set(syscall.ENOSPC) }, free: func() { file.set(nil) },
			}, fsync)
			s.Close()
			// What the server acknowledged is in the file; with always,
			// the write it could not write is not.
			s2 := startServer(t, "--dir", dir, "--appendonly", "yes")
			c := newClient(t, s2, 2)
			want := map[string]bool{"a": true, "b": fsync != "always", "c": fsync != "always"}
			for k, in := range want {
				if n := c.Exists(ctx, k).Val(); (n == 1) != in {
					t.Errorf("after a restart key %s exists=%d, want %v", k, n, in)
				}
			}
		})
	}
}

// TestAOFBackgroundFsyncErrorRefusesWrites: with everysec a failed
// background fsync refuses writes (Redis's aof_bio_fsync_status) until
// one succeeds.
func TestAOFBackgroundFsyncErrorRefusesWrites(t *testing.T) {
	var file *faultyFile
	s := startServerWith(t, Options{Log: io.Discard, Clock: store.NewClock(nil), AOFFile: func(f *os.File) aof.File {
		file = &faultyFile{File: f}
		return file
	}}, "--appendonly", "yes", "--appendfsync", "everysec")
	c := newClient(t, s, 2)
	c.Set(ctx, "a", "1", 0)
	file.syncOnly = true
	file.set(syscall.EIO)
	waitForServer(t, "a failed background fsync", func() bool {
		return c.Set(ctx, "b", "1", 0).Err() != nil
	})
	if err := c.Set(ctx, "b", "1", 0).Err(); err == nil || err.Error() != "MISCONF Errors writing to the AOF file: Input/output error" {
		t.Fatalf("a write after a failed fsync: %v", err)
	}
	if v := infoField(c.Info(ctx, "persistence").Val(), "aof_last_write_status"); v != "err" {
		t.Fatalf("aof_last_write_status %q", v)
	}
}

// TestFullDiskAsRedisServer runs checkFullDisk on redis-server 7.0.15 and
// the reference side by side, each with its directory on a small tmpfs
// that a filler file fills (so the AOF's next block cannot be had) and
// whose removal gives room again. It needs root (mount) and redis-server.
func TestFullDiskAsRedisServer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (scripts/install-deps)")
	}
	mountSmall := func(t *testing.T) string {
		dir := t.TempDir()
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "redline-full-disk", dir).CombinedOutput(); err != nil {
			t.Skipf("mount tmpfs: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
		return dir
	}
	fill := func(dir string) func() {
		return func() {
			f, err := os.Create(filepath.Join(dir, "filler"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b := make([]byte, 4096)
			for {
				if _, err := f.Write(b); err != nil {
					return
				}
			}
		}
	}
	free := func(dir string) func() { return func() { os.Remove(filepath.Join(dir, "filler")) } }
	for _, fsync := range []string{"always", "everysec", "no"} {
		t.Run("redis/"+fsync, func(t *testing.T) {
			dir := mountSmall(t)
			port := freePort(t)
			cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
				"--appendfsync", fsync, "--dir", dir)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			t.Cleanup(func() { cmd.Process.Kill(); <-done })
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			waitForServer(t, "redis-server", func() bool {
				return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1}).Ping(ctx).Err() == nil
			})
			checkFullDisk(t, diskTarget{addr: addr, fill: fill(dir), free: free(dir), exited: func() bool {
				select {
				case <-done:
					return cmd.ProcessState.ExitCode() == 1
				default:
					return false
				}
			}}, fsync)
		})
		t.Run("reference/"+fsync, func(t *testing.T) {
			dir := mountSmall(t)
			s := startServer(t, "--dir", dir, "--appendonly", "yes", "--appendfsync", fsync)
			checkFullDisk(t, diskTarget{addr: s.Addr().String(), fill: fill(dir), free: free(dir), exited: func() bool {
				select {
				case <-s.Done():
					return s.exited.Load()
				default:
					return false
				}
			}}, fsync)
		})
	}
}

// countingFile counts fsyncs.
type countingFile struct {
	*os.File
	mu    sync.Mutex
	syncs int
}

func (f *countingFile) Sync() error {
	f.mu.Lock()
	f.syncs++
	f.mu.Unlock()
	return f.File.Sync()
}

func (f *countingFile) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncs
}

// TestAOFFsyncPolicies: as Redis, always fsyncs before each reply,
// everysec in the background about once a second while writes come, no
// never (the OS writes back). A power loss loses what the policy left
// unsynced, so the RPO study's figures rest on this.
func TestAOFFsyncPolicies(t *testing.T) {
	const run = 2500 * time.Millisecond
	for _, tc := range []struct {
		fsync    string
		min, max int
	}{{"always", 20, 1 << 30}, {"everysec", 1, 4}, {"no", 0, 0}} {
		t.Run(tc.fsync, func(t *testing.T) {
			var file *countingFile
			s := startServerWith(t, Options{Log: io.Discard, Clock: store.NewClock(nil), AOFFile: func(f *os.File) aof.File {
				file = &countingFile{File: f}
				return file
			}}, "--appendonly", "yes", "--appendfsync", tc.fsync)
			c := newClient(t, s, 2)
			writes := 0
			for start := time.Now(); time.Since(start) < run; writes++ {
				if err := c.Incr(ctx, "n").Err(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(150 * time.Millisecond) // the cron's last pass
			if n := file.count(); n < tc.min || n > tc.max || tc.fsync == "always" && n < writes {
				t.Errorf("appendfsync %s: %d fsyncs for %d writes over %s, want %d-%d", tc.fsync, n, writes, run, tc.min, tc.max)
			}
		})
	}
}
