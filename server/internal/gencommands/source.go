package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The input is Redis 7.0.15's src/commands/*.json as Debian's source
// package of Redis ships it (the upstream tarball, unchanged, as
// redis_7.0.15.orig.tar.gz). It is pinned by its SHA-256, so that every run
// of the generator, here or in CI, reads the same bytes; the JSON files are
// read straight out of the tarball.
const (
	redisVersion      = "7.0.15"
	redisSourceURL    = "http://deb.debian.org/debian/pool/main/r/redis/redis_7.0.15.orig.tar.gz"
	redisSourceSHA256 = "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982"
)

// srcEnv names a local Redis 7.0.15 source tree or tarball to read instead
// of the pinned download, for a machine with no network.
const srcEnv = "REDLINE_REDIS_SRC"

// Bounds on what a download or a tarball may make us read: the tarball is
// 2.9 MB and its largest command file 12 KB, so anything near these is not
// the source we pinned.
const (
	maxTarballBytes = 64 << 20
	maxFileBytes    = 1 << 20
)

// loadCommands reads the commands, by full name ("client|kill"), from src:
// a Redis source tree or tarball; or, when src is empty, the pinned tarball
// in the cache, downloaded and checked against its SHA-256 first when the
// cache has none.
func loadCommands(ctx context.Context, src string) (map[string]command, error) {
	if src == "" {
		dir, err := cacheDir()
		if err != nil {
			return nil, err
		}
		client := &http.Client{Timeout: 5 * time.Minute}
		if src, err = pinnedTarball(ctx, client, redisSourceURL, redisSourceSHA256, dir); err != nil {
			return nil, err
		}
	}
	st, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	var files map[string][]byte
	if st.IsDir() {
		files, err = readTree(src)
	} else {
		files, err = readTarball(src)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	cmds, err := parseSource(files)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return cmds, nil
}

// cacheDir is where the pinned tarball is kept between runs: outside the
// work tree, beside redline's other downloads.
func cacheDir() (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "redline", "redis-src"), nil
}

// pinnedTarball returns the path of the tarball at url in dir, downloading
// it when dir has none. Both a cached file and a download must have the
// SHA-256 sum; a download that does not is never cached.
func pinnedTarball(ctx context.Context, client *http.Client, url, sum, dir string) (string, error) {
	dest := filepath.Join(dir, path.Base(url))
	if f, err := os.Open(dest); err == nil {
		got, err := sha256Of(f)
		f.Close()
		if err != nil {
			return "", err
		}
		if got != sum {
			return "", fmt.Errorf("cached %s has sha256 %s, want %s: remove it to download it again", dest, got, sum)
		}
		return dest, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("downloading %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("downloading %s: %s", url, resp.Status)
	}
	// A temporary file renamed into place: a broken download, or two runs
	// at once, never leave a torn tarball under the final name.
	tmp, err := os.CreateTemp(dir, path.Base(url)+".*.part")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	// CreateTemp's 0600 would keep the cache from other users of the machine.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, maxTarballBytes+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("downloading %s: %w", url, err)
	}
	if n > maxTarballBytes {
		return "", fmt.Errorf("downloading %s: more than %d bytes, not the pinned tarball", url, maxTarballBytes)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return "", fmt.Errorf("downloaded %s has sha256 %s, want %s", url, got, sum)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return "", err
	}
	return dest, nil
}

func sha256Of(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// wanted says whether a file of the source, by its path under the source's
// top directory, is one the generator reads.
func wanted(rel string) bool {
	ok, _ := path.Match("src/commands/*.json", rel)
	return ok || rel == "src/version.h"
}

// readTree reads the wanted files of a Redis source tree.
func readTree(dir string) (map[string][]byte, error) {
	names, err := filepath.Glob(filepath.Join(dir, "src", "commands", "*.json"))
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, name := range append(names, filepath.Join(dir, "src", "version.h")) {
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // parseSource says what is missing
		}
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(dir, name)
		if err != nil {
			return nil, err
		}
		files[filepath.ToSlash(rel)] = data
	}
	return files, nil
}

// readTarball reads the wanted files of a gzipped Redis source tarball,
// whose entries sit under one top directory ("redis-7.0.15/src/...").
func readTarball(name string) (map[string][]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		_, rel, _ := strings.Cut(strings.TrimPrefix(hdr.Name, "./"), "/")
		if hdr.Typeflag != tar.TypeReg || !wanted(rel) {
			continue
		}
		if _, dup := files[rel]; dup {
			return nil, fmt.Errorf("%s is in the tarball twice", hdr.Name)
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxFileBytes+1))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", hdr.Name, err)
		}
		if len(data) > maxFileBytes {
			return nil, fmt.Errorf("%s: more than %d bytes", hdr.Name, maxFileBytes)
		}
		files[rel] = data
	}
}

// parseSource checks that the files are Redis 7.0.15's and reads the
// commands of src/commands/*.json, by full name ("client|kill").
func parseSource(files map[string][]byte) (map[string]command, error) {
	version, ok := files["src/version.h"]
	if !ok {
		return nil, errors.New("no src/version.h: not a Redis source tree")
	}
	if !bytes.Contains(version, []byte(`#define REDIS_VERSION "`+redisVersion+`"`)) {
		return nil, fmt.Errorf("src/version.h is not Redis %s's", redisVersion)
	}
	var names []string
	for rel := range files {
		if strings.HasPrefix(rel, "src/commands/") {
			names = append(names, rel)
		}
	}
	if len(names) == 0 {
		return nil, errors.New("no src/commands/*.json")
	}
	sort.Strings(names)
	cmds := map[string]command{}
	for _, rel := range names {
		var m map[string]command
		if err := json.Unmarshal(files[rel], &m); err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no command", rel)
		}
		for name, c := range m {
			full := strings.ToLower(name)
			if c.Container != "" {
				full = strings.ToLower(c.Container) + "|" + full
			}
			if _, dup := cmds[full]; dup {
				return nil, fmt.Errorf("%s: command %q is described twice", rel, full)
			}
			cmds[full] = c
		}
	}
	return cmds, nil
}
