package docker

import (
	_ "embed"

	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/redline-dev/redline/cluster"
)

// RedisServerPath is where Debian's redis-server lives, on the host and in the image.
const RedisServerPath = "/usr/bin/redis-server"

const (
	// clockShimPath is the LD_PRELOAD library that offsets the wall clock
	// (clockshim/clockshim.c) inside the redis image; clockFile is its control file.
	clockShimPath = "/usr/lib/redline/clockshim.so"
	clockFile     = "/etc/redline-clock"
	dataDir       = "/data"
)

//go:embed clockshim/clockshim.c
var clockShimSource []byte

// imageFile is one file of an image's root filesystem.
type imageFile struct {
	path string // absolute path inside the image
	mode int64
	data []byte
}

// imageSpec is what a flavour wants built: a FROM scratch image with files
// and an entrypoint, tagged repo:prefix-<hash of everything>.
type imageSpec struct {
	repo, tagPrefix string
	files           []imageFile
	entrypoint      []string
	env             map[string]string // ENV lines baked into the image
	version         string            // software version for Describe
	clock           string            // "" if clock skew works, else why not
	build           *ServerBuild      // the --server-binary packed, nil otherwise
}

// tag is repo:prefix-hash where the hash covers every input of the image.
func (s imageSpec) tag() string {
	h := sha256.New()
	files := append([]imageFile(nil), s.files...)
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	for _, f := range files {
		fmt.Fprintf(h, "%s %o %d\n", f.path, f.mode, len(f.data))
		h.Write(f.data)
	}
	fmt.Fprintf(h, "entrypoint %q\n", s.entrypoint)
	fmt.Fprintf(h, "dockerfile %s\n", s.dockerfile())
	sum := hex.EncodeToString(h.Sum(nil))[:12]
	if s.tagPrefix == "" {
		return s.repo + ":" + sum
	}
	return s.repo + ":" + s.tagPrefix + "-" + sum
}

func (s imageSpec) dockerfile() string {
	var b strings.Builder
	b.WriteString("FROM scratch\nCOPY rootfs/ /\n")
	keys := make([]string, 0, len(s.env))
	for k := range s.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "ENV %s=%s\n", k, s.env[k])
	}
	ep, _ := json.Marshal(s.entrypoint)
	fmt.Fprintf(&b, "WORKDIR %s\nENTRYPOINT %s\n", dataDir, ep)
	return b.String()
}

// buildContext renders the tar archive docker build receives.
func (s imageSpec) buildContext() ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Unix(0, 0)
	dirs := map[string]bool{}
	addDir := func(d string) error {
		var chain []string
		for d != "/" && d != "." && !dirs[d] {
			chain = append(chain, d)
			dirs[d] = true
			d = filepath.Dir(d)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "rootfs" + chain[i] + "/", Mode: 0o755, ModTime: now}); err != nil {
				return err
			}
		}
		return nil
	}
	df := s.dockerfile()
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df)), ModTime: now}); err != nil {
		return nil, err
	}
	if _, err := tw.Write([]byte(df)); err != nil {
		return nil, err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "rootfs/", Mode: 0o755, ModTime: now}); err != nil {
		return nil, err
	}
	if err := addDir(dataDir); err != nil {
		return nil, err
	}
	for _, f := range s.files {
		if err := addDir(filepath.Dir(f.path)); err != nil {
			return nil, err
		}
		hdr := &tar.Header{Name: "rootfs" + f.path, Mode: f.mode, Size: int64(len(f.data)), ModTime: now}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ensureImage builds the image unless an image with its tag exists already;
// it returns the tag and the image id.
func (r *Runtime) ensureImage(ctx context.Context, s imageSpec, logf func(string, ...any)) (string, string, error) {
	tag := s.tag()
	if res, err := r.cli.ImageInspect(ctx, tag); err == nil {
		return tag, res.ID, nil
	}
	logf("building image %s", tag)
	archive, err := s.buildContext()
	if err != nil {
		return "", "", fmt.Errorf("image %s: build context: %w", tag, err)
	}
	repo, t, _ := strings.Cut(tag, ":")
	req := testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		ContextArchive: bytes.NewReader(archive),
		Repo:           repo,
		Tag:            t,
		KeepImage:      true,
		BuildOptionsModifier: func(o *client.ImageBuildOptions) {
			if o.Labels == nil {
				o.Labels = map[string]string{}
			}
			o.Labels[labelImage] = "1"
			o.Remove = true
			o.ForceRemove = true
		},
	}}
	if _, err := r.provider.BuildImage(ctx, &req); err != nil {
		return "", "", fmt.Errorf("building image %s: %w", tag, err)
	}
	res, err := r.cli.ImageInspect(ctx, tag)
	if err != nil {
		return "", "", fmt.Errorf("image %s was built but cannot be inspected: %w", tag, err)
	}
	r.pruneImages(ctx, repo, res.ID, logf)
	return tag, res.ID, nil
}

