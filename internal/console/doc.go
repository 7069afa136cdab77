// Package console is Bursar's web console: server-rendered pages and a JSON API under /api/v1/
// that show what the arbiter did and why, and let an approver decide held plans.
//
// Every figure comes from the reports (report.Reporter.Run, answered as report.Answer): the
// console runs no query and makes no estimate of its own, so a page shows what `report X -o json`
// prints for the same window.
//
// # Pages
//
//	/                  fleet: each workload by location, GPU type and market; refreshes every 10 s
//	/decisions         the decisions' timeline (?workload=, ?window=), with the workload's $/Mtok by day
//	/decisions/{plan}  one plan: its actions, what became of them, and the event that caused it
//	/approvals         holds pending now (Approve / Reject for approvers) and decided ones
//	/budgets           burn-down per policy against its limit and thresholds, with the forecast
//	/costs             cost, savings, $/Mtok, idle GPUs by ?aggregate= over ?window=; jobs
//	/login             a console token starts a session
//
// # API
//
//	GET  /api/v1/reports/{name}?window=7d|24h|today|yesterday|thismonth|lastmonth
//	                  &since=&until=&aggregate=workload,gpu&filter=provider:aws&basis=&plan=
//	GET  /api/v1/fleet, /api/v1/decisions, /api/v1/decisions/{plan}, /api/v1/holds, /api/v1/budgets
//	GET  /api/v1/holds/open              the holds pending now, and can_decide for the caller
//	POST /api/v1/holds/{plan}/approve    and /reject
//
// A malformed parameter gets 400 with {"error": "..."} naming it (window=, aggregate=, filter=).
//
// # Who may do what
//
// Reading needs no identity. Approving or rejecting needs one that is among the hold's approvers
// (a Slack user id as the budget policies list them, or an e-mail Slack resolves); the Approvals
// owner checks membership with the same rules as a Slack click, and the page offers the buttons
// only to a listed identity. An identity is proved by one of:
//
//   - A console token: `arbiter console token --as U0123ABC` (IssueToken) records the token's
//     SHA-256 in <data-dir>/console/tokens (0600, "identity sha256-hex" per line) and prints the
//     token once. POST /login with it in the form's token field starts a session cookie
//     (HttpOnly, SameSite=Strict, Secure under TLS) signed with <data-dir>/console/session.key;
//     scripts send it as "Authorization: Bearer <token>" instead. Tokens never appear in URLs,
//     logs or errors.
//   - An authenticating proxy: Access.TrustedHeader (e.g. X-Forwarded-Email) names the user, read
//     only from Access.TrustedProxies.
//
// Any address but loopback needs TLS (Access.TLSCert and TLSKey): New refuses otherwise, and Serve
// refuses a non-loopback listener without it. Writes made with a browser's ambient credentials
// (cookie, proxy header) must come from this console's origin (Origin, else Referer) and carry the
// session's CSRF token (form field csrf, or header X-CSRF-Token); a forged POST gets 403 and
// changes nothing. A refused decision (not an approver, no longer pending, past its deadline)
// changes nothing and says why: 403 (ErrNotApprover) or 409 (ErrNotPending, ErrTimedOut) with the
// reason in the API, the same text on the page.
//
// # Stable test hooks
//
// Browser tests click and read these data-test attributes; keep them stable:
//
//	nav-fleet, nav-decisions, nav-approvals, nav-budgets, nav-costs, login, logout, identity
//	meta-<report>, window, currency, basis, notes-<report>, empty, error, window-select
//	table-<report> (a report's table), table-mtok, table-fleet, fleet-<workload>-<location>-<gpu>-<market>,
//	fleet-updated
//	mtok-<workload>       fleet page: the workload's $/Mtok, linking to its decisions yesterday
//	table-mtok-days, mtok-day-<YYYY-MM-DD>, workload-filter, table-decisions
//	plan-<id>             a plan's link (decisions timeline, pending holds)
//	decision, plan-id, cause, cause-kind, cause-id, cause-at, cause-detail, table-actions
//	table-open, hold-<plan>, approve-<plan>, reject-<plan>, no-pending, table-holds, held-<plan>,
//	decision-done, decision-error
//	chart-<policy>        budgets page: a policy's burn-down chart
//	aggregate-select, section-<report> (costs page)
//	login-form, token, login-submit, login-error
//
// Table cells carry data-col="<column>" with the value written as the API's JSON writes it.
package console
