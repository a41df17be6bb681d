package server

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestFunctionLifecycle: FUNCTION LOAD / FCALL / FCALL_RO / LIST / DUMP /
// RESTORE / DELETE / FLUSH / STATS with Redis 7.0's replies and errors.
func TestFunctionLifecycle(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	lib := "#!lua name=mylib\n" +
		"redis.register_function('setget', function(keys, args) redis.call('set', keys[1], args[1]) return redis.call('get', keys[1]) end)\n" +
		"redis.register_function{function_name='ro', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}"
	if got, err := c.Do(ctx, "FUNCTION", "LOAD", lib).Text(); err != nil || got != "mylib" {
		t.Fatalf("FUNCTION LOAD = %q, %v", got, err)
	}
	if got, err := c.Do(ctx, "FCALL", "SETGET", 1, "k", "v").Text(); err != nil || got != "v" {
		t.Fatalf("FCALL (name case-insensitive) = %q, %v", got, err)
	}
	if got, err := c.Do(ctx, "FCALL_RO", "ro", 1, "k").Text(); err != nil || got != "v" {
		t.Fatalf("FCALL_RO of a no-writes function = %q, %v", got, err)
	}
	wantErr := func(substr string, args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err == nil || !strings.Contains(err.Error(), substr) {
			t.Fatalf("%v: error %v, want one containing %q", args, err, substr)
		}
	}
	wantErr("Can not execute a script with write flag using *_ro command", "FCALL_RO", "setget", 1, "k", "v")
	wantErr("Library 'mylib' already exists", "FUNCTION", "LOAD", lib)
	wantErr("Function setget already exists", "FUNCTION", "LOAD", strings.Replace(lib, "mylib", "other", 1))
	wantErr("Missing library metadata", "FUNCTION", "LOAD", "return 1")
	wantErr("Engine 'py' not found", "FUNCTION", "LOAD", "#!py name=x\nredis.register_function('x', function() end)")
	wantErr("No functions registered", "FUNCTION", "LOAD", "#!lua name=empty\nlocal a = 1")
	wantErr("Function not found", "FCALL", "nosuch", 0)
	wantErr("Number of keys can't be greater than number of args", "FCALL", "setget", 3, "k")
	wantErr("attempt to call field 'register_function' (a nil value)", "EVAL", "redis.register_function('x', function() end)", 0)
	wantErr("ERR Error registering functions: ERR FUNCTION LOAD timeout", "FUNCTION", "LOAD", "#!lua name=spin\nlocal a = 1 while 1 do a = a + 1 end")
	wantErr("nonexistent global variable 'setresp'", "FUNCTION", "LOAD", "#!lua name=resp\nreturn redis.setresp(3)")
	wantErr("ERR Engine '' not found", "FUNCTION", "LOAD", "#! name=noengine\nredis.register_function('x', function() end)")
	wantErr("ERR Invalid library metadata", "FUNCTION", "LOAD", "#!lua name=nonewline")
	wantErr("nonexistent global variable 'getmetatable'", "FUNCTION", "LOAD", "#!lua name=mt\nmt = getmetatable(_G)")
	wantErr("nonexistent global variable 'string'", "FUNCTION", "LOAD", "#!lua name=str\nlocal s = string.format('x')")
	wantErr("nonexistent global variable 'math'", "FUNCTION", "LOAD", "#!lua name=rnd\nlocal r = math.random()\nredis.register_function('rnd', function() return r end)")
	wantErr("nonexistent global variable 'call'", "FUNCTION", "LOAD", "#!lua name=callsatload\nredis.call('set', 'x', 1)\nredis.register_function('y', function() end)")

	list, err := c.Do(ctx, "FUNCTION", "LIST", "WITHCODE").Slice()
	if err != nil || len(list) != 1 {
		t.Fatalf("FUNCTION LIST = %v, %v", list, err)
	}
	entry := list[0].([]any)
	if entry[0] != "library_name" || entry[1] != "mylib" || entry[3] != "LUA" || entry[7] != lib {
		t.Fatalf("FUNCTION LIST entry = %v", entry)
	}
	funcs := entry[5].([]any)
	ro := funcs[0].([]any) // sorted by name: ro, setget
	if ro[1] != "ro" || ro[3] != "reads" || len(ro[5].([]any)) != 1 || ro[5].([]any)[0] != "no-writes" {
		t.Fatalf("function entry = %v", ro)
	}

	dump, err := c.Do(ctx, "FUNCTION", "DUMP").Text()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "FUNCTION", "FLUSH").Err(); err != nil {
		t.Fatal(err)
	}
	wantErr("Function not found", "FCALL", "setget", 1, "k", "v")
	wantErr("payload version or checksum are wrong", "FUNCTION", "RESTORE", dump[:len(dump)-1]+"x")
	if err := c.Do(ctx, "FUNCTION", "RESTORE", dump).Err(); err != nil {
		t.Fatalf("FUNCTION RESTORE: %v", err)
	}
	wantErr("already exists", "FUNCTION", "RESTORE", dump)
	if err := c.Do(ctx, "FUNCTION", "RESTORE", dump, "REPLACE").Err(); err != nil {
		t.Fatalf("FUNCTION RESTORE REPLACE: %v", err)
	}
	stats, err := c.Do(ctx, "FUNCTION", "STATS").Slice()
	if err != nil || stats[1] != nil {
		t.Fatalf("FUNCTION STATS = %v, %v", stats, err)
	}
	counts := stats[3].([]any)[1].([]any)
	if counts[1] != int64(1) || counts[3] != int64(2) {
		t.Fatalf("FUNCTION STATS counts = %v", counts)
	}
	if err := c.Do(ctx, "FUNCTION", "DELETE", "MYLIB").Err(); err != nil {
		t.Fatal(err)
	}
	wantErr("Library not found", "FUNCTION", "DELETE", "mylib")
}

