package localcluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// WriteKeys writes count keys "key:i" = "v<i>" through a cluster client
// and waits until a replica of every primary has them: a primary killed
// with writes its replica has not received loses them when the replica is
// promoted (asynchronous replication, as designed), and tests that write
// keys are about faults and moves, not about that loss.
func WriteKeys(ctx context.Context, addrs []string, count int) (map[string]string, error) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, DisableIdentity: true})
	defer cc.Close()
	want := map[string]string{}
	for i := range count {
		k, v := fmt.Sprintf("key:%d", i), fmt.Sprintf("v%d", i)
		if err := cc.Set(ctx, k, v, 0).Err(); err != nil {
			return nil, fmt.Errorf("SET %s: %w", k, err)
		}
		want[k] = v
	}
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n, err := m.Do(ctx, "wait", 1, 10000).Int()
		if err == nil && n < 1 {
			err = fmt.Errorf("no replica acknowledged the keys of %s", m.Options().Addr)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the keys to reach the replicas: %w", err)
	}
	return want, nil
}

// CheckKeys reads every key of want back through a cluster client.
func CheckKeys(ctx context.Context, addrs []string, want map[string]string) error {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, DisableIdentity: true})
	defer cc.Close()
	for k, v := range want {
		got, err := cc.Get(ctx, k).Result()
		if err != nil || got != v {
			return fmt.Errorf("GET %s = %q, %v; want %q", k, got, err, v)
		}
	}
	return nil
}

// Eventually polls cond until it returns "" or the limit passes, then fails
// t with cond's last reason. It bounds a wait; it does not assert a
// duration.
func Eventually(t testing.TB, limit time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still not true after %s: %s", limit, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