// pruneImages removes older images of repo (other inputs, e.g. an older
// redline binary) built more than an hour ago; images in use stay.
func (r *Runtime) pruneImages(ctx context.Context, repo, keepID string, logf func(string, ...any)) {
	f := make(client.Filters).Add("label", labelImage+"=1").Add("reference", repo)
	list, err := r.cli.ImageList(ctx, client.ImageListOptions{Filters: f})
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-time.Hour).Unix()
	for _, im := range list.Items {
		if im.ID == keepID || im.Created > cutoff {
			continue
		}
		for _, t := range im.RepoTags {
			if _, err := r.cli.ImageRemove(ctx, t, client.ImageRemoveOptions{PruneChildren: true}); err == nil {
				logf("removed old image %s", t)
			}
		}
	}
}

// redisImage collects a redis-server (Debian's by default, or build's
// binary), every shared library it loads and the dynamic loader from the
// host, plus the clock shim compiled with the host's C compiler. The binary
// sits at RedisServerPath inside the image whatever its host path. Without a
// C compiler, or for a static binary, the image has no shim and clock skew
// is unavailable.
func redisImage(ctx context.Context, build *ServerBuild) (imageSpec, error) {
	if build == nil {
		if _, err := os.Stat(RedisServerPath); err != nil {
			return imageSpec{}, fmt.Errorf("redis image: %s is missing (%v): run scripts/install-deps (apt-get install redis-server)", RedisServerPath, err)
		}
		b, err := InspectServer(ctx, RedisServerPath)
		if err != nil {
			return imageSpec{}, fmt.Errorf("redis image: %w", err)
		}
		build = &b
	}
	version := build.Version
	spec := imageSpec{repo: "redline/redis", tagPrefix: version, entrypoint: []string{RedisServerPath}, version: version}
	server, err := os.ReadFile(build.Path)
	if err != nil {
		return imageSpec{}, fmt.Errorf("redis image: %w", err)
	}
	spec.files = append(spec.files, imageFile{path: RedisServerPath, mode: 0o755, data: server})
	paths := map[string]bool{}
	var bins []string
	if build.Static {
		spec.clock = ClockUnsupported("redis", "", build)
	} else {
		bins = append(bins, build.Path)
		shim, err := buildClockShim(ctx)
		if err != nil {
			spec.clock = err.Error()
		} else {
			defer os.RemoveAll(filepath.Dir(shim))
			bins = append(bins, shim)
			data, err := os.ReadFile(shim)
			if err != nil {
				return imageSpec{}, err
			}
			spec.files = append(spec.files,
				imageFile{path: clockShimPath, mode: 0o755, data: data},
				imageFile{path: clockFile, mode: 0o644, data: []byte("0\n")})
			spec.env = map[string]string{"LD_PRELOAD": clockShimPath, "REDLINE_CLOCK_FILE": clockFile}
		}
	}
	for _, bin := range bins {
		libs, err := sharedLibs(bin)
		if err != nil {
			return imageSpec{}, fmt.Errorf("redis image: %w", err)
		}
		for _, l := range libs {
			paths[l] = true
		}
	}
	delete(paths, RedisServerPath) // the server itself is already in, under its image path
	for p := range paths {
		data, err := os.ReadFile(p) // follows symlinks: the image gets a plain file under the linked name
		if err != nil {
			return imageSpec{}, fmt.Errorf("redis image: %w", err)
		}
		spec.files = append(spec.files, imageFile{path: p, mode: 0o755, data: data})
	}
	return spec, nil
}

