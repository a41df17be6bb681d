package queue

import "github.com/redline-dev/redline/history"

// The queue workload's kinds of queue (the workload writes them in
// every invocation; the checker reads them).
const (
	// List: a list (LPUSH to enqueue, LMOVE/BLMOVE to a processing
	// list to deliver, LREM from it to acknowledge: the reliable-queue
	// pattern).
	List = "list"
	// Stream: a stream with one consumer group (XADD, XREADGROUP,
	// XACK, XAUTOCLAIM).
	Stream = "stream"
)

// The queue workload's ops, by their "f" (the workload writes them).
const (
	// Enqueue adds a message unique per run.
	Enqueue history.OpName = "enqueue"
	// Dequeue delivers messages to a consumer.
	Dequeue history.OpName = "dequeue"
	// Claim takes over messages another consumer left (XAUTOCLAIM).
	Claim history.OpName = "claim"
	// Ack acknowledges a delivered message.
	Ack history.OpName = "ack"
	// Drain reads the whole queue once traffic has ended.
	Drain history.OpName = "drain"
)

// Msg is one message: its body, unique per run, and on a stream the
// entry id the server gave it.
type Msg struct {
	Msg string `json:"msg"`
	ID  string `json:"id,omitempty"`
}

// Pending is one entry of a stream group's pending entries list
// (XPENDING): delivered to Consumer Deliveries times, not acknowledged.
type Pending struct {
	ID         string `json:"id"`
	Consumer   string `json:"consumer"`
	Deliveries int64  `json:"deliveries"`
}

// Value is the value of a queue op (one type for every op; each uses
// its fields):
//   - enqueue: invoke {kind, msg}; ok adds id on a stream (XADD's reply).
//   - dequeue, claim: invoke {kind, consumer}; ok adds msgs, the messages
//     delivered (none: the queue was empty / nothing to claim).
//   - ack: invoke {kind, consumer, msgs: [the one message]}; ok adds
//     acked, LREM's or XACK's count (1 removed from the processing list /
//     the pending entries, 0 it was not there).
//   - drain (final, after healing; reads only): ok on a list {queue,
//     processing} (LRANGE of both), on a stream {entries (XRANGE - +),
//     last_delivered (the group's last-delivered-id), pending (XPENDING)}.
type Value struct {
	Kind     string `json:"kind"`
	Msg      string `json:"msg,omitempty"`
	ID       string `json:"id,omitempty"`
	Consumer string `json:"consumer,omitempty"`
	Msgs     []Msg  `json:"msgs,omitempty"`
	Acked    *int64 `json:"acked,omitempty"`

	Queue         []string  `json:"queue,omitempty"`
	Processing    []string  `json:"processing,omitempty"`
	Entries       []Msg     `json:"entries,omitempty"`
	LastDelivered string    `json:"last_delivered,omitempty"`
	Pending       []Pending `json:"pending,omitempty"`
}
