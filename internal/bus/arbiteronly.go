package bus

// SlackClickSubject is where a standby arbiter hands the leader a Slack click that reached it
// (the HTTP endpoint is served by every arbiter, and a Service picks either pod). Only arbiters
// reach it: it lives in the arbiter's account, which only the arbiter role's users are in, and no
// other role's account imports it (imports), so no other key can forge a click or read one. No
// stream's subjects cover it, so a request there is never stored.
const SlackClickSubject = "bursar.arbiter.slack.click"
