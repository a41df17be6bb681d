package checker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/redline-dev/redline/history"
)

type bank struct {
	total int64
	o     Scope
}

// The bank ops of the txn workload, by their "f" (workloads/txn.go writes
// them).
const (
	// BankInit sets a group's accounts to their first balances.
	BankInit = "init"
	// BankTransfer moves an amount between two accounts of a group.
	BankTransfer = "transfer"
	// BankReadAll reads every account of a group in one transaction.
	BankReadAll = "read-all"
)

// Bank checks bank transfers: every successful read-all of a group of
// accounts (one hash tag, the op's key) sums to the group's total. total is
// the invariant; 0 means "take it from the group's ok init op". A wrong sum
// means a partial transfer was seen (or money was created or lost).
// Every read must name exactly the group's accounts, and no balance may
// be negative (both transfer paths refuse overdrafts).
func Bank(total int64, opts ...Scope) Checker {
	return bank{total: total, o: firstScope(opts)}
}

func (b bank) Name() string { return b.o.name("bank") }

func (b bank) Check(ctx context.Context, in *History) Result {
	calls, err := b.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	return b.judge([]*bankPartial{b.analyze(calls)})
}

// bankPartial is what the bank checker finds in the calls of some of a
// history's groups (the whole history, or a slot partition of it: a
// group's ops are all on its key): counts, the first examples, no op.
type bankPartial struct {
	transfers                                [3]int // ok, fail, info
	readAttempts                             int
	reads, wrong, negative, noTotal, missing int
	wrongReads                               []map[string]any // the first, in index order
	an                                       *placedAnomalies
}

// The scans of bank.analyze that add anomalies, in its order.
const (
	bankScanTransfers = iota
	bankScanReads
)

// analyze reads the groups' init ops, counts the transfers and judges
// every ok read-all of calls.
func (b bank) analyze(calls []call) *bankPartial {
	p := &bankPartial{an: newPlacedAnomalies(b.o.MaxExamples)}
	totals := map[string]int64{}
	var garbageTransfers []call
	accounts := map[string][]string{}
	for _, c := range calls {
		switch c.inv.F {
		case BankInit:
			if !c.ok() {
				continue
			}
			var m map[string]int64
			src := c.comp.Value
			if !c.comp.HasValue() {
				src = c.inv.Value
			}
			if json.Unmarshal(src, &m) != nil {
				continue
			}
			var sum int64
			var names []string
			for k, v := range m {
				sum += v
				names = append(names, k)
			}
			slices.Sort(names)
			totals[c.inv.Key] = sum
			accounts[c.inv.Key] = names
		case BankTransfer:
			switch {
			case c.ok() && c.comp.HasValue() && !bytes.Equal(bytes.TrimSpace(c.comp.Value), bytes.TrimSpace(c.inv.Value)):
				// The reply was garbage, recorded in place of the value.
				p.transfers[2]++
				garbageTransfers = append(garbageTransfers, c)
			case c.ok():
				p.transfers[0]++
			case c.failed():
				p.transfers[1]++
			default:
				p.transfers[2]++
			}
		case BankReadAll:
			p.readAttempts++
		}
	}
	an := p.an
	for i := range garbageTransfers {
		c := &garbageTransfers[i]
		an.add(bankScanTransfers, c.index, "garbage", garbageExample(c, "a transfer script answers 1 or 0"))
	}
	for _, c := range calls {
		if c.inv.F != BankReadAll || !c.ok() {
			continue
		}
		var m map[string]int64
		if strictDecode(c.comp.Value, &m) != nil {
			an.add(bankScanReads, c.index, "garbage", garbageExample(&c, "not a map of account names to integers within int64"))
			continue
		}
		p.reads++
		total, ok := totals[c.inv.Key]
		if b.total != 0 {
			total, ok = b.total, true
		}
		// The accounts read must be exactly the group's accounts: a name no
		// transfer uses is garbage, a missing one hides money.
		if names := accounts[c.inv.Key]; names != nil && !sameNames(m, names) {
			p.missing++
			an.add(bankScanReads, c.index, "wrong-accounts", map[string]any{"index": c.index, "key": c.inv.Key, "read": sortedNames(m), "accounts": names})
		}
		// Both transfer paths refuse overdrafts: a negative balance is a
		// transfer applied twice or half-applied.
		for _, acct := range sortedNames(m) {
			if m[acct] < 0 {
				p.negative++
				an.add(bankScanReads, c.index, "negative-balance", map[string]any{"index": c.index, "key": c.inv.Key, "account": acct, "balance": m[acct]})
			}
		}
		if !ok {
			p.noTotal++
			continue
		}
		var sum int64
		for _, v := range m {
			sum += v
		}
		if sum != total {
			p.wrong++
			if len(p.wrongReads) < b.o.MaxExamples {
				p.wrongReads = append(p.wrongReads, map[string]any{
					"index": c.index, "time_s": sec(c.start), "key": c.inv.Key,
					"sum": sum, "total": total, "balances": m,
				})
			}
		}
	}
	return p
}

