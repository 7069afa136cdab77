// Package bench measures internal/forecast on cost series from the project's replays of the
// shared traces (internal/costseries): BenchmarkForecast backtests the month-end spend forecast
// by day of month, and the 80 % interval's coverage, beside the linear burn-rate forecast.
// docs/forecasts.md gives the figures and how the months are built from the trace windows.
package bench
