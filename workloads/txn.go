package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/client"
)

// txn: transactions on keys that share a hash tag, so Redis Cluster can run
// them on one node:
//   - bank: transfers between the accounts of a group, half with
//     WATCH/MULTI/EXEC, half with a Lua script; reads of every balance in
//     one MULTI. The total must never change and no partial transfer may
//     be seen.
//   - list-append: MULTI of RPUSH and LRANGE on a group's lists, checked
//     Elle-style for G0, G1a/b/c, G-single and G2.
//   - cross-slot: an MSET over two slots, which the server must refuse
//     with CROSSSLOT (a fidelity check).
type txn struct {
	base
	groups  int // bank groups, and list-append groups per generation
	banks   placement
	lists   placement
	maxGen  atomic.Int64
	transfS *redis.Script
}

const (
	bankAccounts    = 5
	bankInitial     = 100
	listKeys        = 4
	listGeneration  = 100
	transferScript  = `local b = tonumber(redis.call('get', KEYS[1]) or '0') if b < tonumber(ARGV[1]) then return 0 end redis.call('decrby', KEYS[1], ARGV[1]) redis.call('incrby', KEYS[2], ARGV[1]) return 1`
	errInsufficient = "insufficient-funds"
)

const txnGroups = 3

func newTxn(cfg Config) Workload {
	return &txn{base: newBase("txn", cfg), groups: keyCount(cfg.Keys, txnGroups, 0),
		banks: placement{name: "bank-"}, lists: placement{name: "list-"}, transfS: redis.NewScript(transferScript)}
}

// OwnClientOnly: a transaction is no single command a library can run.
func (w *txn) OwnClientOnly() string { return "WATCH/MULTI on one connection" }

// Checkers: bank invariants, Elle-style list-append, the cross-slot
// fidelity check and the exact RPO of lost appends.
func (w *txn) Checkers(opts CheckOptions) []checker.Checker {
	return w.checkers(opts, checker.Bank(0, w.aspect(opts, "bank")), checker.ListAppend(w.aspect(opts, "list-append")),
		checker.CrossSlot(w.aspect(opts, "cross-slot")), w.rpo(opts, "list-append"), w.defaultFailover(opts, "list-append"))
}

// bankKey is the group (history key) of bank group g; accounts hang off it
// and share its hash tag.
func (w *txn) bankKey(g int) string { return w.prefix + w.banks.tag(0, g) }
func account(group string, a int) string {
	return group + ":acct" + strconv.Itoa(a)
}

// listGroup is the history key of a list-append group in a generation.
// Group g of a generation carries its tag of that generation: on primary g
// mod P, all of the group's lists in one slot.
func (w *txn) listGroup(gen int64, g int) string {
	return fmt.Sprintf("%s%s%d", w.prefix, w.lists.tag(gen, g), gen)
}

// Setup places the groups on every primary and loads the transfer script.
func (w *txn) Setup(ctx context.Context, c *client.Client) error {
	w.groups = keyCount(w.cfg.Keys, txnGroups, len(c.Addrs()))
	if err := w.banks.place(c, w.groups); err != nil {
		return err
	}
	if err := w.lists.place(c, w.groups); err != nil {
		return err
	}
	for _, addr := range c.Addrs() {
		if err := w.transfS.Load(ctx, c.Node(addr)).Err(); err != nil {
			return fmt.Errorf("txn: SCRIPT LOAD on %s: %w", addr, err)
		}
	}
	return nil
}

// InitOps set every group's opening balances.
func (w *txn) InitOps() []history.Op {
	var ops []history.Op
	for g := 0; g < w.groups; g++ {
		key := w.bankKey(g)
		bal := map[string]int{}
		for a := 0; a < bankAccounts; a++ {
			bal[account(key, a)] = bankInitial
		}
		op := history.Op{F: checker.BankInit, Key: key}
		op.SetValue(bal)
		ops = append(ops, op)
	}
	return ops
}

type txnGen struct {
	w      *txn
	rng    *rand.Rand
	worker int64
	n      int64
}

func (w *txn) Generator(worker int, seed int64) Generator {
	return &txnGen{w: w, rng: seeded(seed, worker), worker: int64(worker)}
}

