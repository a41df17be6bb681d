package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// checkStoreDir checks, before anything starts, that dir is a directory
// redline can write into, or one it can create: a results store that
// names a file used to fail only after a whole cluster had started.
func checkStoreDir(flag, dir string) error {
	if dir == "" {
		return badArgs("%s is empty: give the directory of the results store", flag)
	}
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return badArgs("%s %s is a file, not a directory: give a directory (created if missing)", flag, dir)
	case err == nil:
		return writable(flag, dir, dir)
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return badArgs("%s %s: %v", flag, dir, err)
	}
	// Missing: it will be created under its nearest existing parent.
	parent := dir
	for {
		next := filepath.Dir(parent)
		if next == parent {
			return nil
		}
		parent = next
		st, err := os.Stat(parent)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return badArgs("%s %s: %v", flag, dir, err)
		}
		if !st.IsDir() {
			return badArgs("%s %s cannot be created: %s is a file", flag, dir, parent)
		}
		return writable(flag, dir, parent)
	}
}

func writable(flag, dir, at string) error {
	if err := syscall.Access(at, 0x2 /* W_OK */); err != nil {
		return badArgs("%s %s: %s is not writable (%v)", flag, dir, at, err)
	}
	return nil
}
