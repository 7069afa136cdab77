package recorder

import (
	"errors"
	"time"

	"github.com/bursar-dev/bursar/internal/events"
)

// table is where one event type is stored: its columns in insert order and how to write a row.
type table struct {
	name    string
	columns string
	write   func(r *row, e events.Event, x *extra) error
}

// extra holds the columns the recorder derives from a series' previous sample.
type extra struct {
	prevAt          time.Time
	prevReady       int64
	prevUSDPerHour  float64
	prevInstances   []string
	deltaPrompt     int64
	deltaGeneration int64
	deltaRequests   int64
}

const envelope = "id, at, version, "

var tables = map[events.Type]*table{
	events.TypePriceObserved: {"price_observed", envelope +
		"provider, region, zone, instance_type, gpu_model, gpu_count, gpu_memory_gb, market, usd_per_hour, source",
		writePrice},
	events.TypeCapacityReclaimed: {"capacity_reclaimed", envelope +
		"provider, region, location, zone, instance, node, kind, notice_at, deadline, source", writeReclaim},
	events.TypeGPUSample: {"gpu_sample", envelope +
		"location, node, uuid, `index`, model, utilization_pct, memory_used_bytes, memory_total_bytes, power_w, temperature_c",
		writeGPU},
	events.TypeTokensSample: {"tokens_sample", envelope +
		"location, workload, replica, server, prompt_tokens, generation_tokens, requests, reset, " +
		"delta_prompt_tokens, delta_generation_tokens, delta_requests", writeTokens},
	events.TypeReplicaState: {"replica_state", envelope +
		"workload, location, provider, market, offer, gpu_model, gpus_per_replica, usd_per_hour, desired, ready, " +
		"prev_at, prev_ready, prev_usd_per_hour, instances, prev_instances", writeReplica},
	events.TypePlanDecided: {"plan_decided", envelope +
		"workload, plan_id, actions, usd_per_hour_before, usd_per_hour_after, needs_approval", writePlan},
	events.TypeActionUpdated: {"action_updated", envelope +
		"workload, action_id, plan_id, status, kind, location, offer, market, replicas, reason, actor, detail",
		writeAction},
	events.TypeBudgetAlert: {"budget_alert", envelope +
		"policy, scope, period, period_start, basis, threshold, spend, `limit`, currency, cleared", writeBudget},
	events.TypeJobProgress: {"job_progress", envelope +
		"job, work_done_s, checkpoint_at, location, market, estimated", writeJobProgress},
	events.TypeJobState: {"job_state", envelope +
		"job, team, state, work_s, work_done_s, deadline, overhead_s, location, market, gpus_per_replica, " +
		"usd_per_hour, on_demand_usd_per_hour, usd_spent, preemptions, lost_s, finished_at, reason", writeJobState},
	events.TypeCostAnomaly: {"cost_anomaly", envelope +
		"anomaly, state, series, cause, start, expected_usd_per_hour, observed_usd_per_hour, impact_usd, currency, moved",
		writeAnomaly},
}

// head writes the envelope columns.
// TableOf names the table events of type t are recorded in.
func TableOf(t events.Type) (string, bool) {
	tbl, ok := tables[t]
	if !ok {
		return "", false
	}
	return tbl.name, true
}

func head(r *row, m *events.Meta) error {
	r.str(m.ID)
	r.sep()
	if err := r.time("at", m.At); err != nil {
		return err
	}
	r.sep()
	r.str(m.Version)
	return nil
}

// cols writes string and number columns after the envelope, each preceded by a tab.
func (r *row) cols(vs ...any) {
	for _, v := range vs {
		r.sep()
		switch v := v.(type) {
		case string:
			r.str(v)
		case events.Market:
			r.str(string(v))
		case int:
			r.int(int64(v))
		case int64:
			r.int(v)
		case float64:
			r.float(v)
		case bool:
			r.bool(v)
		default:
			panic("recorder: no TSV encoding for a column value")
		}
	}
}

func writePrice(r *row, ev events.Event, _ *extra) error {
	e := ev.(*events.PriceObserved)
	if err := head(r, &e.Meta); err != nil {
		return err
	}
	r.cols(e.Provider, e.Region, e.Zone, e.InstanceType, e.GPUModel, e.GPUCount, e.GPUMemoryGB, e.Market,
		e.USDPerHour, e.Source)
	return nil
}

func writeReclaim(r *row, ev events.Event, _ *extra) error {
	e := ev.(*events.CapacityReclaimed)
	if err := head(r, &e.Meta); err != nil {
		return err
	}
	r.cols(e.Provider, e.Region, e.Location, e.Zone, e.Instance, e.Node, string(e.Kind))
	r.sep()
	if err := r.time("notice_at", e.NoticeAt); err != nil {
		return err
	}
	r.sep()
	if err := r.time("deadline", e.Deadline); err != nil {
		return err
	}
	r.cols(e.Source)
	return nil
}

// writeGPU is on the hot path (telemetry), so it avoids the boxing of cols.
func writeGPU(r *row, ev events.Event, _ *extra) error {
	e := ev.(*events.GPUSample)
	if err := head(r, &e.Meta); err != nil {
		return err
	}
	for _, s := range [...]string{e.Location, e.Node, e.UUID} {
		r.sep()
		r.str(s)
	}
	r.sep()
	r.int(int64(e.Index))
	r.sep()
	r.str(e.Model)
	r.sep()
	r.float(e.UtilizationPct)
	r.sep()
	r.int(e.MemoryUsedBytes)
	r.sep()
	r.int(e.MemoryTotalBytes)
	r.sep()
	r.float(e.PowerW)
	r.sep()
	r.float(e.TemperatureC)
	return nil
}

