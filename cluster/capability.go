package cluster

// Capability names one of the optional fault interfaces of this package,
// so that a runtime can say what its clusters can do before it starts one
// (a fault that is impossible on the chosen runtime is refused before
// anything starts, exit 254). The interfaces stay the truth: a runtime's
// capabilities are read off its cluster type's methods (CapabilitiesOf),
// so a runtime that gains a method gains the capability, and the fault
// with it, without another list to update.
type Capability string

// The capabilities, one per fault interface.
const (
	CanKill      Capability = "kill"      // Killer
	CanPause     Capability = "pause"     // Pauser
	CanPartition Capability = "partition" // Partitioner
	CanClock     Capability = "clock"     // Clock
	CanShape     Capability = "shape"     // Shaper
	CanGrow      Capability = "grow"      // Grower
	CanDelay     Capability = "delay"     // Delayer
	CanDrop      Capability = "drop"      // Dropper
	CanThrottle  Capability = "throttle"  // Throttler
	CanOneWay    Capability = "one-way"   // OneWayPartitioner
	CanLimitCPU  Capability = "cpu"       // CPULimiter
	CanPowerCut  Capability = "power"     // PowerCutter
	CanDiskFault Capability = "disk"      // DiskFaulter
)

// CapabilitiesOf lists the fault interfaces c implements, in the order of
// the constants above. c may be a typed nil pointer (a runtime describes
// its cluster type before it starts a cluster: no method is called).
func CapabilitiesOf(c any) []Capability {
	var out []Capability
	if _, ok := c.(Killer); ok {
		out = append(out, CanKill)
	}
	if _, ok := c.(Pauser); ok {
		out = append(out, CanPause)
	}
	if _, ok := c.(Partitioner); ok {
		out = append(out, CanPartition)
	}
	if _, ok := c.(Clock); ok {
		out = append(out, CanClock)
	}
	if _, ok := c.(Shaper); ok {
		out = append(out, CanShape)
	}
	if _, ok := c.(Grower); ok {
		out = append(out, CanGrow)
	}
	for _, x := range []struct {
		ok  bool
		cap Capability
	}{
		{is[Delayer](c), CanDelay}, {is[Dropper](c), CanDrop}, {is[Throttler](c), CanThrottle},
		{is[OneWayPartitioner](c), CanOneWay}, {is[CPULimiter](c), CanLimitCPU},
		{is[PowerCutter](c), CanPowerCut}, {is[DiskFaulter](c), CanDiskFault},
	} {
		if x.ok {
			out = append(out, x.cap)
		}
	}
	return out
}

func is[T any](c any) bool { _, ok := c.(T); return ok }
