package reporttest

import (
	"fmt"

	"github.com/bursar-dev/bursar/internal/store"
)

// Reasons the estate's plans give, in turn; the budget plans that fall on (slot + series) % 10
// == 4 need approval.
const planReasons = "['reclaim', 'cheaper_offer', 'demand_up', 'demand_down', 'budget']"

// historyInserts are the arbiter's plans, their actions' steps, the reclaim notices behind the
// reclaim plans and the jobs. Holds decided are approved, rejected or timed out in turn, ten
// minutes on; those of the last hour are still pending.
func (e Estate) historyInserts(st *store.Store) []insert {
	n := int64(e.Series)
	endMS := e.End.UnixMilli()
	d0 := endMS - int64(e.Days)*dayMS
	step := dayMS / int64(e.PlansPerDay)
	plans := fmt.Sprintf(`SELECT number AS pn, intDiv(number, %[1]d) AS j, number %% %[1]d AS s,
		toInt64(%[2]d + j * %[3]d + intDiv(s * %[3]d, %[1]d)) AS at_ms, intDiv(at_ms - %[2]d, %[4]d) AS h,
		(j + s) %% 5 AS ri, %[5]s[ri + 1] AS reason, toInt64(if(ri < 3, 1, -1)) AS delta,
		if(delta > 0, 'launch', 'drain') AS kind, (j + s) %% 10 = 4 AS needs,
		lower(hex(sipHash64('estate.plan', pn))) AS plan_id, lower(hex(sipHash64('estate.action', pn))) AS action_id,
		%[6]s, %[7]s AS p
		FROM numbers(%[8]d)`, n, d0, step, hourMS, planReasons, seriesCols(), price("h"), n*int64(e.Days)*int64(e.PlansPerDay))
	steps := "id, at, version, workload, action_id, plan_id, status, kind, location, offer, market, replicas, reason, actor, detail"
	jobs := int64(e.Jobs)
	return []insert{
		{"plan_decided", fmt.Sprintf(`INSERT INTO %s (id, at, version, workload, plan_id, actions, usd_per_hour_before,
			usd_per_hour_after, needs_approval)
			SELECT plan_id, fromUnixTimestamp64Milli(at_ms, 'UTC'), '1', workload, plan_id,
				[(action_id, kind, location, offer, market, ready + delta, delta, reason, needs)], ready * p, (ready + delta) * p, needs
			FROM (%s)`, st.Table("plan_decided"), plans)},
		{"action_updated", fmt.Sprintf(`INSERT INTO %s (%s)
			SELECT lower(hex(sipHash64('estate.step1', pn))), fromUnixTimestamp64Milli(at_ms + 1000, 'UTC'), '1', workload, action_id,
				plan_id, if(needs, 'awaiting_approval', 'applied'), kind, location, offer, market, ready + delta, reason,
				if(needs, 'bursar', 'arbiter/estate'), if(needs, 'over the budget', '')
			FROM (%s)`, st.Table("action_updated"), steps, plans)},
		{"action_updated (decided holds)", fmt.Sprintf(`INSERT INTO %s (%s)
			SELECT lower(hex(sipHash64('estate.step2', pn))), fromUnixTimestamp64Milli(at_ms + 600000, 'UTC'), '1', workload, action_id,
				plan_id, ['approved', 'rejected', 'rejected'][j %% 3 + 1], kind, location, offer, market, ready + delta, reason,
				['U0APPROVER', 'U0APPROVER', 'timeout'][j %% 3 + 1], ''
			FROM (%s) WHERE needs AND at_ms < %d`, st.Table("action_updated"), steps, plans, endMS-hourMS)},
		{"capacity_reclaimed", fmt.Sprintf(`INSERT INTO %s (id, at, version, provider, region, location, zone, instance, node, kind,
			notice_at, deadline, source)
			SELECT lower(hex(sipHash64('estate.reclaim', pn))), fromUnixTimestamp64Milli(at_ms - 120000, 'UTC') AS t, '1', provider,
				region, location, '', concat('i-', toString(pn)), concat('n-', toString(pn)), 'interruption', t, t + toIntervalSecond(120), 'estate'
			FROM (%s) WHERE ri = 0`, st.Table("capacity_reclaimed"), plans)},
		{"job_state", fmt.Sprintf(`INSERT INTO %s (id, at, version, job, team, state, work_s, work_done_s, deadline, overhead_s,
			location, market, gpus_per_replica, usd_per_hour, on_demand_usd_per_hour, usd_spent, preemptions, lost_s, finished_at, reason)
			SELECT lower(hex(sipHash64('estate.job', number))), fromUnixTimestamp64Milli(at_ms, 'UTC') AS t, '1',
				concat('job', leftPad(toString(s), 4, '0')), concat('team', leftPad(toString(s %% 20), 2, '0')),
				if(k = 36, 'finished', 'running'), 36 * 3600, k * 3600, fromUnixTimestamp64Milli(start_ms + 48 * %[2]d, 'UTC'), 600,
				location, market, 8, p, od, k * p, 0, 0, if(k = 36, t, NULL), ''
			FROM (SELECT number, intDiv(number, %[3]d) AS k, number %% %[3]d AS s,
				toInt64(%[4]d + (s %% %[5]d) * %[6]d + (s %% 24) * %[2]d) AS start_ms, start_ms + k * %[2]d AS at_ms,
				%[7]s, %[8]s AS p FROM numbers(%[9]d)) WHERE at_ms < %[10]d`,
			st.Table("job_state"), hourMS, jobs, d0, e.Days, dayMS, seriesCols(), price("k"), jobs*37, endMS)},
	}
}