func (g *txnGen) Next() history.Op {
	g.n++
	r := g.rng.IntN(100)
	switch {
	case r < 2:
		// Two keys of different slots (the tags differ).
		op := history.Op{F: checker.CrossSlotTxn, Key: g.w.prefix + "{cross-a}"}
		op.SetValue([]string{g.w.prefix + "{cross-a}x", g.w.prefix + "{cross-b}y"})
		return op
	case r < 30:
		key := g.w.bankKey(g.rng.IntN(g.w.groups))
		from := g.rng.IntN(bankAccounts)
		to := (from + 1 + g.rng.IntN(bankAccounts-1)) % bankAccounts
		op := history.Op{F: checker.BankTransfer, Key: key}
		op.SetValue(map[string]any{"from": account(key, from), "to": account(key, to), "amount": 1 + g.rng.IntN(10)})
		return op
	case r < 45:
		return history.Op{F: checker.BankReadAll, Key: g.w.bankKey(g.rng.IntN(g.w.groups))}
	}
	gen := g.n / listGeneration
	raiseTo(&g.w.maxGen, gen)
	group := g.w.listGroup(gen, g.rng.IntN(g.w.groups))
	n := 1 + g.rng.IntN(4)
	mops := make([][]any, 0, n)
	for i := 0; i < n; i++ {
		k := group + ":l" + strconv.Itoa(g.rng.IntN(listKeys))
		if g.rng.IntN(2) == 0 {
			mops = append(mops, []any{"r", k, nil})
		} else {
			mops = append(mops, []any{"append", k, g.worker<<32 | g.n<<3 | int64(i)})
		}
	}
	op := history.Op{F: checker.ListAppendTxn, Key: group}
	op.SetValue(mops)
	return op
}

func (w *txn) Invoke(ctx context.Context, c Conn, inv history.Op) history.Op {
	switch inv.F {
	case checker.BankInit:
		return w.init(ctx, c, inv)
	case checker.BankTransfer:
		return w.transfer(ctx, c, inv)
	case checker.BankReadAll:
		return w.readAll(ctx, c, inv)
	case checker.ListAppendTxn:
		return w.listTxn(ctx, c, inv)
	case checker.CrossSlotTxn:
		var keys []string
		_ = inv.DecodeValue(&keys)
		r := c.Do(ctx, client.Request{Slot: Keyslot(keys[0]), Build: func(ctx context.Context) []redis.Cmder {
			return []redis.Cmder{redis.NewStatusCmd(ctx, "mset", keys[0], "1", keys[1], "1")}
		}})
		out := complete(inv, r)
		out.Value = inv.Value
		return out
	}
	return unknownOp(inv, "unknown op "+inv.F)
}

func (w *txn) init(ctx context.Context, c Conn, inv history.Op) history.Op {
	var bal map[string]int
	_ = inv.DecodeValue(&bal)
	args := []any{"mset"}
	for k, v := range bal {
		args = append(args, k, v)
	}
	out, _ := write(ctx, c, w.cfg, inv, func(ctx context.Context) []redis.Cmder {
		return []redis.Cmder{redis.NewStatusCmd(ctx, args...)}
	})
	return out
}

type transferArgs struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Amount int64  `json:"amount"`
}

// transfer moves money with WATCH/MULTI/EXEC or with Lua, chosen by the
// amount's parity so the choice is part of the seeded op.
func (w *txn) transfer(ctx context.Context, c Conn, inv history.Op) history.Op {
	var t transferArgs
	_ = inv.DecodeValue(&t)
	slot := Keyslot(inv.Key)
	if t.Amount%2 == 0 {
		out, cmd := evalScript(ctx, c, w.cfg, inv, w.transfS, transferScript, []string{t.From, t.To}, t.Amount)
		scriptOutcome(&out, cmd, errInsufficient)
		return out
	}

	out := history.Op{Value: inv.Value}
	var execCmds []redis.Cmder
	var waitAcked int64 = -1
	sent := false // whether EXEC was sent: only then can the outcome be unknown
	node, pool := c.PrimaryClient(slot)
	err := pool.Watch(ctx, func(tx *redis.Tx) error {
		bal, err := tx.Get(ctx, t.From).Int64()
		if err != nil && err != redis.Nil {
			return err
		}
		if bal < t.Amount {
			return errors.New(errInsufficient)
		}
		sent = true
		execCmds, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.DecrBy(ctx, t.From, t.Amount)
			p.IncrBy(ctx, t.To, t.Amount)
			return nil
		})
		if err != nil || w.cfg.Wait <= 0 {
			return err
		}
		// WAIT on the connection that ran the EXEC.
		wc := redis.NewIntCmd(ctx, "wait", w.cfg.Wait, w.cfg.WaitTimeout.Milliseconds())
		if tx.Process(ctx, wc) == nil {
			waitAcked = wc.Val()
		}
		return nil
	}, t.From, t.To)
	c.NoteError(slot, err)
	out.Node = node
	_ = execCmds
	switch {
	case err == nil:
		out.Type = history.OK
		if w.cfg.Wait > 0 {
			out.SetWait(&history.Wait{Want: w.cfg.Wait, Acked: int(waitAcked)})
		}
	case err.Error() == errInsufficient:
		out.Type = history.Fail
		out.SetError(errInsufficient)
	case errors.Is(err, redis.TxFailedErr):
		out.Type = history.Fail
		out.SetError("watch-conflict")
	case !sent || client.Classify(err) == history.Fail:
		out.Type = history.Fail
		out.SetError(client.ErrorString(err))
	default:
		out.Type = history.Info
		out.SetError(client.ErrorString(err))
	}
	return out
}