// judge merges the partials (of disjoint groups) into the whole's
// analysis and gives the verdict.
func (b bank) judge(parts []*bankPartial) Result {
	m := parts[0]
	if len(parts) > 1 {
		m = &bankPartial{}
		ans := make([]*placedAnomalies, len(parts))
		for i, p := range parts {
			for j := range m.transfers {
				m.transfers[j] += p.transfers[j]
			}
			m.readAttempts += p.readAttempts
			m.reads += p.reads
			m.wrong += p.wrong
			m.negative += p.negative
			m.noTotal += p.noTotal
			m.missing += p.missing
			m.wrongReads = append(m.wrongReads, p.wrongReads...)
			ans[i] = p.an
		}
		slices.SortStableFunc(m.wrongReads, byExampleIndex)
		m.wrongReads = capList(m.wrongReads, b.o.MaxExamples)
		m.an = mergePlacedAnomalies(ans, b.o.MaxExamples)
	}
	transfers := m.transfers
	if m.readAttempts == 0 && transfers[0]+transfers[1]+transfers[2] == 0 {
		// Init ops alone are setup, not the workload's traffic: a run
		// that never attempted a transfer or a read has nothing to judge
		// (one whose attempts all failed stays unknown below).
		return NotApplicable("no transfer and no read-all attempted: the bank workload sent no traffic")
	}
	reads, wrong, examples, an := m.reads, m.wrong, m.wrongReads, m.an.anomalies
	fig := &BankFigures{
		Reads:             reads,
		TransfersOK:       transfers[0],
		TransfersFail:     transfers[1],
		TransfersInfo:     transfers[2],
		WrongTotal:        wrong,
		WrongTotalReads:   nonNil(examples),
		NegativeBalances:  m.negative,
		ReadsMissingAccts: m.missing,
		Anomalies:         an.classes(),
	}
	res := Result{Valid: Valid, Figures: fig}
	switch {
	case wrong > 0 || an.total() > 0:
		res.Valid = Invalid
		if wrong > 0 {
			fig.because("%d reads with a wrong total (%s)", wrong, describeExamples(examples))
		}
		if an.total() > 0 {
			fig.because("%s", an.describe())
		}
	case m.noTotal > 0:
		res.Valid = Unknown
		fig.because("no total: pass it to Bank or record an ok init op per account group")
	case reads == 0:
		res.Valid = Unknown
		fig.because("no successful read-all: nothing to check")
	}
	if res.Valid == Unknown {
		fig.Error = fig.Reason
	}
	return res
}

// BankFigures are the bank checker's figures.
type BankFigures struct {
	Reads             int              `json:"reads"`
	TransfersOK       int              `json:"transfers_ok"`
	TransfersFail     int              `json:"transfers_fail"`
	TransfersInfo     int              `json:"transfers_info"`
	WrongTotal        int              `json:"wrong_total"`
	WrongTotalReads   []map[string]any `json:"wrong_total_reads"`
	NegativeBalances  int              `json:"negative_balances"`
	ReadsMissingAccts int              `json:"reads_missing_accts"`
	Anomalies         Anomalies        `json:"anomalies,omitempty"`
	Verdict
}

// strictDecode unmarshals JSON and refuses numbers that do not fit the
// target (encoding/json already does for int64: no float fallback).
func strictDecode(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return errors.New("no value")
	}
	return json.Unmarshal(raw, v)
}

func sortedNames(m map[string]int64) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// sameNames reports whether m holds exactly the accounts names (sorted).
func sameNames(m map[string]int64, names []string) bool {
	return slices.Equal(sortedNames(m), names)
}

type crossSlot struct{ o Scope }

