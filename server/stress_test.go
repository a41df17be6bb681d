package server

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestConcurrentMix runs many clients with a random mix of commands,
// transactions, scripts, CLIENT KILL, CONFIG SET and AOF rewrites at once;
// the server must keep answering and the AOF must reload to the same data.
func TestConcurrentMix(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, "--dir", dir, "--appendonly", "yes", "--appendfsync", "everysec")
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		c := newClient(t, s, 2+w%2)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < 1500; i++ {
				k := fmt.Sprintf("k%d", r.Intn(20))
				switch r.Intn(10) {
				case 0:
					c.Set(ctx, k, i, 0)
				case 1:
					c.Incr(ctx, "ctr:"+k)
				case 2:
					c.RPush(ctx, "l:"+k, i)
				case 3:
					c.HIncrBy(ctx, "h", k, 1)
				case 4:
					c.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.Incr(ctx, "tx")
						p.SAdd(ctx, "s", k)
						return nil
					})
				case 5:
					c.Eval(ctx, "return redis.call('incrby', KEYS[1], 2)", []string{"lua:" + k})
				case 6:
					c.Do(ctx, "client", "kill", "id", fmt.Sprint(1+r.Intn(20)))
				case 7:
					c.ConfigSet(ctx, "appendfsync", []string{"always", "everysec", "no"}[r.Intn(3)])
				case 8:
					if r.Intn(50) == 0 {
						c.BgRewriteAOF(ctx)
					}
				case 9:
					c.ZIncrBy(ctx, "z", 1, k)
				}
			}
		}(w)
	}
	wg.Wait()
	c := newClient(t, s, 2)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	snapshot := func(c *redis.Client) string {
		keys, _ := c.Keys(ctx, "*").Result()
		out := fmt.Sprint(len(keys), " ")
		for _, k := range []string{"tx", "ctr:k1", "lua:k3"} {
			out += c.Get(ctx, k).Val() + " "
		}
		out += fmt.Sprint(c.LLen(ctx, "l:k2").Val(), c.HGetAll(ctx, "h").Val(), c.SCard(ctx, "s").Val(), c.ZScore(ctx, "z", "k4").Val())
		return out
	}
	before := snapshot(c)
	s.Close()
	s2 := startServer(t, "--dir", dir, "--appendonly", "yes")
	if after := snapshot(newClient(t, s2, 2)); after != before {
		t.Fatalf("after reload:\n  %s\nbefore:\n  %s", after, before)
	}
}
