// Package all registers every workload that lives in its own folder: each
// registers itself when imported (its init calls workloads.Register), as
// database/sql drivers do, and this is the one list of them. Whatever
// looks workloads up by name (harness, and through it cmd/redline and the
// suite) imports this package for its effect:
//
//	import _ "github.com/redline-dev/redline/workloads/all"
//
// A new workload is its folder and one line here.
package all

import (
	_ "github.com/redline-dev/redline/workloads/lock"
	_ "github.com/redline-dev/redline/workloads/queue"
	_ "github.com/redline-dev/redline/workloads/ttl"
)
