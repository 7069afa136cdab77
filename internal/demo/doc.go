// Package demo runs Bursar end to end on one machine, on embedded defaults, over a real spot
// trace at accelerated time: embedded NATS and ClickHouse, a collector publishing catalog prices,
// a simulated fleet whose spot capacity follows the trace (reclaiming instances when a zone
// shrinks), token counters from the replicas that are ready, the arbiter planning through the
// same code paths as `arbiter run`, the recorder writing history, and at the end the reports.
package demo
