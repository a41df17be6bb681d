// Package browsertest drives a real headless Chromium (Debian's
// chromium-headless-shell, installed by scripts/install-deps) over reports
// and the results browser: plots render with data, pages log no error,
// links resolve and filters narrow the runs table. The tests fail, never
// skip, when the browser is missing. Screenshots go to
// $REDLINE_ARTIFACTS/browser (default: the OS temp directory).
package browsertest
