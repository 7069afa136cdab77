package arbiter

import "github.com/prometheus/client_golang/prometheus"

// metrics are the arbiter's Prometheus series.
type metrics struct {
	decisions *prometheus.CounterVec // by trigger
	actions   *prometheus.CounterVec // by kind and outcome
	reaction  prometheus.Histogram   // reclaim notice received → replacement at the actuator
	planDur   prometheus.Histogram   // one planning pass
	dropped   prometheus.Counter     // full plans dropped because the books changed while planning
	jobPlans  prometheus.Counter     // jobs put to the deadline planner
	leader    prometheus.Gauge       // 1 while leading
	events    *prometheus.CounterVec // folded events by type
	refused   *prometheus.CounterVec // events not acted on, by type and why
	// forecastMAPE is each serving workload's demand forecast error at the cold-start horizon.
	forecastMAPE *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_arbiter_decisions_total",
			Help: "Planning passes that produced at least one action, by what triggered them."}, []string{"trigger"}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_arbiter_actions_total",
			Help: "Actions by kind and outcome (applied, reconciled, failed, awaiting_approval, blocked, rejected)."},
			[]string{"kind", "outcome"}),
		reaction: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "bursar_arbiter_reclaim_reaction_seconds",
			Help:    "Time from a capacity.reclaimed notice reaching the arbiter to its replacement reaching the actuator.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}),
		planDur: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "bursar_arbiter_plan_duration_seconds",
			Help: "Duration of one planning pass (snapshot, plan, record).", Buckets: prometheus.ExponentialBuckets(.0005, 2, 14)}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "bursar_arbiter_plans_dropped_total",
			Help: "Full plans thrown away and made again because the books changed while they were computed."}),
		jobPlans: prometheus.NewCounter(prometheus.CounterOpts{Name: "bursar_arbiter_job_plans_total",
			Help: "Jobs planned: every active job at a full pass, those whose books it changed at a reclaim's quick answer."}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "bursar_arbiter_leader",
			Help: "1 while this arbiter holds the leader lease, else 0."}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_arbiter_events_total",
			Help: "Events folded into the arbiter's state, by type."}, []string{"type"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bursar_arbiter_events_refused_total",
			Help: "Events the arbiter refused to act on and sent to DLQ, by type and why (subject: on a subject " +
				"of another type; implausible: a job.progress beyond the job's run time)."}, []string{"type", "why"}),
		forecastMAPE: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bursar_arbiter_demand_forecast_mape_pct",
			Help: "Mean absolute percentage error of each serving workload's demand forecast one cold start ahead, " +
				"over its last 120 forecasts (workloads sized by throughput only)."}, []string{"workload"}),
	}
	if reg != nil {
		reg.MustRegister(m.decisions, m.actions, m.reaction, m.planDur, m.dropped, m.jobPlans, m.leader, m.events, m.refused,
			m.forecastMAPE)
	}
	return m
}
