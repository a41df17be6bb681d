package kube

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Signal stops and continues exactly the processes of the name it is
// given (a copy of sleep under a name no other process has), and checks
// each one's state after.
func TestSignalStopsAndContinuesByName(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("rlsig%08d", rand.IntN(1e8)) // 13 characters: /proc's comm keeps 15
	prog := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(prog, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	// The new process may not have exec'd yet: wait for its name.
	for range 200 {
		if c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); string(c) == name+"\n" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, err := Signal("STOP", name); err != nil || n != 1 {
		t.Fatalf("Signal STOP = %d, %v; want 1 process", n, err)
	}
	if st := procState(pid); st != 'T' {
		t.Fatalf("after SIGSTOP the process is in state %c, want T", st)
	}
	if n, err := Signal("CONT", name); err != nil || n != 1 {
		t.Fatalf("Signal CONT = %d, %v", n, err)
	}
	if st := procState(pid); st == 'T' {
		t.Fatal("after SIGCONT the process is still stopped")
	}
	if _, err := Signal("STOP", name+"x"); err == nil {
		t.Error("Signal found a process of a name none has")
	}
	if _, err := Signal("KILL", name); err == nil {
		t.Error("Signal sent KILL: only STOP and CONT are a pause")
	}
}
