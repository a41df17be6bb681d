package lock

import "github.com/redline-dev/redline/checker"

// Figures are the lock checker's figures, by their names in results.json
// (written as the map they replaced wrote them: the conditional ones
// omitted when empty).
type Figures struct {
	// Acquires and releases by outcome; clears are the final DELs.
	Acquires         int `json:"acquires"`
	AcquiresOK       int `json:"acquires_ok"`
	AcquiresFail     int `json:"acquires_fail"`
	AcquiresInfo     int `json:"acquires_info"`
	Releases         int `json:"releases"`
	ReleasesOK       int `json:"releases_ok"`
	ReleasesNotOwner int `json:"releases_not_owner"`
	ReleasesFail     int `json:"releases_fail"`
	ReleasesInfo     int `json:"releases_info"`
	Clears           int `json:"clears"`
	// Locks judged and their certain holds.
	Locks int `json:"locks"`
	Holds int `json:"holds"`
	// DoubleHolds: two certain holds of one lock overlapped, classified.
	DoubleHolds                  int `json:"double_holds"`
	DoubleHoldsAfterFailoverLoss int `json:"double_holds_after_failover_loss"`
	DoubleHoldsUnexplained       int `json:"double_holds_unexplained"`
	// DoubleHoldsAfterClockFault: the two holds overlapped across a clock
	// fault on a node that granted them (omitted when none).
	DoubleHoldsAfterClockFault int `json:"double_holds_after_clock_fault,omitempty"`
	// DoubleHoldsAfterPowerLoss: the node that granted the first had its
	// power cut in between (omitted when none).
	DoubleHoldsAfterPowerLoss int `json:"double_holds_after_power_loss,omitempty"`
	DoubleHoldsInFaultWindow  int `json:"double_holds_in_fault_window"`
	DoubleHoldsWaitSatisfied  int `json:"double_holds_wait_satisfied"`
	FenceRegressions          int `json:"fence_regressions"`
	// The fence regressions classified as the double holds are (omitted
	// when none).
	FenceRegressionsAfterFailoverLoss int `json:"fence_regressions_after_failover_loss,omitempty"`
	FenceRegressionsAfterPowerLoss    int `json:"fence_regressions_after_power_loss,omitempty"`
	FenceRegressionsUnexplained       int `json:"fence_regressions_unexplained,omitempty"`
	ReleasedAnothersLock              int `json:"released_anothers_lock"`
	// LostWhileHeld: reported, not judged.
	LostWhileHeld           int              `json:"lost_while_held"`
	LostWhileHeldAfterFault int              `json:"lost_while_held_after_fault"`
	LostWhileHeldSamples    []map[string]any `json:"lost_while_held_samples,omitempty"`
	// Faults is the fault windows of the run.
	Faults int `json:"faults"`
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

// A stored lock result reads back as Figures.
var _ = checker.RegisterFigures("lock", func() checker.Figures { return new(Figures) }, "acquires")

// FlaggedAnomalies are the anomalies by class (checker.AnomalyFigures).
func (f *Figures) FlaggedAnomalies() checker.Anomalies { return f.Anomalies }
