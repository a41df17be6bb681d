package server

import (
	"net"
	"testing"
	"time"

	"io"

	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/resp"
)

// BenchmarkPipeline measures the server's per-command cost over loopback
// with 16 pipelined SET+GET pairs per write.
func BenchmarkPipeline(b *testing.B) {
	cfg, _ := config.ParseArgs([]string{"--port", "0", "--bind", "127.0.0.1", "--dir", b.TempDir()})
	s, err := New(cfg, Options{Log: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	var req []byte
	for i := 0; i < 16; i++ {
		req = resp.AppendArray(req, 3)
		req = resp.AppendBulkString(req, "SET")
		req = resp.AppendBulkString(req, "key:000000000001")
		req = resp.AppendBulkString(req, "xxx")
		req = resp.AppendArray(req, 2)
		req = resp.AppendBulkString(req, "GET")
		req = resp.AppendBulkString(req, "key:000000000001")
	}
	want := 16 * (len("+OK\r\n") + len("$3\r\nxxx\r\n"))
	buf := make([]byte, 64*1024)
	nc.SetDeadline(time.Now().Add(time.Minute))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nc.Write(req)
		got := 0
		for got < want {
			n, err := nc.Read(buf)
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
}