// buildClockShim compiles clockshim.c into a temporary directory.
func buildClockShim(ctx context.Context) (string, error) {
	cc := compiler()
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("clock skew unavailable: no C compiler (%s) to build the clock shim: run scripts/install-deps (apt-get install gcc libc6-dev)", cc)
	}
	dir, err := os.MkdirTemp("", "redline-clockshim-")
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "clockshim.c")
	if err := os.WriteFile(src, clockShimSource, 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	out := filepath.Join(dir, "clockshim.so")
	// Relative names and no debug info keep the output byte-identical
	// across builds, so the image tag (a hash of its files) is stable.
	cmd := exec.CommandContext(ctx, cc, "-O2", "-s", "-shared", "-fPIC", "-o", "clockshim.so", "clockshim.c", "-ldl")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("clock skew unavailable: compiling the clock shim: %v: %s", err, msg)
	}
	return out, nil
}

var lddLine = regexp.MustCompile(`(?:=>\s*)?(/\S+)\s+\(0x`)

// sharedLibs lists the absolute paths ldd prints for bin (libraries and loader).
func sharedLibs(bin string) ([]string, error) {
	out, err := exec.Command("ldd", bin).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %v: %s", bin, err, out)
	}
	var libs []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "not found") {
			return nil, fmt.Errorf("ldd %s: %s", bin, strings.TrimSpace(line))
		}
		if m := lddLine.FindStringSubmatch(line); m != nil {
			libs = append(libs, m[1])
		}
	}
	if len(libs) == 0 {
		return nil, fmt.Errorf("ldd %s found no libraries: %s", bin, out)
	}
	return libs, nil
}

// referenceImage packs a static redline binary whose entrypoint is
// `redline server`.
func referenceImage(ctx context.Context, override string, logf func(string, ...any)) (imageSpec, error) {
	bin, err := referenceBinary(ctx, override, logf)
	if err != nil {
		return imageSpec{}, err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return imageSpec{}, fmt.Errorf("reference image: %w", err)
	}
	if err := checkStatic(bin); err != nil {
		return imageSpec{}, err
	}
	return imageSpec{
		repo:       "redline/reference",
		files:      []imageFile{{path: "/redline", mode: 0o755, data: data}},
		entrypoint: []string{"/redline", "server"},
		version:    "reference",
	}, nil
}

// BinaryEnv names a static redline binary to put in the reference image
// instead of building one.
const BinaryEnv = "REDLINE_BINARY"

// referenceBinary finds or builds the static binary: the explicit override,
// $REDLINE_BINARY, the running executable when it is a static "redline",
// else `CGO_ENABLED=0 go build ./cmd/redline` in the module found by `go env GOMOD`.
func referenceBinary(ctx context.Context, override string, logf func(string, ...any)) (string, error) {
	if override != "" {
		return override, nil
	}
	if p := os.Getenv(BinaryEnv); p != "" {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil && filepath.Base(exe) == "redline" && checkStatic(exe) == nil {
		return exe, nil
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "redline-build-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "redline")
	logf("building the reference server binary (CGO_ENABLED=0 go build ./cmd/redline)")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, "./cmd/redline")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("building the reference server (go build ./cmd/redline in %s): %v\n%s", root, err, msg)
	}
	return out, nil
}

const modulePath = "github.com/redline-dev/redline"

func moduleRoot(ctx context.Context) (string, error) {
	hint := "run from the redline repository or set " + BinaryEnv + " to a static redline binary"
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("cannot find the redline sources (go env GOMOD: %v): %s", err, hint)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("cannot find the redline sources (not inside a Go module): " + hint)
	}
	data, err := os.ReadFile(gomod)
	if err != nil || !bytes.Contains(data, []byte("module "+modulePath+"\n")) {
		return "", fmt.Errorf("cannot find the redline sources (%s is not module %s): %s", gomod, modulePath, hint)
	}
	return filepath.Dir(gomod), nil
}

// checkStatic refuses dynamically linked binaries: a FROM scratch image has no loader.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s is not a Linux executable: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked: build it with CGO_ENABLED=0", path)
		}
	}
	return nil
}

// BuildImage builds (or finds) the image of a target ("redis" or
// "reference") and returns its tag and image id. Start does this itself;
// this is for building images ahead of time (scripts/build-images).
func (r *Runtime) BuildImage(ctx context.Context, target string) (tag, id string, err error) {
	flav, ok := flavours[target]
	if !ok {
		return "", "", fmt.Errorf("docker: unknown target %q (want redis or reference)", target)
	}
	s, err := flav.image(ctx, r, cluster.Spec{Target: target}, r.opts.Log)
	if err != nil {
		return "", "", err
	}
	return r.ensureImage(ctx, s, r.opts.Log)
}
