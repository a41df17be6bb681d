package results

// SetMaxReportSamples sets how many calls a bounded report's plots draw at
// most, for a test; it returns the value before.
func SetMaxReportSamples(n int) int {
	before := maxReportSamples
	maxReportSamples = n
	return before
}
