package server

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestContainerScanVisitsEveryElementOnce: a value past its compact
// encoding is paged; following the cursor to 0 yields each element once.
func TestContainerScanVisitsEveryElementOnce(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	for i := 0; i < 700; i++ {
		c.HSet(ctx, "h", fmt.Sprint("f", i), i)
		c.SAdd(ctx, "s", i)
		c.ZAdd(ctx, "z", redis.Z{Score: float64(i), Member: fmt.Sprint("m", i)})
	}
	for _, tc := range []struct {
		cmd   string
		width int
	}{{"hscan", 2}, {"sscan", 1}, {"zscan", 2}} {
		seen := map[string]int{}
		cursor, rounds := "0", 0
		for {
			res, err := c.Do(ctx, tc.cmd, tc.cmd[:1], cursor, "count", 50).Slice()
			if err != nil {
				t.Fatal(err)
			}
			cursor = res[0].(string)
			items := res[1].([]any)
			for i := 0; i < len(items); i += tc.width {
				seen[items[i].(string)]++
			}
			rounds++
			if cursor == "0" {
				break
			}
			if rounds > 100 {
				t.Fatalf("%s: cursor never returns to 0", tc.cmd)
			}
		}
		if len(seen) != 700 {
			t.Errorf("%s saw %d distinct elements, want 700", tc.cmd, len(seen))
		}
		for m, n := range seen {
			if n != 1 {
				t.Errorf("%s saw %s %d times", tc.cmd, m, n)
			}
		}
		if rounds < 14 {
			t.Errorf("%s: %d rounds with COUNT 50 over 700 elements", tc.cmd, rounds)
		}
	}
}
