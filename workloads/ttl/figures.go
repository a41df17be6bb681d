package ttl

import "github.com/redline-dev/redline/checker"

// Figures are the ttl checker's figures, by their names in results.json
// (written as the map they replaced wrote them: the conditional ones
// omitted when empty).
type Figures struct {
	// ClockSlackMs is the stated clock-uncertainty bound (ClockSlack).
	ClockSlackMs int64 `json:"clock_slack_ms"`
	// Ops by kind and outcome.
	Sets       int `json:"sets"`
	SetsOK     int `json:"sets_ok"`
	SetsFail   int `json:"sets_fail"`
	SetsInfo   int `json:"sets_info"`
	Pexpires   int `json:"pexpires"`
	PexpiresOK int `json:"pexpires_ok"`
	Persists   int `json:"persists"`
	PersistsOK int `json:"persists_ok"`
	Reads      int `json:"reads"`
	ReadsOK    int `json:"reads_ok"`
	Finals     int `json:"finals"`
	FinalsOK   int `json:"finals_ok"`
	// Keys (and hash fields) observed; pairs of observations judged or skipped; anomalies by classification.
	Keys                        int `json:"keys"`
	PairsJudged                 int `json:"pairs_judged"`
	PairsSkippedConcurrentWrite int `json:"pairs_skipped_concurrent_write"`
	AnomaliesClock              int `json:"anomalies_clock"`
	AnomaliesAfterFailover      int `json:"anomalies_after_failover"`
	// AnomaliesAfterPowerLoss: across a power cut of a node that served
	// one observation (omitted when none).
	AnomaliesAfterPowerLoss int `json:"anomalies_after_power_loss,omitempty"`
	AnomaliesUnexplained    int `json:"anomalies_unexplained"`
	// HashFieldOps counts the ops on hash fields; HashFieldExpiry says whether that part was judged.
	HashFieldOps    int    `json:"hash_field_ops"`
	HashFieldExpiry string `json:"hash_field_expiry,omitempty"`
	// SkippedMalformed ops could not be read (Malformed: the first).
	SkippedMalformed int      `json:"skipped_malformed,omitempty"`
	Malformed        []string `json:"malformed,omitempty"`
	// Anomalies by class ({count, examples}), AnomalyTypes in the order
	// first seen.
	Anomalies    checker.Anomalies `json:"anomalies,omitempty"`
	AnomalyTypes []string          `json:"anomaly_types,omitempty"`
	// Reason is the verdict in words (the "why" figure); Error says why
	// there is none (unknown).
	Reason string `json:"why"`
	Error  string `json:"error,omitempty"`
}

// Why is the verdict in words.
func (f *Figures) Why() string { return f.Reason }

// A stored ttl result reads back as Figures.
var _ = checker.RegisterFigures("ttl", func() checker.Figures { return new(Figures) }, "sets")

// FlaggedAnomalies are the anomalies by class (checker.AnomalyFigures).
func (f *Figures) FlaggedAnomalies() checker.Anomalies { return f.Anomalies }
