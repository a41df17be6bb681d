//go:build !linux

package server

import (
	"net"
	"syscall"
	"time"
)

// Event loops use epoll (eventloop_linux.go); elsewhere every connection
// has a goroutine of its own.

type eventLoop struct{}

type loopClient struct{}

// loopConn is never made here: no connection is served by a loop.
type loopConn struct{ net.Conn }

func (s *Server) startLoops(int) {}

func (s *Server) loopAccept(net.Conn) bool { return false }

func (l *eventLoop) wake() {}

func (s *Server) wakeLoopClient(*Client) {}

// Without loops no replica link has a descriptor for loop writes, so
// these are never called.
func tryWrite(syscall.RawConn, []byte) (int, error) { return 0, nil }
func waitWritable(syscall.RawConn, time.Time) error { return nil }
func loopWritable(net.Conn) syscall.RawConn         { return nil }

func writeConn(conn net.Conn, b []byte) error {
	_, err := conn.Write(b)
	return err
}

// socketQueued is 0 where the socket's queue is not asked (Linux only).
func socketQueued(net.Conn) int { return 0 }

// readCounted is conn.Read counting a read that returned input in
// c.inReads (pubsub_order.go).
func readCounted(c *Client, conn net.Conn, p []byte) (int, error) {
	return readCountedPlain(c, conn, p)
}