// TestFunctionKillWhileBusy: FUNCTION STATS names the running function and
// FUNCTION KILL stops it while the script holds the server; SCRIPT KILL
// does not kill a function.
func TestFunctionKillWhileBusy(t *testing.T) {
	s := startServer(t, "--busy-reply-threshold", "10")
	c := newClient(t, s, 2)
	if err := c.Do(ctx, "FUNCTION", "LOAD", "#!lua name=spin\nredis.register_function('spin', function() local a = 1 while true do a = a + 1 end end)").Err(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	runner := newClient(t, s, 2)
	go func() { done <- runner.Do(ctx, "FCALL", "spin", 0).Err() }()
	waitBusy(t, s, c)
	if err := c.Do(ctx, "SCRIPT", "KILL").Err(); err == nil || !strings.HasPrefix(err.Error(), "BUSY") {
		t.Fatalf("SCRIPT KILL on a function = %v, want BUSY", err)
	}
	stats, err := c.Do(ctx, "FUNCTION", "STATS").Slice()
	if err != nil {
		t.Fatal(err)
	}
	if running, ok := stats[1].([]any); !ok || running[1] != "spin" {
		t.Fatalf("FUNCTION STATS while busy = %v", stats)
	}
	if err := c.Do(ctx, "FUNCTION", "KILL").Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("killed FCALL = %v", err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestScriptShebang: "#!lua flags=..." gives EVAL scripts their flags.
func TestScriptShebang(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	if err := c.Do(ctx, "EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", 1, "k").Err(); err != redis.Nil {
		t.Fatalf("EVAL_RO with no-writes: %v", err)
	}
	if err := c.Do(ctx, "EVAL", "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 1)", 1, "k").Err(); err == nil ||
		!strings.Contains(err.Error(), "Write commands are not allowed from read-only scripts") {
		t.Fatalf("write in a no-writes script: %v", err)
	}
	if err := c.Do(ctx, "EVAL_RO", "#!lua\nreturn 1", 0).Err(); err == nil || !strings.Contains(err.Error(), "write flag using *_ro") {
		t.Fatalf("EVAL_RO of a shebang script without no-writes: %v", err)
	}
	if err := c.Do(ctx, "EVAL", "#!lua flags=bogus\nreturn 1", 0).Err(); err == nil || !strings.Contains(err.Error(), "Unexpected flag") {
		t.Fatalf("unknown flag: %v", err)
	}
	if got, err := c.Do(ctx, "EVAL", "#!lua\nreturn 7", 0).Int(); err != nil || got != 7 {
		t.Fatalf("EVAL with a shebang = %d, %v", got, err)
	}
}

// TestDebugSubcommands: DIGEST is order-independent and zero when empty,
// POPULATE creates Redis's keys, SET-ACTIVE-EXPIRE 0 keeps expired keys
// until accessed.
func TestDebugSubcommands(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes")
	c := newClient(t, s, 2)
	if d, _ := c.Do(ctx, "DEBUG", "DIGEST").Text(); d != strings.Repeat("0", 40) {
		t.Fatalf("empty DIGEST = %q", d)
	}
	if err := c.Do(ctx, "DEBUG", "POPULATE", 3, "p", 10).Err(); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get(ctx, "p:2").Result(); v != "value:2\x00\x00\x00" {
		t.Fatalf("POPULATE value = %q", v)
	}
	c.SAdd(ctx, "set", "a", "b", "c")
	d1, _ := c.Do(ctx, "DEBUG", "DIGEST").Text()
	c.Del(ctx, "set")
	c.SAdd(ctx, "set", "c", "b", "a")
	if d2, _ := c.Do(ctx, "DEBUG", "DIGEST").Text(); d1 != d2 || len(d1) != 40 {
		t.Fatalf("DIGEST differs for the same data: %s vs %s", d1, d2)
	}
	c.Set(ctx, "p:0", "changed", 0)
	if d3, _ := c.Do(ctx, "DEBUG", "DIGEST").Text(); d3 == d1 {
		t.Fatal("DIGEST did not change with the data")
	}
	if err := c.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", 0).Err(); err != nil {
		t.Fatal(err)
	}
	c.Do(ctx, "PSETEX", "short", 1, "x")
	time.Sleep(300 * time.Millisecond) // several active-expiry cycles
	for i := 0; i < 3; i++ {
		c.Ping(ctx)
	}
	if n, _ := c.DBSize(ctx).Result(); n < 5 {
		t.Fatalf("dbsize %d: an expired key was removed with active expiry off", n)
	}
	if err := c.Do(ctx, "DEBUG", "DROP-CLUSTER-PACKET-FILTER", -1).Err(); err != nil {
		t.Fatal(err)
	}
}