// CrossSlotTxn is the f of a transaction over keys of different slots,
// sent on purpose (workloads/txn.go).
const CrossSlotTxn = "cross-slot"

// CrossSlot is a fidelity check: every "cross-slot" op (a transaction over
// keys of different slots, sent on purpose) must be refused with CROSSSLOT.
// One that succeeded means the server ran a cross-slot transaction: invalid.
// Ops of other kinds refused with CROSSSLOT are counted apart: they point at
// a workload whose keys were meant to share a slot.
func CrossSlot(opts ...Scope) Checker { return crossSlot{firstScope(opts)} }

func (c crossSlot) Name() string { return c.o.name("cross-slot") }

func (c crossSlot) Check(ctx context.Context, in *History) Result {
	calls, err := c.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	return c.judge([]*crossSlotPartial{c.analyze(calls)})
}

// crossSlotPartial is what the cross-slot checker counts in some calls:
// of the whole history or of a slot partition.
type crossSlotPartial struct {
	attempted, refused, executed, other, elsewhere int
	examples                                       []int64 // the first executed, in index order
}

func (c crossSlot) analyze(calls []call) *crossSlotPartial {
	p := &crossSlotPartial{}
	for _, x := range calls {
		isCross := x.comp != nil && x.comp.Type == history.Fail && strings.HasPrefix(x.comp.ErrorText(), "CROSSSLOT")
		if x.inv.F != CrossSlotTxn {
			if isCross {
				p.elsewhere++
			}
			continue
		}
		p.attempted++
		switch {
		case isCross:
			p.refused++
		case x.ok():
			p.executed++
			if len(p.examples) < c.o.MaxExamples {
				p.examples = append(p.examples, x.index)
			}
		default:
			p.other++
		}
	}
	return p
}

// judge sums the partials and gives the verdict.
func (c crossSlot) judge(parts []*crossSlotPartial) Result {
	m := parts[0]
	if len(parts) > 1 {
		m = &crossSlotPartial{}
		for _, p := range parts {
			m.attempted += p.attempted
			m.refused += p.refused
			m.executed += p.executed
			m.other += p.other
			m.elsewhere += p.elsewhere
			m.examples = append(m.examples, p.examples...)
		}
		slices.Sort(m.examples)
		m.examples = capList(m.examples, c.o.MaxExamples)
	}
	attempted, refused, executed, examples := m.attempted, m.refused, m.executed, m.examples
	fig := &CrossSlotFigures{
		Attempted:           attempted,
		RefusedCrossslot:    refused,
		Executed:            executed,
		ExecutedIndices:     nonNil(examples),
		OtherOutcome:        m.other,
		CrossslotOnOtherOps: m.elsewhere,
	}
	res := Result{Valid: Valid, Figures: fig}
	switch {
	case executed > 0:
		res.Valid = Invalid
		fig.because("%d cross-slot transactions executed (ops %v)", executed, capList(examples, 3))
	case attempted == 0:
		// The workload's mix sends cross-slot ops rarely (2%): a short run
		// may hold none, which is nothing to judge, not a missing answer.
		return NotApplicable("no cross-slot op in the history: the workload never sent one")
	case refused == 0:
		res.Valid = Unknown
		fig.because("no cross-slot op was answered (%d attempted): nothing to judge", attempted)
	}
	return res
}

// CrossSlotFigures are the cross-slot checker's figures.
type CrossSlotFigures struct {
	Attempted           int     `json:"attempted"`
	RefusedCrossslot    int     `json:"refused_crossslot"`
	Executed            int     `json:"executed"`
	ExecutedIndices     []int64 `json:"executed_indices"`
	OtherOutcome        int     `json:"other_outcome"`
	CrossslotOnOtherOps int     `json:"crossslot_on_other_ops"`
	Verdict
}

// The figures this checker explains (describe.go).
var _ = ExplainFigures(map[string]string{
	"wrong_total":       "reads of all accounts whose sum differs from the total: a transfer was applied in part or lost",
	"wrong_total_reads": "each row is a read of all accounts whose balances do not add up to the total",
	"negative_balances": "account balances went below zero, which no transfer allows",
	"executed":          "multi-key commands on keys in different slots executed although Redis Cluster must refuse them with CROSSSLOT",
	"executed_indices":  "op indexes of multi-key commands that executed across slots",
})
