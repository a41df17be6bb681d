package server

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// waitBusy waits until a script runs, then until a new command gets BUSY.
// (A client that was already waiting for the lock when the script started
// keeps waiting; only clients arriving during the script get BUSY.)
func waitBusy(t *testing.T, s *Server, c *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for s.busy.start.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("script never started")
		}
		time.Sleep(time.Millisecond)
	}
	for {
		err := c.Get(ctx, "x").Err()
		if err != nil && strings.HasPrefix(err.Error(), "BUSY ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never got BUSY: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestScriptBusyAndKill(t *testing.T) {
	s := startServer(t, "--busy-reply-threshold", "50")
	runner := newClient(t, s, 2)
	admin := newClient(t, s, 2)
	done := make(chan error, 1)
	go func() { done <- runner.Eval(ctx, "while true do end", nil).Err() }()
	waitBusy(t, s, admin)
	if err := admin.Do(ctx, "script", "kill").Err(); err != nil {
		t.Fatalf("SCRIPT KILL: %v", err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "Script killed by user with SCRIPT KILL") {
		t.Fatalf("killed script reply: %v", err)
	}
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "script", "kill").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOTBUSY") {
		t.Fatalf("SCRIPT KILL with no script: %v", err)
	}

	// A script that wrote cannot be killed; it ends by itself here.
	go func() {
		done <- runner.Eval(ctx, `redis.call('set', 'w', '1')
local t0 = tonumber(redis.call('time')[1])
local n = 0
while n < 400000000 do n = n + 1; if n % 100000 == 0 and tonumber(redis.call('time')[1]) > t0 + 1 then break end end
return 1`, nil).Err()
	}()
	waitBusy(t, s, admin)
	if err := admin.Do(ctx, "script", "kill").Err(); err == nil || !strings.HasPrefix(err.Error(), "UNKILLABLE") {
		t.Fatalf("SCRIPT KILL after a write: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestShutdownNoSaveWhileBusy: SHUTDOWN NOSAVE ends a process whose script
// never returns.
func TestShutdownNoSaveWhileBusy(t *testing.T) {
	p := startProc(t, freePort(t), "--dir", t.TempDir(), "--busy-reply-threshold", "50")
	runner := procClient(t, p)
	admin := procClient(t, p)
	admin.Ping(ctx)
	go runner.Eval(ctx, "redis.call('set', 'x', '1'); while true do end", nil)
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := admin.Get(ctx, "y").Err()
		if err != nil && strings.HasPrefix(err.Error(), "BUSY ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never got BUSY: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	admin.Do(ctx, "shutdown", "nosave")
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("process still running after SHUTDOWN NOSAVE")
	}
}

// TestBusyScriptAndTransactions: while a script is busy, MULTI is allowed
// (it only changes the client's state), a command refused with BUSY fails
// the transaction, and EXEC is refused with EXECABORT and ends it, as in
// Redis; the transaction never runs in part.
func TestBusyScriptAndTransactions(t *testing.T) {
	s := startServer(t, "--busy-reply-threshold", "50")
	runner := newClient(t, s, 2)
	admin := newClient(t, s, 2)
	tx := newClient(t, s, 1).Conn()
	defer tx.Close()
	if err := admin.Set(ctx, "xx", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	busy := func() chan error {
		done := make(chan error, 1)
		go func() { done <- runner.Eval(ctx, "while true do end", nil).Err() }()
		waitBusy(t, s, admin)
		return done
	}
	kill := func(done chan error) {
		if err := admin.Do(ctx, "script", "kill").Err(); err != nil {
			t.Fatalf("SCRIPT KILL: %v", err)
		}
		<-done
	}

	// MULTI during the script; a command refused with BUSY; EXEC after.
	done := busy()
	if err := tx.Do(ctx, "multi").Err(); err != nil {
		t.Fatalf("MULTI while busy: %v", err)
	}
	if err := tx.Do(ctx, "incr", "xx").Err(); err == nil || !strings.HasPrefix(err.Error(), "BUSY") {
		t.Fatalf("INCR while busy: %v", err)
	}
	kill(done)
	tx.Do(ctx, "incr", "xx")
	if err := tx.Do(ctx, "exec").Err(); err == nil || !strings.Contains(err.Error(), "EXECABORT") || !strings.Contains(err.Error(), "previous errors") {
		t.Fatalf("EXEC of a transaction with a BUSY refusal: %v", err)
	}

	// MULTI before the script; EXEC during it.
	if err := tx.Do(ctx, "multi").Err(); err != nil {
		t.Fatal(err)
	}
	tx.Do(ctx, "incr", "xx")
	done = busy()
	if err := tx.Do(ctx, "exec").Err(); err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") || !strings.Contains(err.Error(), "BUSY") {
		t.Fatalf("EXEC while busy: %v", err)
	}
	kill(done)
	if got, err := tx.Do(ctx, "ping", "asdf").Text(); err != nil || got != "asdf" {
		t.Fatalf("connection still in MULTI after EXECABORT: %q %v", got, err)
	}
	if v, _ := admin.Get(ctx, "xx").Result(); v != "1" {
		t.Fatalf("xx = %s: a refused transaction ran in part", v)
	}
}
