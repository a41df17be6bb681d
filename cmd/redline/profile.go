package main

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// startProfiles writes a developer's profiles of this process when asked
// by the environment (issue 42's measurements of big checks):
// REDLINE_CPUPROFILE names the CPU profile's file, REDLINE_HEAPPROFILE the
// heap profile's, written whenever the live heap (at the last collection)
// is a tenth above its last profile's, or, every few seconds, within a
// twentieth of the highest seen: a heap profile lags a collection, so
// the write made as the heap first peaks shows the heap before it; the
// later ones show the plateau, which is what bounds a check. The
// returned func ends them.
func startProfiles(stderr io.Writer) func() {
	var stops []func()
	if name := os.Getenv("REDLINE_CPUPROFILE"); name != "" {
		f, err := os.Create(name)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "redline: REDLINE_CPUPROFILE: %v\n", err)
		} else {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if name := os.Getenv("REDLINE_HEAPPROFILE"); name != "" {
		done := make(chan struct{})
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			var last, peak uint64
			var lastAt time.Time
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				metrics.Read(sample)
				live := sample[0].Value.Uint64()
				peak = max(peak, live)
				plateau := live >= peak-peak/20 && time.Since(lastAt) >= 5*time.Second
				if live < last+last/10 && !plateau {
					continue
				}
				last, lastAt = live, time.Now()
				if err := writeHeapProfile(name); err != nil {
					fmt.Fprintf(stderr, "redline: REDLINE_HEAPPROFILE: %v\n", err)
					return
				}
			}
		}()
		stops = append(stops, func() { close(done); <-finished })
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// writeHeapProfile replaces name with the heap's profile as of the last
// collection, through a temporary file so that a reader never sees half.
func writeHeapProfile(name string) error {
	tmp := name + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
