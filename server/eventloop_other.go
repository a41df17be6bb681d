//go:build !linux

package server

import "net"

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

func writeConn(conn net.Conn, b []byte) error {
	_, err := conn.Write(b)
	return err
}
