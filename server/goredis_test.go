package server

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisDefaults connects with go-redis's default options (HELLO 3,
// CLIENT SETINFO) and through a ClusterClient-free pipeline.
func TestGoRedisDefaults(t *testing.T) {
	s := startServer(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr().String()})
	defer c.Close()
	if err := c.Set(ctx, "a", "b", 0).Err(); err != nil {
		t.Fatal(err)
	}
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "n")
		p.Incr(ctx, "n")
		p.Get(ctx, "a")
		return nil
	})
	if err != nil || cmds[1].(*redis.IntCmd).Val() != 2 || cmds[2].(*redis.StringCmd).Val() != "b" {
		t.Fatalf("pipeline: %v %v", cmds, err)
	}
	list, err := c.ClientList(ctx).Result()
	if err != nil || list == "" {
		t.Fatalf("CLIENT LIST: %q %v", list, err)
	}
	if err := c.Do(ctx, "client", "setname", "x").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.ClientID(ctx).Result(); err != nil || v <= 0 {
		t.Fatalf("CLIENT ID %v %v", v, err)
	}
}
