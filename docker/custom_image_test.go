package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
)

// The --image contract: a server that takes redis-server arguments is
// enough; an image without /data still starts (redline mounts a volume
// there), and the version comes from INFO server, not "custom".
func TestCustomImageWithoutData(t *testing.T) {
	bin := os.Getenv(BinaryEnv)
	if bin == "" {
		t.Fatalf("this test needs %s (a static redline binary: make build)", BinaryEnv)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	df := "FROM scratch\nCOPY redline /redline\nENTRYPOINT [\"/redline\", \"server\"]\n" // no /data, no WORKDIR
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"Dockerfile", 0o644, []byte(df)}, {"redline", 0o755, data}} {
		tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))})
		tw.Write(f.data)
	}
	tw.Close()
	tag := "redline-test/custom-nodata:1"
	build := exec.Command("docker", "build", "-q", "-t", tag, "-")
	build.Stdin = &ctxTar
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", tag).Run() })

	r := newRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := r.StartCluster(ctx, cluster.Spec{Target: "reference", Nodes: 3, NodeTimeout: time.Second, Image: tag, Name: "custom-nodata"})
	if err != nil {
		t.Fatalf("a custom image without /data did not start: %v", err)
	}
	defer c.Close(context.Background())
	d := c.Describe()
	if d["image"] != tag || !strings.HasPrefix(d["version"], "redis 7.") {
		t.Fatalf("describe: %v", d)
	}
}
