// Package browsertest drives a real headless Chromium through the console in tests, against a
// history recorded by the demo.
//
// A test binary that uses it calls Main from its TestMain: one browser serves the whole binary
// (it starts on first use and stops after the tests), and each test gets a fresh tab in a browser
// context of its own (NewTab), so cookies and sessions never leak between tests. DemoHistory runs
// the demo once per binary and hands every test the same recorded history.
//
// The browser is found as BURSAR_CHROMIUM, chromium or chromium-browser on PATH. Without one the
// tests skip, naming `apt-get install chromium`; with BURSAR_REQUIRE_BROWSER=1 (set by .ci/run)
// they fail instead, so CI never passes by skipping them. Screenshots go to BURSAR_SCREENSHOTS,
// or testdata/screenshots beside the test (ignored by git).
//
// The demo opens the process's one embedded ClickHouse itself (libchdb keeps the first data path
// for the life of the process), so a binary that uses DemoHistory must not open another store
// first: it cannot share a binary with tests that call storetest.Main. That is why the console's
// browser tests (browser_*_test.go) live here, in this package's test binary, and not beside the
// console's own tests, whose TestMain opens a store of their own.
//
// The browser tests drive every page of the console (internal/console) over the demo's history,
// through the data-test attributes its package doc lists: each page's figures equal the API's
// rows for the same report; Approve on a plan the arbiter's budgets hold, with the console wired
// to the arbiter system as `arbiter run` wires it (internal/system, on an embedded NATS, Slack on
// a fake, slacktest), makes the sim actuator apply it once and shows it decided in Slack; a
// reader gets no button and a forged POST is refused; a hold rejected in Slack is refused on the
// console; and the three clicks from the fleet page to a decision's cause. Each page's
// screenshot is written.
package browsertest
