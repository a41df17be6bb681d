package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestExpireCycleLatency: the active expiry of a big set holds the server
// for the time Redis's synchronous free of it takes (lazyfree-lazy-expire
// no), and the latency monitor records an expire-cycle event, as
// unit/latency-monitor checks on Redis. 200,000 members come to 50 ms at
// freeNsPerEffort, fifty times the threshold.
func TestExpireCycleLatency(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	if err := c.ConfigSet(ctx, "latency-monitor-threshold", "1").Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200_000; i += 1000 {
		members := make([]any, 0, 1000)
		for j := i; j < i+1000; j++ {
			members = append(members, strconv.Itoa(j))
		}
		if err := c.SAdd(ctx, "big", members...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if enc := c.ObjectEncoding(ctx, "big").Val(); enc != "hashtable" {
		t.Fatalf("encoding %q, want hashtable", enc)
	}
	if err := c.PExpire(ctx, "big", 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	waitForServer(t, "the set to expire", func() bool { return c.DBSize(ctx).Val() == 0 })
	latest := fmt.Sprint(c.Do(ctx, "LATENCY", "LATEST").Val())
	if !strings.Contains(latest, "expire-cycle") {
		t.Fatalf("LATENCY LATEST after a 200,000-member set expired: %s, want an expire-cycle event", latest)
	}
}
