package docker

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"
)

// The image tag is a hash of the inputs: two collections on the same host
// must agree, or every Start would build a new image.
func TestRedisImageTagIsStable(t *testing.T) {
	a, err := redisImage(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := redisImage(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.clock != "" {
		t.Fatalf("clock shim: %s", a.clock)
	}
	if a.tag() != b.tag() {
		t.Fatalf("tags differ: %s %s", a.tag(), b.tag())
	}
	if !strings.HasPrefix(a.tag(), "redline/redis:7.") {
		t.Fatalf("tag %s", a.tag())
	}
	have := map[string]bool{}
	for _, f := range a.files {
		have[f.path] = true
	}
	for _, p := range []string{RedisServerPath, clockShimPath, clockFile, "/lib64/ld-linux-x86-64.so.2"} {
		if !have[p] {
			t.Errorf("image lacks %s", p)
		}
	}
}

func TestBuildContext(t *testing.T) {
	s := imageSpec{
		repo: "redline/x", files: []imageFile{{path: "/usr/bin/x", mode: 0o755, data: []byte("bin")}},
		entrypoint: []string{"/usr/bin/x", "server"}, env: map[string]string{"B": "2", "A": "1"},
	}
	archive, err := s.buildContext()
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(archive))
	var names []string
	var dockerfile string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Name == "Dockerfile" {
			b, _ := io.ReadAll(tr)
			dockerfile = string(b)
		}
	}
	want := "Dockerfile rootfs/ rootfs/data/ rootfs/usr/ rootfs/usr/bin/ rootfs/usr/bin/x"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("archive\n got %s\nwant %s", got, want)
	}
	wantDF := "FROM scratch\nCOPY rootfs/ /\nENV A=1\nENV B=2\nWORKDIR /data\nENTRYPOINT [\"/usr/bin/x\",\"server\"]\n"
	if dockerfile != wantDF {
		t.Errorf("Dockerfile\n%s\nwant\n%s", dockerfile, wantDF)
	}
	s2 := s
	s2.files = []imageFile{{path: "/usr/bin/x", mode: 0o755, data: []byte("bin2")}}
	if s.tag() == s2.tag() || !strings.HasPrefix(s.tag(), "redline/x:") {
		t.Errorf("tags %s %s", s.tag(), s2.tag())
	}
}

func TestCheckStatic(t *testing.T) {
	if err := checkStatic(RedisServerPath); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("redis-server: %v", err)
	}
	if err := checkStatic("image_test.go"); err == nil {
		t.Error("a Go source file passed as an executable")
	}
}
