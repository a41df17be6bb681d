package workloads_test

// The tests of this package see every registered workload, those in
// their own folders too (registered when workloads/all is imported).
import _ "github.com/redline-dev/redline/workloads/all"
