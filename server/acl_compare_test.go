package server

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/redline-dev/redline/server/resp"
)

// TestACLCompareWithRedis sends testdata/acl_compare.txt to this server
// and to redis-server 7.0.15 over RESP2 and RESP3, on as many connections
// as the file names, and requires byte-identical replies (ACL LOG's age
// and client-info masked where the file asks).
func TestACLCompareWithRedis(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	data, err := os.ReadFile(aclCompareFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []string{"2", "3"} {
		conns := map[string][2]*rawClient{}
		conn := func(name string) [2]*rawClient {
			if c, ok := conns[name]; ok {
				return c
			}
			c := [2]*rawClient{dialRaw(t, s.Addr().String()), dialRaw(t, raddr)}
			for _, rc := range c {
				rc.do(t, rawCmd("HELLO", proto))
			}
			conns[name] = c
			return c
		}
		for n, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			name := "main"
			if strings.HasPrefix(line, "@") {
				name, line, _ = strings.Cut(line[1:], " ")
			}
			mode := line[0]
			if mode == '?' || mode == '~' {
				line = line[1:]
			}
			argv, ok := resp.SplitArgs([]byte(line), nil)
			if !ok {
				t.Fatalf("line %d: bad quoting", n+1)
			}
			c := conn(name)
			a, b := c[0].do(t, argv), c[1].do(t, argv)
			switch mode {
			case '?':
				a, b = []byte(maskACLLog(t, a)), []byte(maskACLLog(t, b))
			case '~':
				a, b = []byte(unordered(t, a)), []byte(unordered(t, b))
			}
			if !bytes.Equal(a, b) {
				t.Errorf("RESP%s line %d (%s) %q:\n  ref   %q\n  redis %q", proto, n+1, name, line, a, b)
			}
		}
	}
}

var aclCompareFile, _ = filepath.Abs("testdata/acl_compare.txt")

// unordered prints a reply with its arrays' elements and the words of its
// strings sorted.
func unordered(t *testing.T, raw []byte) string {
	v, _, err := resp.ReadReply(raw)
	if err != nil {
		t.Fatal(err)
	}
	var show func(v resp.Value) string
	show = func(v resp.Value) string {
		if len(v.Elems) == 0 {
			words := strings.Fields(string(v.Str))
			sort.Strings(words)
			return fmt.Sprintf("%d:%s/%d", v.Kind, strings.Join(words, " "), v.Int)
		}
		var parts []string
		for _, e := range v.Elems {
			parts = append(parts, show(e))
		}
		if v.Kind == resp.KindArray || v.Kind == resp.KindSet {
			sort.Strings(parts)
		}
		return fmt.Sprintf("%d:[%s]", v.Kind, strings.Join(parts, ", "))
	}
	return show(v)
}

// maskACLLog prints a reply with the values of "age-seconds" and
// "client-info" replaced, keeping which user= the client-info names.
func maskACLLog(t *testing.T, raw []byte) string {
	v, _, err := resp.ReadReply(raw)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var walk func(v resp.Value)
	walk = func(v resp.Value) {
		fmt.Fprintf(&b, "%d:", v.Kind)
		for i := 0; i < len(v.Elems); i++ {
			e := v.Elems[i]
			walk(e)
			if i+1 < len(v.Elems) && (string(e.Str) == "age-seconds" || string(e.Str) == "client-info" || string(e.Str) == "id") {
				next := v.Elems[i+1]
				if string(e.Str) == "client-info" {
					_, user, _ := strings.Cut(string(next.Str), " user=")
					user, _, _ = strings.Cut(user, " ")
					fmt.Fprintf(&b, "[client user=%s]", user)
				} else {
					b.WriteString("[masked]")
				}
				i++
			}
		}
		if len(v.Elems) == 0 {
			fmt.Fprintf(&b, "%s/%d", v.Str, v.Int)
		}
		b.WriteByte(' ')
	}
	walk(v)
	return b.String()
}