func writeTokens(r *row, ev events.Event, x *extra) error {
	e := ev.(*events.TokensSample)
	if err := head(r, &e.Meta); err != nil {
		return err
	}
	for _, s := range [...]string{e.Location, e.Workload, e.Replica, e.Server} {
		r.sep()
		r.str(s)
	}
	for _, v := range [...]int64{e.PromptTokens, e.GenerationTokens, e.Requests} {
		r.sep()
		r.int(v)
	}
	r.sep()
	r.bool(e.Reset)
	for _, v := range [...]int64{x.deltaPrompt, x.deltaGeneration, x.deltaRequests} {
		r.sep()
		r.int(v)
	}
	return nil
}

func writeReplica(r *row, ev events.Event, x *extra) error {
	e := ev.(*events.ReplicaState)
	if err := head(r, &e.Meta); err != nil {
		return err
	}
	r.cols(e.Workload, e.Location, e.Provider, e.Market, e.Offer, e.GPUModel, e.GPUs, e.USDPerHour, e.Desired, e.Ready)
	r.sep()
	if err := r.time("prev_at", x.prevAt); err != nil {
		return err
	}
	r.cols(x.prevReady, x.prevUSDPerHour)
	r.sep()
	r.strings(e.Instances)
	r.sep()
	r.strings(x.prevInstances)
	return nil
}

func writePlan(r *row, ev events.Event, _ *extra) error {
	e := ev.(*events.PlanDecided)
	if err := head(r, &e.Meta); err != nil {
		return err
	}
	r.cols(e.Workload, e.PlanID)
	r.sep()
	r.b = append(r.b, '[')
	for i, a := range e.Actions {
		if i > 0 {
			r.b = append(r.b, ',')
		}
		r.b = append(r.b, '(')
		for _, s := range [...]string{a.ID, a.Kind, a.Location, a.Offer, string(a.Market)} {
			r.quoted(s)
			r.b = append(r.b, ',')
		}
		r.int(int64(a.Replicas))
		r.b = append(r.b, ',')
		r.int(int64(a.Delta))
		r.b = append(r.b, ',')
		r.quoted(a.Reason)
		r.b = append(r.b, ',')
		r.bool(a.NeedsApproval)
		r.b = append(r.b, ')')
	}
	r.b = append(r.b, ']')
	r.cols(e.USDPerHourWas, e.USDPerHourNow, e.NeedsApproval)
	return nil
}

func writeAction(r *row, ev events.Event, _ *extra) error {
	e := ev.(*events.ActionUpdated)
	if err := head(r, &e.Meta); err != nil {
		return err
	}
	r.cols(e.Workload, e.ActionID, e.PlanID, string(e.Status), e.Kind, e.Location, e.Offer, e.Market, e.Replicas,
		e.Reason, e.Actor, e.Detail)
	return nil
}

func writeBudget(r *row, ev events.Event, _ *extra) error {
	e := ev.(*events.BudgetAlert)
	if err := head(r, &e.Meta); err != nil {
		return err
	}
	r.cols(e.Policy, e.Scope, e.Period)
	r.sep()
	if err := r.time("period_start", e.PeriodStart); err != nil {
		return err
	}
	r.cols(e.Basis, e.Threshold, e.Spend, e.Limit, e.Currency, e.Cleared)
	return nil
}

func writeAnomaly(r *row, ev events.Event, _ *extra) error {
	e := ev.(*events.CostAnomaly)
	if err := head(r, &e.Meta); err != nil {
		return err
	}
	r.cols(e.Anomaly, e.State, e.Series, e.Cause)
	r.sep()
	if err := r.time("start", e.Start); err != nil {
		return err
	}
	r.cols(e.Expected, e.Observed, e.Impact, e.Currency)
	r.sep()
	r.strings(e.Moved)
	return nil
}

func writeJobProgress(r *row, ev events.Event, _ *extra) error {
	e := ev.(*events.JobProgress)
	if err := head(r, &e.Meta); err != nil {
		return err
	}
	r.cols(e.Job, e.WorkDoneS)
	r.sep()
	if err := r.optTime("checkpoint_at", e.CheckpointAt); err != nil {
		return err
	}
	r.cols(e.Location, e.Market, e.Estimated)
	return nil
}

func writeJobState(r *row, ev events.Event, _ *extra) error {
	e := ev.(*events.JobState)
	if err := head(r, &e.Meta); err != nil {
		return err
	}
	r.cols(e.Job, e.Team, string(e.State), e.WorkS, e.WorkDoneS)
	r.sep()
	if err := r.time("deadline", e.Deadline); err != nil {
		return err
	}
	r.cols(e.OverheadS, e.Location, e.Market, e.GPUs, e.USDPerHour, e.OnDemandUSD, e.USDSpent, e.Preemptions, e.LostS)
	r.sep()
	if err := r.optTime("finished_at", e.FinishedAt); err != nil {
		return err
	}
	r.cols(e.Reason)
	return nil
}

// encode appends e's row to r, or returns why e cannot be stored. On error r is unchanged.
func encode(r *row, e events.Event, x *extra) error {
	t := tables[e.EventType()]
	if t == nil {
		return errors.New("no table for event type " + string(e.EventType()))
	}
	n := len(r.b)
	if err := t.write(r, e, x); err != nil {
		r.b = r.b[:n]
		return err
	}
	r.end()
	return nil
}
