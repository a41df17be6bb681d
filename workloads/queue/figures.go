package queue

import "github.com/redline-dev/redline/checker"

// Figures are the queue checker's figures, by their names in results.json
// (written as the map they replaced wrote them: the conditional ones
// omitted when empty).
type Figures struct {
	// Ops by kind and outcome; Delivered counts the messages delivered.
	Enqueues     int `json:"enqueues"`
	EnqueuesOK   int `json:"enqueues_ok"`
	EnqueuesFail int `json:"enqueues_fail"`
	EnqueuesInfo int `json:"enqueues_info"`
	Dequeues     int `json:"dequeues"`
	DequeuesOK   int `json:"dequeues_ok"`
	Claims       int `json:"claims"`
	ClaimsOK     int `json:"claims_ok"`
	Acks         int `json:"acks"`
	AcksOK       int `json:"acks_ok"`
	Drains       int `json:"drains"`
	DrainsOK     int `json:"drains_ok"`
	Delivered    int `json:"delivered"`
	// Queues judged; Lost acknowledged messages, classified.
	Queues                int `json:"queues"`
	Lost                  int `json:"lost"`
	LostAfterFailoverLoss int `json:"lost_after_failover_loss"`
	LostUnexplained       int `json:"lost_unexplained"`
	LostWaitSatisfied     int `json:"lost_wait_satisfied"`
	Unexpected            int `json:"unexpected"`
	// Reported, not judged.
	Duplicates       int `json:"duplicates"`
	Recovered        int `json:"recovered"`
	PendingAtEnd     int `json:"pending_at_end"`
	AcksLost         int `json:"acks_lost"`
	AcksFoundNothing int `json:"acks_found_nothing"`
	IDRegressions    int `json:"id_regressions"`
	// Faults is the fault windows of the run; UndrainedQueues the queues with no successful final drain.
	Faults          int `json:"faults"`
	UndrainedQueues int `json:"undrained_queues"`
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

// A stored queue result reads back as Figures.
var _ = checker.RegisterFigures("queue", func() checker.Figures { return new(Figures) }, "enqueues")

// FlaggedAnomalies are the anomalies by class (checker.AnomalyFigures).
func (f *Figures) FlaggedAnomalies() checker.Anomalies { return f.Anomalies }