// readAll reads every balance of a group in one MULTI/EXEC.
func (w *txn) readAll(ctx context.Context, c Conn, inv history.Op) history.Op {
	var cmds []*redis.StringCmd
	r := c.Do(ctx, client.Request{Slot: Keyslot(inv.Key), Tx: true, Build: func(ctx context.Context) []redis.Cmder {
		cmds = cmds[:0]
		out := make([]redis.Cmder, bankAccounts)
		for a := 0; a < bankAccounts; a++ {
			cmd := redis.NewStringCmd(ctx, "get", account(inv.Key, a))
			cmds = append(cmds, cmd)
			out[a] = cmd
		}
		return out
	}})
	out := complete(inv, r)
	if out.Type != history.OK {
		return out
	}
	// EXEC ran: a balance that is no integer is garbage, recorded raw on
	// the ok completion for the checker to flag.
	bal := map[string]any{}
	for a, cmd := range cmds {
		v, err := cmd.Result()
		switch {
		case err == redis.Nil:
			bal[account(inv.Key, a)] = 0
		case err != nil:
			bal[account(inv.Key, a)] = err.Error()
		default:
			bal[account(inv.Key, a)] = intOrRaw(v)
		}
	}
	out.SetValue(bal)
	return out
}

// listTxn runs a list-append transaction: RPUSH for appends, LRANGE for
// reads, all in one MULTI/EXEC.
func (w *txn) listTxn(ctx context.Context, c Conn, inv history.Op) history.Op {
	var mops [][]any
	_ = inv.DecodeValue(&mops)
	var cmds []redis.Cmder
	r := c.Do(ctx, client.Request{Slot: Keyslot(inv.Key), Tx: true, Wait: w.cfg.Wait, WaitTimeout: w.cfg.WaitTimeout,
		Build: func(ctx context.Context) []redis.Cmder {
			cmds = cmds[:0]
			for _, m := range mops {
				k := m[1].(string)
				if m[0] == "append" {
					cmds = append(cmds, redis.NewIntCmd(ctx, "rpush", k, int64(m[2].(float64))))
				} else {
					cmds = append(cmds, redis.NewStringSliceCmd(ctx, "lrange", k, 0, -1))
				}
			}
			return cmds
		}})
	out := complete(inv, r)
	out.Value = inv.Value
	if out.Type != history.OK {
		return out
	}
	done := make([][]any, len(mops))
	for i, m := range mops {
		done[i] = []any{m[0], m[1], m[2]}
		if m[0] == "r" {
			// EXEC ran, so the op is ok; an element that is no integer is
			// garbage, recorded raw in place for the checker to flag.
			vals := []any{}
			for _, s := range cmds[i].(*redis.StringSliceCmd).Val() {
				vals = append(vals, intOrRaw(s))
			}
			done[i][2] = vals
		} else {
			done[i][2] = int64(m[2].(float64))
		}
	}
	out.SetValue(done)
	out.SetWait(waitOf(w.cfg.Wait, r))
	return out
}

// FinalOps read every bank group and every list of every generation.
func (w *txn) FinalOps() []history.Op {
	var ops []history.Op
	for g := 0; g < w.groups; g++ {
		ops = append(ops, history.Op{F: checker.BankReadAll, Key: w.bankKey(g)})
	}
	for gen := int64(0); gen <= w.maxGen.Load(); gen++ {
		for g := 0; g < w.groups; g++ {
			group := w.listGroup(gen, g)
			mops := make([][]any, listKeys)
			for k := range mops {
				mops[k] = []any{"r", group + ":l" + strconv.Itoa(k), nil}
			}
			op := history.Op{F: checker.ListAppendTxn, Key: group}
			op.SetValue(mops)
			ops = append(ops, op)
		}
	}
	return ops
}
