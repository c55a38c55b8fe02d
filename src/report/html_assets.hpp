// The report page's style sheet and script (private; html_report.cpp inlines them in the page).
#pragma once

namespace tunekit::report_html {

inline constexpr const char* style = R"CSS(
:root { --bg:#f6f7f9; --card:#fff; --fg:#1d2430; --muted:#5f6b7a; --line:#e3e7ec;
  --win:#1a7f37; --ok:#4c78a8; --dropped:#a9c4e0; --bad:#c62828; --accent:#0b57d0; }
@media (prefers-color-scheme: dark) { :root { --bg:#14171c; --card:#1c2027; --fg:#e6e9ee;
  --muted:#98a2b0; --line:#2c323b; --win:#3fb950; --ok:#6c9bd2; --dropped:#3d5a7a;
  --bad:#ff6b6b; --accent:#7aa7ff; } }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
  font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif; }
main { max-width:1000px; margin:0 auto; padding:24px 20px 40px; }
header h1 { margin:0 0 2px; font-size:24px; }
header .sub { color:var(--muted); margin:0 0 14px; }
code, .mono { font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace; font-size:12.5px; }
a { color:var(--accent); text-decoration:none; } a:hover { text-decoration:underline; }
.card, section.tuning { background:var(--card); border:1px solid var(--line); border-radius:10px;
  padding:16px 18px; margin:14px 0; box-shadow:0 1px 2px rgba(0,0,0,.04); }
section.tuning h2 { margin:0; font-size:18px; }
section.tuning h2 .key { font-size:14px; color:var(--muted); }
td code, .winname, h2 .key { overflow-wrap:anywhere; }
.what { margin:2px 0; font-size:13px; }
.device { margin:2px 0 6px; color:var(--muted); font-size:12px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
.facts { margin:6px 0 8px; } .winname { color:var(--win); }
.bad { color:var(--bad); }
.legend { color:var(--muted); font-size:12px; margin:4px 0; }
.swatch { display:inline-block; width:12px; height:10px; border-radius:2px; margin:0 5px 0 14px; vertical-align:-1px; }
.swatch:first-child { margin-left:0; }
.swatch.win { background:var(--win); } .swatch.ok { background:var(--ok); }
.swatch.dropped { background:var(--dropped); } .swatch.whisker { height:2px; background:var(--fg); vertical-align:3px; }
svg.chart { display:block; max-width:100%; height:auto; overflow:visible; }
svg text { fill:var(--fg); font:12px ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace; }
svg text.tick, svg text.axis { fill:var(--muted); font:11px system-ui,"DejaVu Sans",sans-serif; }
svg .pname { font-weight:700; fill:var(--fg); font-size:12px; }
svg text.winlabel { font-weight:700; fill:var(--win); }
svg .ratio { fill:var(--muted); }
svg .grid { stroke:var(--line); stroke-width:1; }
svg .winline { stroke:var(--win); stroke-width:1; stroke-dasharray:3 3; opacity:.6; }
svg .bar.win { fill:var(--win); } svg .bar.ok { fill:var(--ok); } svg .bar.dropped { fill:var(--dropped); }
svg .whisker { stroke:var(--fg); stroke-width:1.3; fill:none; opacity:.75; }
svg .row:hover .bar, svg .row.hl .bar { filter:brightness(1.15); stroke:var(--fg); stroke-width:1; }
svg .envelope { fill:none; stroke:var(--win); stroke-width:1.5; opacity:.55; }
svg .pt { fill:var(--ok); opacity:.6; } svg .pt.winpt { fill:var(--win); opacity:1; stroke:var(--card); stroke-width:1.5; }
svg .pt.failpt { fill:none; stroke:var(--bad); stroke-width:1.5; opacity:.8; }
svg .pt.hl { opacity:1; stroke:var(--fg); stroke-width:2; }
.space h4, .failed-title { margin:14px 0 6px; font-size:13px; }
.panels { display:flex; flex-wrap:wrap; gap:6px 14px; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th, td { text-align:left; padding:4px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--muted); font-weight:600; font-size:12px; }
td.num { text-align:right; white-space:nowrap; } td.kind { white-space:nowrap; color:var(--bad); }
tr.hl td, tr.winrow td { background:rgba(26,127,55,.08); }
table.failed td:first-child { max-width:320px; overflow-wrap:anywhere; }
details { margin:8px 0; } summary { cursor:pointer; color:var(--muted); }
details pre { max-height:320px; overflow:auto; background:var(--bg); padding:8px; border-radius:6px; font-size:12px; }
.note { color:var(--muted); font-size:12px; margin:4px 0; }
#filter { width:100%; padding:7px 10px; border:1px solid var(--line); border-radius:8px;
  background:var(--card); color:var(--fg); font-size:14px; margin:4px 0 0; }
footer { color:var(--muted); font-size:12px; margin-top:18px; }
#status[data-state="error"] { color:var(--bad); font-weight:700; }
)CSS";

// Filtering, cross-highlighting of one candidate across a section's charts and tables, and the
// self-check that the test reads: every chart and bar has a size, and no script error happened.
inline constexpr const char* script = R"JS(
(function () {
  'use strict';
  var status = document.getElementById('status');
  var errors = [];
  function fail(message) {
    errors.push(String(message));
    status.dataset.state = 'error';
    status.textContent = 'report script error: ' + errors.join('; ');
  }
  window.addEventListener('error', function (e) { fail(e.message); });
  try {
    var sections = Array.prototype.slice.call(document.querySelectorAll('section.tuning'));
    var filter = document.getElementById('filter');
    if (filter) {
      filter.addEventListener('input', function () {
        var q = filter.value.trim().toLowerCase();
        sections.forEach(function (s) { s.hidden = q !== '' && s.dataset.search.indexOf(q) < 0; });
      });
    }
    sections.forEach(function (s) {
      var lit = [];
      function clear() { lit.forEach(function (e) { e.classList.remove('hl'); }); lit = []; }
      s.addEventListener('mouseover', function (e) {
        var target = e.target.closest('[data-c]');
        clear();
        if (!target) return;
        lit = Array.prototype.slice.call(
            s.querySelectorAll('[data-c="' + target.getAttribute('data-c') + '"]'));
        lit.forEach(function (el) { el.classList.add('hl'); });
      });
      s.addEventListener('mouseleave', clear);
    });
    var charts = document.querySelectorAll('svg.chart');
    var bars = 0, points = 0, empty = [];
    Array.prototype.forEach.call(charts, function (svg) {
      var box = svg.getBoundingClientRect();
      if (box.width < 50 || box.height < 50) empty.push(svg.querySelector('title').textContent);
      Array.prototype.forEach.call(svg.querySelectorAll('.bar'), function (bar) {
        var b = bar.getBoundingClientRect();
        if (b.width > 0 && b.height > 0) bars += 1; else empty.push('a bar');
      });
      points += svg.querySelectorAll('.pt').length;
    });
    status.dataset.charts = charts.length;
    status.dataset.bars = bars;
    status.dataset.points = points;
    if (empty.length) fail('not rendered: ' + empty.join(', '));
    if (!errors.length) {
      status.dataset.state = 'ok';
      status.textContent = 'Rendered ' + charts.length + ' charts, ' + bars + ' bars, ' +
          points + ' points.';
    }
  } catch (e) {
    fail(e && e.stack ? e.stack : e);
  }
})();
)JS";

}  // namespace tunekit::report_html
