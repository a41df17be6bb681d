package kube

import (
	"net"
	"os"
	"strconv"
	"testing"
)

// The fake's proxy tells which process opened a connection by the socket
// /proc/net/tcp lists for its other end: here the test's own process.
func TestSocketInodeFindsTheDialer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	out, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	in, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	inode := socketInode(in.RemoteAddr().(*net.TCPAddr), in.LocalAddr().(*net.TCPAddr))
	if inode == "" {
		t.Fatal("no socket in /proc/net/tcp for the dialing end")
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); l == "socket:["+inode+"]" {
			return
		}
	}
	t.Errorf("socket inode %s is not among this process's %d fds (pid %s)", inode, len(fds), strconv.Itoa(os.Getpid()))
}
