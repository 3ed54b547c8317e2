/* Document view (static/css/document.css): keeps the rank summary in the
 * Submit bar in step with the rank buttons. Progressive enhancement: without
 * this file the summary shows the ranks the page was rendered with. No
 * wording lives here (the template holds every string).
 */
(function () {
  "use strict";

  function refreshSummary(item) {
    var summary = item.querySelector("[data-rank-summary]");
    if (!summary) return;
    summary.querySelectorAll("[data-summary-for]").forEach(function (entry) {
      var card = item.querySelector('[data-card][data-letter="' + entry.dataset.summaryFor + '"]');
      var checked = card && card.querySelector("input[data-rank]:checked");
      var value = entry.querySelector("[data-summary-value]");
      if (value) value.textContent = checked ? checked.value : "\u2013";
    });
  }

  /* The rank buttons stick to the bottom of the sentence grid's scroll area, so
   * they are always in view; yet focusing one (annotate.js moves focus from card
   * to card as ranks are given) makes the browser scroll the grid to the
   * buttons' place under the last row, and the text the annotator is reading
   * jumps away. Keep the grid's vertical position across such focus changes;
   * the sideways scroll that brings the next card into view on a phone stays. */
  var lastTop = new WeakMap();
  document.addEventListener("scroll", function (event) {
    var el = event.target;
    if (el && el.classList && el.classList.contains("doc-scroll")) lastTop.set(el, el.scrollTop);
  }, true);
  // Keys and clicks that may move focus: note where the grid is just before (capture phase, before annotate.js).
  ["keydown", "pointerdown"].forEach(function (type) {
    document.addEventListener(type, function () {
      document.querySelectorAll(".doc-scroll").forEach(function (el) { lastTop.set(el, el.scrollTop); });
    }, true);
  });
  document.addEventListener("focusin", function (event) {
    var target = event.target;
    var grid = target && target.closest && target.closest(".doc-scroll");
    if (!grid || !target.closest(".ranks, .choose")) return;
    var top = lastTop.has(grid) ? lastTop.get(grid) : 0;
    var restore = function () { if (grid.scrollTop !== top) grid.scrollTop = top; };
    restore();
    window.requestAnimationFrame(restore);
  });

  function refreshAll() {
    document.querySelectorAll("[data-item]").forEach(refreshSummary);
  }

  // After annotate.js's own change handler (which may swap ranks between cards).
  document.addEventListener("change", function (event) {
    var item = event.target.closest && event.target.closest("[data-item]");
    if (item) window.setTimeout(function () { refreshSummary(item); }, 0);
  });
  document.addEventListener("DOMContentLoaded", refreshAll);
  document.addEventListener("htmx:afterSwap", refreshAll);
})();
