// Reply shapes shared by the command families: random samples (SRANDMEMBER,
// HRANDFIELD, ZRANDMEMBER), booleans, human-readable sizes.

package server

import (
	"fmt"
	"math/rand/v2"

	"github.com/redline-dev/redline/server/resp"
)

// replyRandomPairs replies count random elements with their values
// (HRANDFIELD WITHVALUES, ZRANDMEMBER WITHSCORES): [element, value] pairs
// in RESP3, a flat array in RESP2.
func replyRandomPairs[T any](c *Client, all []T, count int64, reply func(T)) {
	if c.proto == 3 {
		replyRandomSample(c, all, count, 1, func(e T) {
			c.Array(2)
			reply(e)
		})
		return
	}
	replyRandomSample(c, all, count, 2, reply)
}

// replyRandomSample replies count random elements of all as an array, as
// SRANDMEMBER, HRANDFIELD and ZRANDMEMBER do: count >= 0 distinct elements
// (all of them, in order, when count covers them), count < 0 that many
// with repetitions. reply writes width array items per element.
func replyRandomSample[T any](c *Client, all []T, count int64, width int, reply func(T)) {
	if count < -maxRandomCount {
		// Redis would try to build the reply until memory runs out.
		c.Error("ERR value is out of range")
		return
	}
	if count < 0 {
		c.Array(int(-count) * width)
		for i := int64(0); i < -count; i++ {
			reply(all[rand.IntN(len(all))])
		}
		return
	}
	if count >= int64(len(all)) {
		c.Array(len(all) * width)
		for _, e := range all {
			reply(e)
		}
		return
	}
	idx := rand.Perm(len(all))[:count]
	c.Array(len(idx) * width)
	for _, i := range idx {
		reply(all[i])
	}
}

// boolReply is a RESP3 boolean, or 1/0 on RESP2 as Redis answers.
func (c *Client) boolReply(v bool) {
	if c.proto == 3 {
		c.out = resp.AppendBool(c.out, v)
		return
	}
	if v {
		c.Int(1)
	} else {
		c.Int(0)
	}
}

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// maxRandomCount bounds the repetitions a negative count may ask for.
const maxRandomCount = 1 << 24
