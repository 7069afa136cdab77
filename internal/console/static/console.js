// Bursar console: a little plain JavaScript, no framework. It refreshes the fleet table from
// /api/v1/fleet and draws the budgets' burn-down charts with uPlot. Text from the API is set with
// textContent, never as HTML.
"use strict";

(function () {
  function text(v) {
    if (v === null || v === undefined) return "";
    return typeof v === "string" ? v : JSON.stringify(v);
  }

  // refreshFleet replaces the fleet table's rows with /api/v1/fleet's, every 10 s.
  function refreshFleet(table) {
    var body = document.getElementById("fleet-rows");
    var stamp = document.getElementById("fleet-updated");
    var window_ = table.dataset.window || "24h";
    function load() {
      fetch("/api/v1/fleet?window=" + encodeURIComponent(window_), { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : Promise.reject(new Error("HTTP " + r.status)); })
        .then(function (a) {
          var rows = document.createDocumentFragment();
          a.rows.forEach(function (row) {
            var tr = document.createElement("tr");
            tr.dataset.test = ["fleet", text(row.workload), text(row.location), text(row.gpu), text(row.market)].join("-");
            a.columns.forEach(function (c) {
              var td = document.createElement("td");
              td.dataset.col = c;
              if (c === "usd_per_mtok") {
                var link = document.createElement("a");
                link.href = "/decisions?workload=" + encodeURIComponent(text(row.workload)) + "&window=yesterday";
                link.textContent = text(row[c]);
                td.appendChild(link);
              } else {
                td.textContent = text(row[c]);
              }
              tr.appendChild(td);
            });
            rows.appendChild(tr);
          });
          body.replaceChildren(rows);
          table.hidden = a.rows.length === 0;
          stamp.textContent = "updated " + new Date().toISOString().replace(/\.\d+Z$/, "Z");
        })
        .catch(function (e) { stamp.textContent = "refresh failed: " + e.message; });
    }
    setInterval(load, 10000);
  }

  // drawBurn draws one policy's burn-down: spend to now, forecast to the period's end, and the
  // limit and thresholds as flat lines.
  function drawBurn(el) {
    var c = JSON.parse(document.getElementById(el.dataset.chart).textContent);
    var flat = function (v) { return c.times.map(function () { return v; }); };
    var series = [{}, { label: "spend", stroke: "#1f6feb", width: 2 },
      { label: "forecast", stroke: "#d97706", width: 2, dash: [6, 4] },
      { label: "limit " + c.limit + " " + c.currency, stroke: "#b91c1c", width: 1 }];
    var data = [c.times, c.spend, c.forecast, flat(c.limit)];
    (c.thresholds || []).forEach(function (t) {
      series.push({ label: t.label, stroke: "#6b7280", width: 1, dash: [2, 3] });
      data.push(flat(t.amount));
    });
    new uPlot({ width: Math.min(880, el.clientWidth || 880), height: 260, series: series,
      scales: { x: { time: true } }, axes: [{}, { label: c.currency }] }, data, el);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var fleet = document.getElementById("fleet-table");
    if (fleet) refreshFleet(fleet);
    if (window.uPlot) document.querySelectorAll("[data-chart]").forEach(drawBurn);
  });
})();
