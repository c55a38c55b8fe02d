// Measures the HTML report's layout once it rendered (browser_layout_test.sh adds this script to
// a copy of the page): no two texts of a chart overlap (axis labels), and the summary table fits
// its card with no cell's content clipped. Writes its verdict to <pre id="layout">.
(function () {
  'use strict';
  var out = document.createElement('pre');
  out.id = 'layout';
  document.body.appendChild(out);
  var problems = [];
  function box(el) { return el.getBoundingClientRect(); }
  function overlap(a, b) {
    var tolerance = 0.5;
    return a.left < b.right - tolerance && b.left < a.right - tolerance &&
        a.top < b.bottom - tolerance && b.top < a.bottom - tolerance;
  }
  var charts = document.querySelectorAll('svg.chart');
  var texts = 0;
  Array.prototype.forEach.call(charts, function (svg) {
    var labels = Array.prototype.slice.call(svg.querySelectorAll('text'));
    var boxes = labels.map(box);
    texts += labels.length;
    for (var i = 0; i < labels.length; ++i) {
      for (var j = i + 1; j < labels.length; ++j) {
        if (boxes[i].width > 0 && boxes[j].width > 0 && overlap(boxes[i], boxes[j])) {
          problems.push('overlap in "' + svg.querySelector('title').textContent + '": "' +
              labels[i].textContent + '" and "' + labels[j].textContent + '"');
        }
      }
    }
  });
  var table = document.querySelector('table.summary');
  if (!table) {
    problems.push('no summary table');
  } else {
    var card = table.closest('.card');
    var t = box(table), c = box(card);
    if (t.right > c.right + 0.5 || t.left < c.left - 0.5) {
      problems.push('the summary table (' + Math.round(t.width) + ' px) overflows its card (' +
          Math.round(c.width) + ' px)');
    }
    Array.prototype.forEach.call(table.querySelectorAll('td, th'), function (cell) {
      if (cell.scrollWidth > cell.clientWidth + 1) {
        problems.push('a clipped cell: "' + cell.textContent.slice(0, 60) + '"');
      }
      var b = box(cell);
      if (b.right > c.right + 0.5) problems.push('a cell past the card: "' + cell.textContent.slice(0, 60) + '"');
    });
  }
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    problems.push('the page is wider (' + document.documentElement.scrollWidth +
        ' px) than the window (' + window.innerWidth + ' px)');
  }
  out.dataset.state = problems.length ? 'bad' : 'ok';
  out.dataset.charts = charts.length;
  out.dataset.texts = texts;
  out.dataset.width = window.innerWidth;
  out.textContent = problems.length ? problems.slice(0, 20).join('\n') : 'layout ok';
})();
