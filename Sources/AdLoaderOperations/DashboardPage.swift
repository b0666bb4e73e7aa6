/// The dashboard at `/`: one self-contained HTML page (no CDN, no chart library) that polls
/// `/dashboard.json` every sample interval and draws its charts as inline SVG.
///
/// Layout for a laptop screen: a status bar (ready or why not, and which replica: instance,
/// version, uptime), tiles with the latest values, the error views (calls by status code,
/// upstream failures by class, reclaimed leases), per-pool charts (available, leased, in
/// flight, target over the last hour), then the server's charts (call rate, p99 latency, hit
/// ratio, upstream requests per impression, waste, loop lag) and the configuration. Every chart
/// labels its axes: 0, half and the maximum with the unit, and the time back to now. Charts
/// carry `data-points` for tests.
package enum DashboardPage {
    package static let html = #"""
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>adloaderd</title>
        <style>
        :root { --bg:#0f1419; --panel:#182028; --text:#e6e9ec; --muted:#8b98a5; --grid:#26313c;
          --blue:#4aa3ff; --green:#3ccf91; --amber:#f5b942; --red:#ff6b6b; --violet:#b48cff; }
        * { box-sizing: border-box; }
        body { margin:0; font:13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background:var(--bg); color:var(--text); }
        header { display:flex; align-items:center; gap:16px; padding:10px 20px; background:var(--panel); border-bottom:1px solid var(--grid); }
        header h1 { font-size:16px; margin:0; font-weight:600; }
        #status { padding:3px 10px; border-radius:10px; font-weight:600; font-size:12px; }
        #status.ready { background:#143d2b; color:var(--green); } #status.unready { background:#4a1d1d; color:var(--red); }
        #updated { color:var(--muted); margin-left:auto; }
        #identity { color:var(--text); font-variant-numeric:tabular-nums; }
        #identity b { color:var(--muted); font-weight:400; margin-left:10px; }
        main { padding:14px 20px; }
        .tiles { display:grid; grid-template-columns:repeat(9, 1fr); gap:10px; margin-bottom:14px; }
        .tile.bad .value { color:var(--red); }
        .tile { background:var(--panel); border-radius:6px; padding:8px 12px; }
        .tile .label { color:var(--muted); font-size:11px; text-transform:uppercase; letter-spacing:.04em; }
        .tile .value { font-size:22px; font-weight:600; font-variant-numeric:tabular-nums; }
        h2 { font-size:13px; color:var(--muted); font-weight:600; margin:14px 0 8px; text-transform:uppercase; letter-spacing:.05em; }
        .grid { display:grid; grid-template-columns:repeat(3, 1fr); gap:10px; }
        figure { margin:0; background:var(--panel); border-radius:6px; padding:8px 10px 4px; }
        figcaption { display:flex; justify-content:space-between; font-weight:600; }
        figcaption .legend span { margin-left:8px; font-weight:400; color:var(--muted); }
        figcaption .legend i { display:inline-block; width:10px; height:3px; margin-right:3px; vertical-align:middle; }
        svg { width:100%; height:110px; display:block; }
        svg text { fill:var(--muted); font-size:10px; }
        svg .gridline { stroke:var(--grid); stroke-width:1; }
        svg polyline { fill:none; stroke-width:1.6; vector-effect:non-scaling-stroke; }
        table { border-collapse:collapse; background:var(--panel); border-radius:6px; width:100%; }
        td { padding:4px 10px; border-top:1px solid var(--grid); vertical-align:top; }
        td:first-child { color:var(--muted); white-space:nowrap; width:1%; }
        .empty { color:var(--muted); padding:10px; }
        </style></head>
        <body>
        <header><h1>adloaderd</h1><span id="identity"></span><span id="status">…</span><span id="reasons"></span><span id="updated">waiting for data</span></header>
        <main>
        <section class="tiles">
          <div class="tile" id="tile-calls"><div class="label">calls / s</div><div class="value">–</div></div>
          <div class="tile" id="tile-errors"><div class="label">errors / s (not OK)</div><div class="value">–</div></div>
          <div class="tile" id="tile-failures"><div class="label">upstream failures / s</div><div class="value">–</div></div>
          <div class="tile" id="tile-reclaimed"><div class="label">leases reclaimed (interval)</div><div class="value">–</div></div>
          <div class="tile" id="tile-p99"><div class="label">p99 latency</div><div class="value">–</div></div>
          <div class="tile" id="tile-hit"><div class="label">borrow hit ratio</div><div class="value">–</div></div>
          <div class="tile" id="tile-upi"><div class="label">upstream req / impression</div><div class="value">–</div></div>
          <div class="tile" id="tile-waste"><div class="label">ads wasted (interval)</div><div class="value">–</div></div>
          <div class="tile" id="tile-lag"><div class="label">loop lag p99</div><div class="value">–</div></div>
        </section>
        <h2>Errors — calls by status code, upstream failures by class, reclaimed leases</h2>
        <section class="grid" id="errors"></section>
        <h2>Pools — available, leased, in flight, target (last hour)</h2>
        <section class="grid" id="pools"><div class="empty">no pool yet</div></section>
        <h2>Server</h2>
        <section class="grid" id="server"></section>
        <h2>Configuration</h2>
        <table id="configuration"></table>
        </main>
        <script>
        "use strict";
        const COLORS = { available:"var(--blue)", leased:"var(--amber)", inFlight:"var(--violet)", target:"var(--muted)",
          callsPerSecond:"var(--blue)", p99Ms:"var(--amber)", hitRatio:"var(--green)", upstreamPerImpression:"var(--violet)",
          wasted:"var(--red)", lagP99Ms:"var(--amber)", lagMaxMs:"var(--red)", reclaimed:"var(--red)",
          OK:"var(--green)", UNAVAILABLE:"var(--red)", RESOURCE_EXHAUSTED:"var(--amber)", DEADLINE_EXCEEDED:"var(--violet)",
          INVALID_ARGUMENT:"#ff9f68", UNAUTHENTICATED:"#e879f9", NOT_FOUND:"var(--blue)", CANCELLED:"var(--muted)",
          retryable:"var(--amber)", unreachable:"var(--red)", final:"var(--violet)" };
        const SPARE = ["#7dd3fc", "#fda4af", "#bef264", "#fcd34d", "#c4b5fd"];
        function color(name) { return COLORS[name] || SPARE[[...name].reduce((h, c) => h + c.charCodeAt(0), 0) % SPARE.length]; }
        // [chart key, title, y unit, series]
        const SERVER = [
          ["calls", "Call rate", "calls/s", ["callsPerSecond"]],
          ["latency", "p99 latency, unary calls", "ms", ["p99Ms"]],
          ["hit", "Borrow hit ratio", "%", ["hitRatio"]],
          ["upi", "Upstream requests per impression", "req/imp", ["upstreamPerImpression"]],
          ["waste", "Ads wasted (expired unconsumed)", "ads/interval", ["wasted"]],
          ["lag", "Event-loop lag: p99, max", "ms", ["lagP99Ms", "lagMaxMs"]],
        ];
        const NS = "http://www.w3.org/2000/svg";
        function el(name, attrs, parent) {
          const node = document.createElementNS(NS, name);
          for (const k in attrs) node.setAttribute(k, attrs[k]);
          if (parent) parent.appendChild(node);
          return node;
        }
        function fmt(v, digits) {
          if (v === null || v === undefined) return "–";
          if (Math.abs(v) >= 1000) return (v / 1000).toFixed(1) + "k";
          return v.toFixed(digits === undefined ? (Number.isInteger(v) ? 0 : 2) : digits);
        }
        function last(values) { for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null) return values[i]; return null; }
        function figure(parent, key, title, names) {
          let fig = parent.querySelector(`figure[data-chart="${CSS.escape(key)}"]`);
          if (!fig) {
            fig = document.createElement("figure");
            fig.dataset.chart = key;
            fig.className = "chart";
            fig.innerHTML = `<figcaption><span class="title"></span><span class="legend"></span></figcaption>`;
            fig.querySelector(".title").textContent = title;
            el("svg", { viewBox:"0 0 400 110", preserveAspectRatio:"none" }, fig);
            parent.appendChild(fig);
          }
          // The legend follows the series (a status code appears the first time it happens).
          const legend = names.join(",");
          if (fig.dataset.legend !== legend) {
            fig.dataset.legend = legend;
            fig.querySelector(".legend").innerHTML = names.map(n => `<span><i style="background:${color(n)}"></i>${n}</span>`).join("");
          }
          return fig;
        }
        function ago(ms) {
          const s = Math.round(ms / 1000);
          return s < 120 ? `-${s}s` : `-${Math.round(s / 60)}m`;
        }
        // Draws the series over `times`; `unit` labels the y axis (0, half, max); the x axis is the time
        // back from now. A unit of "%" takes ratios 0...1 and shows them as percentages.
        function draw(fig, times, seriesByName, unit) {
          const svg = fig.querySelector("svg");
          while (svg.firstChild) svg.removeChild(svg.firstChild);
          const W = 400, H = 110, top = 8, bottom = 96, left = 0;
          let max = 0, points = 0;
          for (const name in seriesByName) for (const v of seriesByName[name] || []) if (v !== null && v > max) max = v;
          if (max <= 0) max = 1;
          const scale = unit === "%" ? 100 : 1;
          const t0 = times[0] || 0, t1 = times[times.length - 1] || 1, span = Math.max(t1 - t0, 1);
          for (const f of [0, 0.5, 1]) {
            const y = bottom - f * (bottom - top);
            el("line", { x1:0, x2:W, y1:y, y2:y, class:"gridline" }, svg);
            const label = el("text", { x:2, y:f === 0 ? y - 2 : y + 9, class:"axis-y" }, svg);
            label.textContent = `${fmt(max * f * scale, f === 0 ? 0 : undefined)} ${unit}`;
          }
          if (times.length > 1) {
            el("text", { x:W / 2 - 14, y:H - 2, class:"axis-x" }, svg).textContent = ago(span / 2);
            el("text", { x:2, y:H - 2, class:"axis-x" }, svg).textContent = ago(span);
          }
          el("text", { x:W - 24, y:H - 2, class:"axis-x" }, svg).textContent = "now";
          fig.dataset.unit = unit;
          for (const name in seriesByName) {
            const coords = [];
            seriesByName[name].forEach((v, i) => {
              if (v === null) return;
              coords.push(`${(left + (times[i] - t0) / span * (W - left)).toFixed(1)},${(bottom - v / max * (bottom - top)).toFixed(1)}`);
            });
            points = Math.max(points, coords.length);
            el("polyline", { points:coords.join(" "), stroke:color(name), class:"series", "data-series":name, "data-points":coords.length }, svg);
          }
          fig.dataset.points = points;
        }
        function duration(seconds) {
          const d = Math.floor(seconds / 86400), h = Math.floor(seconds % 86400 / 3600), m = Math.floor(seconds % 3600 / 60);
          return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${seconds % 60}s`;
        }
        function sumLast(series) { let total = null; for (const k in series) { const v = last(series[k]); if (v !== null) total = (total || 0) + v; } return total; }
        function render(d) {
          const identity = document.getElementById("identity");
          identity.innerHTML = "";
          for (const [label, value] of [["instance", d.instance], ["version", d.version], ["up", duration(d.uptimeSeconds)],
                                        ["since", new Date(d.startedAtMs).toISOString().replace(".000", "")]]) {
            const b = document.createElement("b"); b.textContent = label + " "; identity.appendChild(b);
            const v = document.createElement("span"); v.className = "id-" + label; v.textContent = value; identity.appendChild(v);
          }
          const status = document.getElementById("status");
          status.textContent = d.ready ? "READY" : "NOT READY";
          status.className = d.ready ? "ready" : "unready";
          document.getElementById("reasons").textContent = d.reasons.join("; ");
          document.getElementById("updated").textContent = `${d.t.length} samples, updated ${new Date().toLocaleTimeString()}`;
          const tile = (id, v, unit) => { document.querySelector(`#${id} .value`).textContent = v === null ? "–" : fmt(v) + (unit || ""); };
          tile("tile-calls", last(d.callsPerSecond));
          tile("tile-p99", last(d.p99Ms), " ms");
          const hit = last(d.hitRatio); tile("tile-hit", hit === null ? null : hit * 100, " %");
          tile("tile-upi", last(d.upstreamPerImpression));
          tile("tile-waste", last(d.wasted));
          tile("tile-lag", last(d.lagP99Ms), " ms");
          const errors = {}; for (const code in d.codes) if (code !== "OK") errors[code] = d.codes[code];
          const errorRate = sumLast(errors), failureRate = sumLast(d.failures), reclaimed = last(d.reclaimed);
          tile("tile-errors", errorRate === null ? 0 : errorRate);
          tile("tile-failures", failureRate);
          tile("tile-reclaimed", reclaimed);
          document.getElementById("tile-errors").classList.toggle("bad", errorRate > 0);
          document.getElementById("tile-failures").classList.toggle("bad", failureRate > 0);
          document.getElementById("tile-reclaimed").classList.toggle("bad", reclaimed > 0);
          const errorViews = document.getElementById("errors");
          const codes = Object.keys(d.codes);
          draw(figure(errorViews, "codes", "Calls by status code", codes), d.t, d.codes, "calls/s");
          draw(figure(errorViews, "failures", "Upstream failures by class", Object.keys(d.failures)), d.t, d.failures, "failures/s");
          draw(figure(errorViews, "reclaimed", "Leases reclaimed by the lease timeout (leak signal)", ["reclaimed"]), d.t,
               { reclaimed:d.reclaimed }, "leases/interval");
          const pools = document.getElementById("pools");
          if (d.pools.length) pools.querySelector(".empty")?.remove();
          for (const p of d.pools) {
            const fig = figure(pools, `pool:${p.loader}/${p.adUnit}`, `${p.loader} / ${p.adUnit}`, ["available", "leased", "inFlight", "target"]);
            fig.dataset.pool = `${p.loader}/${p.adUnit}`;
            draw(fig, d.t, { target:p.target, available:p.available, leased:p.leased, inFlight:p.inFlight }, "ads");
          }
          const server = document.getElementById("server");
          for (const [key, title, unit, names] of SERVER) {
            const series = {}; for (const n of names) series[n] = d[n];
            draw(figure(server, key, title, names), d.t, series, unit);
          }
          const table = document.getElementById("configuration");
          table.innerHTML = "";
          for (const [k, v] of d.configuration) { const row = table.insertRow(); row.insertCell().textContent = k; row.insertCell().textContent = v; }
          document.body.dataset.samples = d.t.length;
        }
        let interval = 5000;
        async function refresh() {
          try {
            const response = await fetch("/dashboard.json", { cache:"no-store" });
            const d = await response.json();
            interval = Math.max(d.sampleIntervalMs, 250);
            render(d);
          } catch (e) {
            const status = document.getElementById("status");
            status.textContent = "UNREACHABLE"; status.className = "unready";
          }
          setTimeout(refresh, interval);
        }
        refresh();
        </script>
        </body></html>
        """#
}
