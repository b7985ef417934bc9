/* Injected into a copy of the report by browser_test.sh and run by headless Chromium once the page */
/* has loaded: what a reviewer's browser would show, measured. The result is written into the */
/* page as JSON (<pre id="oplab-page-check">), which --dump-dom prints. */
window.addEventListener('load', function () {
  var width = document.documentElement.clientWidth;
  var result = {viewport: width, problems: [], statuses: 0, status_words: [], images: 0, svgs: 0};
  /* Every image loads. */
  document.querySelectorAll('img').forEach(function (img) {
    result.images++;
    if (!img.complete || img.naturalWidth === 0) result.problems.push('image does not load: ' + img.getAttribute('src'));
  });
  /* Every inline figure has a size. */
  document.querySelectorAll('svg').forEach(function (svg) {
    result.svgs++;
    var r = svg.getBoundingClientRect();
    if (r.width < 10 || r.height < 10) result.problems.push('figure drawn at ' + r.width + 'x' + r.height);
  });
  /* No element wider than the page: the page never scrolls sideways, and nothing outside a box */
  /* that scrolls on its own (.scroll, pre) reaches past the viewport. */
  if (document.documentElement.scrollWidth > width + 1)
    result.problems.push('the page is ' + document.documentElement.scrollWidth + ' px wide in a ' + width + ' px window');
  var inScrollBox = function (el) {
    for (var p = el.parentElement; p; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden') return true;
    }
    return false;
  };
  var wide = 0;
  document.querySelectorAll('body *').forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= width + 1 || inScrollBox(el)) return;
    if (wide++ < 5) result.problems.push('<' + el.tagName.toLowerCase() + '> reaches ' + Math.round(r.right) + ' px in a ' + width + ' px window');
  });
  /* The verdict grid's statuses are text, in a visible colour box. */
  document.querySelectorAll('td.status').forEach(function (td) {
    result.statuses++;
    var word = (td.innerText || '').trim().split(/\s+/)[0];
    if (result.status_words.indexOf(word) < 0) result.status_words.push(word);
    var bg = getComputedStyle(td).backgroundColor;
    if (!/^[A-Z-]+$/.test(word)) result.problems.push('a status cell does not begin with its word: ' + td.innerText);
    if (bg === 'rgba(0, 0, 0, 0)') result.problems.push('status ' + word + ' has no colour');
  });
  if (result.statuses === 0) result.problems.push('the verdict grid shows no status');
  var out = document.createElement('pre');
  out.id = 'oplab-page-check';
  out.textContent = JSON.stringify(result);
  out.style.display = 'none';
  document.body.appendChild(out);
});
