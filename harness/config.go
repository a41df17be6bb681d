// Package harness runs one test and owns its run directory end to end.
// Run(ctx, Plan) gets the cluster from the plan's Start (it never picks a
// runtime itself: the caller starts a cluster.Cluster value), carries the
// run in one Session, writes run.log, config.json (once, complete) and the
// admin journal, and hands the traffic to one of two drivers, picked by
// the kind of the run's workloads (DriverFor):
// the history driver (HistoryDriver, Execute: clients drive workloads
// while a nemesis injects faults, every operation is recorded, and at the
// end the checkers judge the history) or the load driver (LoadDriver over
// harness/bench: the kv workload open or closed loop, measured in
// histograms, not recorded). Either stores nodes/, results.json and the
// report (rundir.go). The caller reads the Outcome.
package harness

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/redline-dev/redline/nemesis"
	"github.com/redline-dev/redline/workloads/clientlib"
	"github.com/redline-dev/redline/workloads/kv"
)

// Duration is a time.Duration that reads and writes as "10s" in JSON.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("duration must be a string like \"10s\": %s", b)
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// D converts to time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Config is every parameter of a test; it is stored as config.json so a
// run can be understood, re-checked and repeated.
type Config struct {
	TestName         string            `json:"test_name"`
	Target           string            `json:"target"`
	Addrs            []string          `json:"addrs,omitempty"`
	Nodes            int               `json:"nodes"`
	Replicas         int               `json:"replicas"`
	Workloads        []string          `json:"workloads"`
	Nemesis          []string          `json:"nemesis"`
	NemesisInterval  Duration          `json:"nemesis_interval"`
	PartitionClients bool              `json:"partition_clients,omitempty"`
	TimeLimit        Duration          `json:"time_limit"`
	Concurrency      int               `json:"concurrency"`
	Rate             float64           `json:"rate"`
	Keys             int               `json:"keys"`
	Wait             int               `json:"wait"`
	WaitTimeout      Duration          `json:"wait_timeout"`
	Seed             int64             `json:"seed"`
	NodeTimeout      Duration          `json:"node_timeout"`
	OpTimeout        Duration          `json:"op_timeout"`
	CheckTimeout     Duration          `json:"check_timeout"`
	KeyPrefix        string            `json:"key_prefix"`
	Image            string            `json:"image,omitempty"`
	Runtime          string            `json:"runtime,omitempty"`    // "" or "docker" (this host's containers), "kubernetes"
	Namespace        string            `json:"namespace,omitempty"`  // kubernetes: where the cluster is
	Kubeconfig       string            `json:"kubeconfig,omitempty"` // kubernetes: "" in a pod (its service account)
	Selector         string            `json:"selector,omitempty"`   // kubernetes: existing pods to test as a guest
	Announce         string            `json:"announce,omitempty"`   // kubernetes: "hostname", or "" for pod IPs
	ResultsDir       string            `json:"results_dir"`
	TestCount        int               `json:"test_count"`
	TestIndex        int               `json:"test_index,omitempty"`
	Versions         map[string]string `json:"versions,omitempty"`
	Started          time.Time         `json:"started"`
	Command          []string          `json:"command,omitempty"`
	// Bench marks a load test: only throughput, latency and recovery
	// time are measured, correctness is not checked.
	Bench bool `json:"bench,omitempty"`
	// ConnPerWorker: a closed-loop bench gives each worker its own
	// connection to each node instead of sharing one per node
	// (--conn-per-worker).
	ConnPerWorker bool `json:"conn_per_worker,omitempty"`

	// ServerBinary is the redis-server build tested (--server-binary),
	// with its own `--version` line and the file's SHA-256.
	ServerBinary  string   `json:"server_binary,omitempty"`
	ServerVersion string   `json:"server_version,omitempty"`
	ServerSHA256  string   `json:"server_sha256,omitempty"`
	ServerConfig  []string `json:"server_config,omitempty"` // --server-config settings of every node
	// KV is the kv load workload of a bench (ratio, sizes, key pattern,
	// pipeline); History keeps bench's compressed op log.
	KV      *kv.Config `json:"kv,omitempty"`
	History bool       `json:"history,omitempty"`
	// How redline authenticates to an external cluster: the ACL user and
	// where the password came from ("env REDISCLI_AUTH", "file PATH"),
	// never the password itself; TLS with its CA, cert and key files.
	User         string `json:"user,omitempty"`
	PasswordFrom string `json:"password_from,omitempty"`
	TLS          bool   `json:"tls,omitempty"`
	TLSCA        string `json:"tls_ca,omitempty"`
	TLSCert      string `json:"tls_cert,omitempty"`
	TLSKey       string `json:"tls_key,omitempty"`
	// Client is the client library under test (--client; "" or
	// "redline": redline's own exactly-once client); ClientInfo is what
	// it said of itself: library, version, its own retries.
	Client     string          `json:"client,omitempty"`
	ClientInfo *clientlib.Info `json:"client_library,omitempty"`
	// RestoreRoles: the end phase switches failovers redline caused back.
	RestoreRoles bool `json:"restore_roles,omitempty"`
	// Schedule is the fault schedule this run followed instead of its
	// seed's plan (`run --replay`, `shrink`): steps at their slots. A
	// replay of this run follows it again.
	Schedule []nemesis.ScheduledStep `json:"schedule,omitempty"`
	// ReplayOf is the run directory this run replayed (--replay).
	ReplayOf string `json:"replay_of,omitempty"`
	// RequireCoverage makes a requested fault kind that produced no
	// evidence an unknown verdict (--require-coverage), for CI.
	RequireCoverage bool `json:"require_coverage,omitempty"`
	// Capacity is a bench's capacity search (--slo) or capacity-change
	// plan (--plan).
	Capacity *CapacityConfig `json:"capacity,omitempty"`
	// Thresholds are a bench's pass/fail bounds as given
	// ('p99<=2ms,errors<=0.1%'); the run's figures against them are in
	// bench.json.
	Thresholds string `json:"thresholds,omitempty"`
	// RunCount is how many times a bench runs its load on the cluster,
	// one run after another (--run-count, as memtier's); bench.json is
	// their aggregate, with each run's figures (0 or 1: one run).
	RunCount int `json:"run_count,omitempty"`
	// Generators > 0 runs a bench's load from that many generators (pods
	// of a Job, containers, local processes), each at its share of the
	// rate from one coordinated start, merged into one result
	// (harness/bench/merge.go).
	Generators int `json:"generators,omitempty"`
}

// CapacityConfig is what `bench --slo` and `bench --plan` were given.
type CapacityConfig struct {
	// SLO is the objectives as given ('p99<=2ms,errors<=0.1%').
	SLO string `json:"slo,omitempty"`
	// Step is each search step's measured length, Warmup the unmeasured
	// traffic before it; Start the search's first rate (ops/s).
	Step    Duration `json:"step,omitempty"`
	Warmup  Duration `json:"warmup,omitempty"`
	Start   float64  `json:"start,omitempty"`
	MaxRate float64  `json:"max_rate,omitempty"` // the search's ceiling (0: none)
	// Plan is the capacity changes at chosen times, as given.
	Plan string `json:"plan,omitempty"`
}
