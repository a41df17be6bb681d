package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestGeneratedFileIsCurrent regenerates server/commands_redis_gen.go from
// the pinned input and fails when the checked-in file differs: the
// metadata is edited through the generator (`make commands`), never by hand.
func TestGeneratedFileIsCurrent(t *testing.T) {
	cmds := redisCommands(t)
	want, err := generate(cmds)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../commands_redis_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("server/commands_redis_gen.go is not what server/internal/gencommands makes of Redis 7.0.15's src/commands/*.json: run `make commands`")
	}
}

// TestImplicitACLCategories checks the categories Redis adds from the
// flags (setImplicitACLCategories) and their order on two known commands.
func TestImplicitACLCategories(t *testing.T) {
	src, err := generate(redisCommands(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`"append":`, `{"@write", "@string", "@fast"}`,
		`"blpop":`, `{"@write", "@list", "@slow", "@blocking"}`,
		`"acl|deluser":`, `{"@admin", "@slow", "@dangerous"}`,
	} {
		if !strings.Contains(string(src), line) {
			t.Errorf("generated file lacks %s", line)
		}
	}
	if strings.Contains(string(src), `"sentinel|masters":   {"@`) {
		t.Error("sentinel-only commands got ACL categories: a redis-server's COMMAND does not list them")
	}
}

// TestUnknownACLCategoryRefused: a category Redis 7.0 does not have is an
// error of the input, not a category quietly dropped.
func TestUnknownACLCategoryRefused(t *testing.T) {
	cmds := map[string]command{"x": {ACLCategories: []string{"NOSUCH"}}}
	defer func() {
		if recover() == nil {
			t.Fatal("an unknown ACL category was accepted")
		}
	}()
	generate(cmds)
}

var (
	loadOnce sync.Once
	loaded   map[string]command
	loadErr  error
)

// redisCommands reads the generator's input as `make commands` does, once
// per test binary. With no way to it (no network, no local copy) the test
// fails, saying how to give one: a skip would let the generated file drift
// from Redis unnoticed.
func redisCommands(t *testing.T) map[string]command {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = loadCommands(context.Background(), os.Getenv(srcEnv)) })
	if loadErr != nil {
		dir, _ := cacheDir()
		t.Fatalf("reading Redis %s's src/commands/*.json: %v\n"+
			"Offline? Get %s (sha256 %s) where there is network and either put it in %s "+
			"or set %s to its path (or to a Redis %s source tree).",
			redisVersion, loadErr, redisSourceURL, redisSourceSHA256, dir, srcEnv, redisVersion)
	}
	return loaded
}
