/* Error-span marking for the MQM / ESA / DA item page (templates/annotation/_spans.html).
 *
 * Plain script, no framework. A text column ([data-col]) holds segments
 * ([data-seg], data-start = the segment's character offset in the text as
 * shown); an offset is "segment start + characters before it in the
 * segment", so marks drawn inside a segment never shift offsets, and offsets
 * are logical (reading order), whatever the text's direction.
 *
 * Marking: select with the mouse (popup on release), by touch (popup once the
 * selection rests), or by keyboard (focus a text, arrows move a caret, Shift
 * extends, Ctrl jumps a word, Enter marks). The popup picks the category (MQM:
 * type part of its name, arrows, Enter) and the severity (keys 1/m, 2/M, 3/c, n).
 * Marks are listed under their candidate (edit, delete) and drawn in the text.
 * While a stretch of a translation is selected, the words of the source row
 * that share a token with it are shaded (identical words, or a shared prefix
 * of 4+ letters; docs/protocols/mqm-esa.md).
 * Submit: the whole answer goes as JSON in the hidden "annotations" field;
 * an unanswered candidate blocks it (message beside it, focus there); an ESA
 * score at odds with the marks asks once (submit again to go on).
 * Suggestions (AI pre-filled spans, docs/ai-assistance.md) are drawn with a dashed frame and listed apart
 * from the annotator's marks: Keep, Edit (the stretch is selected: Shift + arrows or the mouse change it,
 * Enter or the release opens the popup with the suggestion's category and severity) or Delete, by mouse or
 * by Tab and Enter. A suggestion left as it is counts as kept; the fates go in the "suggestions" field.
 * Every word shown comes from the template ([data-span-words]).
 */
(function () {
  "use strict";

  var SEVERITY_RANK = { neutral: 0, minor: 1, major: 2, critical: 3 };
  var WORD = /[\p{L}\p{N}]+/gu;
  var hasHighlights = typeof CSS !== "undefined" && CSS.highlights && typeof Highlight === "function";

  var cfg = null;
  var root = null;          // [data-span-cards]
  var marks = {};           // candidate id -> [{start, end, side, severity, category}]
  var sugg = {};            // suggestion id -> {s: as shown, fate: null | "kept" | "edited" | "deleted", span: the edit}
  var editing = null;       // the suggestion whose stretch is being changed
  var pending = null;       // the mark being made: {card, col, side, start, end, edit, category}
  var kb = null;            // keyboard caret: {col, caret, anchor}
  var pointerDown = false;
  var lastPointer = "mouse";
  var touchTimer = null;
  var shadeFrame = 0;
  var nudgedFor = null;

  function all(el, sel) { return Array.prototype.slice.call(el.querySelectorAll(sel)); }
  function word(name) {
    var el = document.querySelector('[data-span-words] [data-word="' + name + '"]');
    return el ? el.textContent.trim() : "";
  }
  function panel() { return document.querySelector("[data-span-panel]"); }
  function cardOf(el) { return el && el.closest ? el.closest("[data-cand]") : null; }
  function colOf(card, side) { return card.querySelector('[data-col][data-side="' + side + '"]'); }
  function markable(col) { return !!col && col.hasAttribute("tabindex"); }
  function isRtl(col) { return getComputedStyle(col).direction === "rtl"; }

  /* --- offsets ------------------------------------------------------------ */

  function segs(col) {
    if (!col._segs) {
      col._segs = all(col, "[data-seg]").map(function (el) {
        var text = el.textContent;
        el._text = text;
        return { el: el, start: parseInt(el.dataset.start, 10), text: text };
      });
    }
    return col._segs;
  }
  function textLength(col) {
    var s = segs(col);
    return s.length ? s[s.length - 1].start + s[s.length - 1].text.length : 0;
  }
  /* The text between two offsets; a gap between segments (the line break) reads as a space. */
  function excerpt(col, a, b) {
    var out = "";
    segs(col).forEach(function (s) {
      var from = Math.max(a, s.start), to = Math.min(b, s.start + s.text.length);
      if (to > from) out += (out ? " " : "") + s.text.slice(from - s.start, to - s.start);
    });
    return out;
  }
  /* The logical offset of a DOM boundary point, clamped into this column's segments. */
  function pointOffset(col, node, off) {
    var list = segs(col);
    for (var k = 0; k < list.length; k++) {
      var r = document.createRange();
      r.selectNodeContents(list[k].el);
      var cmp = r.comparePoint(node, off);
      if (cmp < 0) return list[k].start;
      if (cmp === 0) {
        r.setEnd(node, off);
        return list[k].start + r.toString().length;
      }
    }
    return textLength(col);
  }
  /* A DOM boundary point for a logical offset (inside the segment holding it). */
  function domPoint(col, offset) {
    var list = segs(col), seg = list[0];
    for (var k = 0; k < list.length; k++) {
      if (offset >= list[k].start) seg = list[k];
    }
    if (!seg) return null;
    var left = Math.min(Math.max(offset - seg.start, 0), seg.text.length);
    var walker = document.createTreeWalker(seg.el, NodeFilter.SHOW_TEXT);
    var node = walker.nextNode(), last = null;
    while (node) {
      if (left <= node.data.length) return { node: node, offset: left };
      left -= node.data.length;
      last = node;
      node = walker.nextNode();
    }
    return last ? { node: last, offset: last.data.length } : { node: seg.el, offset: 0 };
  }
  function rangeFor(col, a, b) {
    var p = domPoint(col, a), q = domPoint(col, b);
    if (!p || !q) return null;
    var r = document.createRange();
    r.setStart(p.node, p.offset);
    r.setEnd(q.node, q.offset);
    return r;
  }
  /* Selections often take a space or a line break at either end: leave those out. */
  function trimmed(col, a, b) {
    var list = segs(col);
    var total = textLength(col);
    var chars = new Array(total);
    list.forEach(function (s) { for (var i = 0; i < s.text.length; i++) chars[s.start + i] = s.text[i]; });
    function blank(i) { return chars[i] === undefined || /\s/.test(chars[i]); }
    while (a < b && blank(a)) a++;
    while (b > a && blank(b - 1)) b--;
    return a < b ? [a, b] : null;
  }

  /* --- marks: drawing and listing ---------------------------------------- */

  function sideMarks(id, side) {
    return (marks[id] || []).map(function (m, i) { return { m: m, i: i }; })
      .filter(function (x) { return x.m.side === side; });
  }

  /* The suggestions of a card's side that are not deleted, each with its current stretch. */
  function sideSuggestions(id, side) {
    return Object.keys(sugg).map(function (sid) { return { sid: sid, x: sugg[sid] }; }).filter(function (e) {
      return e.x.s.candidate === id && e.x.fate !== "deleted" && spanOf(e.x).side === side;
    }).map(function (e) { return { sid: e.sid, m: spanOf(e.x), fate: e.x.fate }; });
  }
  function spanOf(x) { return x.fate === "edited" && x.span ? x.span : x.s; }

  function drawColumn(card, side) {
    var col = colOf(card, side);
    if (!col) return;
    var list = sideMarks(card.dataset.cand, side);
    var suggested = sideSuggestions(card.dataset.cand, side);
    segs(col).forEach(function (s) {
      var end = s.start + s.text.length;
      var cuts = [s.start, end];
      list.concat(suggested).forEach(function (x) {
        if (x.m.start > s.start && x.m.start < end) cuts.push(x.m.start);
        if (x.m.end > s.start && x.m.end < end) cuts.push(x.m.end);
      });
      cuts = cuts.sort(function (p, q) { return p - q; }).filter(function (v, i, arr) { return i === 0 || v !== arr[i - 1]; });
      var parts = [];
      for (var k = 0; k + 1 < cuts.length; k++) {
        var a = cuts[k], b = cuts[k + 1];
        var piece = s.text.slice(a - s.start, b - s.start);
        var over = list.filter(function (x) { return x.m.start <= a && x.m.end >= b; });
        var hint = suggested.filter(function (x) { return x.m.start <= a && x.m.end >= b; })[0];
        if (!over.length && hint) {
          var sm = document.createElement("mark");
          sm.className = "sugg sev-" + hint.m.severity + (hint.fate ? " is-" + hint.fate : "") +
            (editing === hint.sid ? " is-editing" : "");
          sm.dataset.sugg = hint.sid;
          sm.textContent = piece;
          parts.push(sm);
          continue;
        }
        if (!over.length) { parts.push(document.createTextNode(piece)); continue; }
        var top = over.reduce(function (p, q) { return SEVERITY_RANK[q.m.severity] > SEVERITY_RANK[p.m.severity] ? q : p; });
        var mark = document.createElement("mark");
        mark.className = "err sev-" + top.m.severity + (over.length > 1 ? " is-overlap" : "");
        mark.dataset.mark = over.map(function (x) { return x.i; }).join(" ");
        mark.textContent = piece;
        parts.push(mark);
      }
      s.el.replaceChildren.apply(s.el, parts);
    });
  }

  function severityName(sev) {
    var el = document.querySelector('[data-span-panel] [data-sev="' + sev + '"] [data-sev-name]');
    return el ? el.textContent.trim() : sev;
  }

  function listMarks(card) {
    var id = card.dataset.cand;
    var ul = card.querySelector("[data-mark-list]");
    if (!ul) return;
    var items = (marks[id] || []).map(function (m, i) {
      var li = document.createElement("li");
      li.className = "mark-item sev-" + m.severity;
      var badge = document.createElement("span");
      badge.className = "sev-badge sev-" + m.severity;
      badge.textContent = severityName(m.severity);
      li.appendChild(badge);
      if (m.category) {
        var cat = document.createElement("span");
        cat.className = "mark-cat";
        cat.lang = (document.querySelector("[data-cat-list]") || {dataset: {}}).dataset.lang || "";
        cat.textContent = m.category;
        li.appendChild(cat);
      }
      var quote = document.createElement("q");
      quote.className = "mark-quote";
      var col = colOf(card, m.side);
      if (col) { quote.lang = col.lang || ""; quote.dir = col.getAttribute("dir") || "auto"; }
      quote.textContent = col ? excerpt(col, m.start, m.end) : "";
      if (m.side === "source") {
        var where = document.createElement("span");
        where.className = "mark-side";
        where.textContent = word("in-source");
        li.appendChild(where);
      }
      li.appendChild(quote);
      var edit = document.createElement("button");
      edit.type = "button"; edit.className = "link-button"; edit.dataset.editMark = String(i);
      edit.textContent = word("edit");
      var del = document.createElement("button");
      del.type = "button"; del.className = "link-button danger"; del.dataset.deleteMark = String(i);
      del.textContent = word("delete");
      li.appendChild(edit); li.appendChild(del);
      return li;
    });
    ul.replaceChildren.apply(ul, items);
    var none = card.querySelector("[data-no-marks]");
    if (none) none.hidden = items.length > 0;
    var noError = card.querySelector("[data-no-error]");
    if (noError) {
      var any = items.length > 0 || liveSuggestions(id).length > 0;
      if (any) noError.checked = false;
      noError.disabled = any;
    }
  }

  function listSuggestions(card) {
    var ul = card.querySelector("[data-sugg-list]");
    if (!ul) return;
    var id = card.dataset.cand;
    var items = Object.keys(sugg).filter(function (sid) { return sugg[sid].s.candidate === id; }).map(function (sid) {
      var x = sugg[sid], m = spanOf(x);
      var li = document.createElement("li");
      li.className = "mark-item sugg-item" + (x.fate ? " is-" + x.fate : "");
      li.dataset.suggItem = sid;
      var state = document.createElement("span");
      state.className = "sugg-state";
      state.textContent = word("sugg-" + (x.fate || "open"));
      li.appendChild(state);
      var badge = document.createElement("span");
      badge.className = "sev-badge sev-" + m.severity;
      badge.textContent = severityName(m.severity);
      li.appendChild(badge);
      if (m.category) {
        var cat = document.createElement("span");
        cat.className = "mark-cat";
        cat.textContent = m.category;
        li.appendChild(cat);
      }
      var col = colOf(card, m.side);
      var quote = document.createElement("q");
      quote.className = "mark-quote";
      if (col) { quote.lang = col.lang || ""; quote.dir = col.getAttribute("dir") || "auto"; }
      quote.textContent = col ? excerpt(col, m.start, m.end) : "";
      li.appendChild(quote);
      var buttons = x.fate === "deleted" ? [["restore", "suggKeep", ""]]
        : [["keep", "suggKeep", ""], ["edit", "suggEdit", ""], ["delete", "suggDelete", " danger"]];
      buttons.forEach(function (b) {
        var button = document.createElement("button");
        button.type = "button"; button.className = "link-button" + b[2];
        button.dataset[b[1]] = sid;
        button.textContent = word(b[0]);
        li.appendChild(button);
      });
      return li;
    });
    ul.replaceChildren.apply(ul, items);
    var wrap = card.querySelector("[data-sugg-wrap]");
    if (wrap) wrap.hidden = items.length === 0;
  }

  function liveSuggestions(id) {
    return Object.keys(sugg).filter(function (sid) { return sugg[sid].s.candidate === id && sugg[sid].fate !== "deleted"; });
  }

  function redraw(card) {
    drawColumn(card, "target");
    drawColumn(card, "source");
    listSuggestions(card);
    listMarks(card);
    if (kb && card.contains(kb.col)) drawCaret();
  }

  function overlaps(id, mark, except) {
    return (marks[id] || []).some(function (m, i) {
      return i !== except && m.side === mark.side && m.start < mark.end && mark.start < m.end;
    });
  }

  /* A mouse or touch selection grows to whole words ("We should h" marks "We should have"), unless the
   * study marks within words (cfg.snap[side] false: by default for languages written without spaces). */
  function snapped(col, a, b) {
    if (!cfg.snap || !cfg.snap[col.dataset.side]) return [a, b];
    var chars = {};
    segs(col).forEach(function (s) { for (var i = 0; i < s.text.length; i++) chars[s.start + i] = s.text[i]; });
    var inWord = function (i) { return chars[i] !== undefined && /[\p{L}\p{N}\p{M}]/u.test(chars[i]); };
    while (a > 0 && inWord(a) && inWord(a - 1)) a--;
    while (inWord(b - 1) && inWord(b)) b++;
    return [a, b];
  }

  /* --- the popup ------------------------------------------------------------- */

  function clearProblem(card) {
    if (!card.hasAttribute("aria-invalid")) return;
    card.removeAttribute("aria-invalid");
    card.classList.remove("is-invalid");
    var problem = card.querySelector("[data-card-problem]");
    if (problem) problem.hidden = true;
    showMissing(all(root, "[data-cand][aria-invalid]"));
  }

  /* The message above the cards names the translations still unanswered; it goes once none is left. */
  function showMissing(missing) {
    var summary = root && root.parentElement.querySelector("[data-span-summary]");
    if (!summary) return;
    if (!missing.length) { summary.hidden = true; summary.textContent = ""; return; }
    var names = missing.map(function (card) {
      var title = card.querySelector(".card-title");
      return title ? title.textContent.trim() : "";
    }).join(", ");
    summary.textContent = word("not-yet").replace("{cards}", names);
    summary.hidden = false;
  }

  function showPanelProblem(text) {
    var p = panel().querySelector("[data-panel-problem]");
    p.textContent = text;
    p.hidden = !text;
  }

  function activeOption() {
    var filter = panel().querySelector("[data-cat-filter]");
    var id = filter && filter.getAttribute("aria-activedescendant");
    return id ? document.getElementById(id) : null;
  }
  function setActive(option) {
    var filter = panel().querySelector("[data-cat-filter]");
    all(panel(), "[data-cat]").forEach(function (o) { o.classList.toggle("is-active", o === option); });
    if (option) { filter.setAttribute("aria-activedescendant", option.id); option.scrollIntoView({ block: "nearest" }); }
    else filter.removeAttribute("aria-activedescendant");
  }
  function filterCategories() {
    var filter = panel().querySelector("[data-cat-filter]");
    var q = filter.value.trim().toLowerCase();
    var first = null;
    all(panel(), "[data-cat]").forEach(function (o) {
      var hit = !q || o.dataset.cat.toLowerCase().indexOf(q) >= 0;  /* by name (descriptions would blur it) */
      o.hidden = !hit;
      if (hit && !first) first = o;
    });
    var current = activeOption();
    setActive(current && !current.hidden ? current : first);
  }
  function moveActive(step) {
    var visible = all(panel(), "[data-cat]").filter(function (o) { return !o.hidden; });
    if (!visible.length) return;
    var k = visible.indexOf(activeOption());
    setActive(visible[Math.max(0, Math.min(visible.length - 1, k + step))]);
  }
  function chooseCategory(option) {
    if (!option || !pending) return;
    pending.category = option.dataset.cat;
    all(panel(), "[data-cat]").forEach(function (o) { o.setAttribute("aria-selected", o === option ? "true" : "false"); });
    setActive(option);
    showPanelProblem("");
    var sev = panel().querySelector("[data-sev]");
    if (sev) sev.focus();
  }

  function openPanel(card, col, a, b, edit) {
    var p = panel();
    if (!p) return;
    var existing = edit == null ? null : marks[card.dataset.cand][edit];
    var suggestion = edit == null && editing && sugg[editing] && sugg[editing].s.candidate === card.dataset.cand
      ? editing : null;
    if (suggestion) existing = spanOf(sugg[suggestion]);
    pending = { card: card, col: col, side: col.dataset.side, start: a, end: b, edit: edit, suggestion: suggestion,
                category: existing ? existing.category : null };
    var ex = p.querySelector("[data-panel-excerpt]");
    ex.textContent = excerpt(col, a, b);
    ex.lang = col.lang || ""; ex.dir = col.getAttribute("dir") || "auto";
    showPanelProblem("");
    var filter = p.querySelector("[data-cat-filter]");
    all(p, "[data-cat]").forEach(function (o) {
      o.hidden = false;
      o.setAttribute("aria-selected", existing && o.dataset.cat === existing.category ? "true" : "false");
    });
    all(p, "[data-sev]").forEach(function (s) { s.setAttribute("aria-pressed", existing && existing.severity === s.dataset.sev ? "true" : "false"); });
    p.hidden = false;
    shade({ col: col, start: a, end: b });
    if (hasHighlights) {  /* the words being marked stay visible once the focus is in the popup */
      var words = rangeFor(col, a, b);
      if (words) CSS.highlights.set("span-pending", new Highlight(words));
    }
    place(p, col, a, b);
    if (filter) {
      filter.value = "";
      setActive(existing ? p.querySelector('[data-cat="' + CSS.escape(existing.category) + '"]') : p.querySelector("[data-cat]"));
      filter.focus();
    } else {
      p.querySelector("[data-sev]").focus();
    }
  }

  /* Beside the selection, never over it: below it, else (after scrolling the page a little) below it,
   * else above it, else at the window's side away from it. Phones: a bottom sheet, the page scrolled so
   * the selection stays visible above it. spans.css adds room at the end of the page while it is open. */
  function place(p, col, a, b) {
    p.style.top = ""; p.style.left = "";
    var box = function () { var r = rangeFor(col, a, b); return (r || col).getBoundingClientRect(); };
    var w = p.offsetWidth, h = p.offsetHeight, vh = window.innerHeight, vw = window.innerWidth;
    document.documentElement.classList.add("span-sheet-open");
    if (vw < 600) {
      var over = box().bottom - (vh - h - 8);
      if (over > 0) window.scrollBy(0, over);
      return;
    }
    var sel = box();
    var needed = Math.ceil(sel.bottom + 8 + h - (vh - 8)) + 8;  /* + 8: rounding of fractional boxes */
    if (needed > 8 && needed <= sel.top - 60) { window.scrollBy(0, needed); sel = box(); }
    var top, left = Math.min(Math.max(8, sel.left), vw - w - 8);
    if (sel.bottom + 8 + h <= vh - 8) top = sel.bottom + 8;
    else if (sel.top - h - 8 >= 8) top = sel.top - h - 8;
    else {
      top = Math.max(8, Math.min(sel.top, vh - h - 8));
      left = (sel.left + sel.right) / 2 > vw / 2 ? Math.max(8, sel.left - w - 16) : Math.min(vw - w - 8, sel.right + 16);
    }
    p.style.top = top + "px";
    p.style.left = left + "px";
  }

  function closePanel(refocus) {
    var p = panel();
    if (p) p.hidden = true;
    var col = pending && pending.col;
    var card = pending && pending.suggestion ? pending.card : null;
    pending = null;
    if (card) { editing = null; redraw(card); }
    shade(null);
    if (hasHighlights) CSS.highlights.delete("span-pending");
    document.documentElement.classList.remove("span-sheet-open");
    if (refocus && col) col.focus();
  }

  function commit(severity) {
    if (!pending) return;
    if (cfg.categories.length && !pending.category) {  /* spans with a category (MQM's) */
      var option = activeOption();
      if (option && panel().querySelector("[data-cat-filter]").value.trim()) pending.category = option.dataset.cat;
      else { showPanelProblem(word("category")); return; }
    }
    var card = pending.card, id = card.dataset.cand;
    var mark = { start: pending.start, end: pending.end, side: pending.side, severity: severity };
    if (cfg.categories.length) mark.category = pending.category;
    var except = pending.edit == null ? -1 : pending.edit;
    if (except >= 0 && marks[id][except].note) mark.note = marks[id][except].note;  /* an API note survives an edit */
    if (!cfg.overlap && overlaps(id, mark, except)) { showPanelProblem(word("overlap")); return; }
    marks[id] = marks[id] || [];
    if (pending.suggestion) {
      var x = sugg[pending.suggestion];
      var same = x.s.start === mark.start && x.s.end === mark.end && x.s.side === mark.side &&
        x.s.severity === mark.severity && (x.s.category || null) === (mark.category || null);
      x.fate = same ? "kept" : "edited";
      x.span = same ? null : mark;
      editing = null;
    }
    else if (except >= 0) marks[id][except] = mark; else marks[id].push(mark);
    marks[id].sort(function (p, q) { return (p.side === q.side ? 0 : p.side === "target" ? -1 : 1) || p.start - q.start || p.end - q.end; });
    var col = pending.col;
    clearProblem(card);
    if (kb && kb.col === col) kb.anchor = kb.caret;
    window.getSelection().removeAllRanges();
    shade(null);
    redraw(card);
    announce(word("marked") + " " + excerpt(col, mark.start, mark.end) + " · " + severityName(severity) +
             (mark.category ? " · " + mark.category : ""));
    closePanel(true);
  }

  function announce(text) {
    var live = document.querySelector("[data-span-live]");
    if (live) live.textContent = text;
  }

  /* --- selection by mouse and touch -------------------------------------- */

  function columnAt(node) {
    var el = node && (node.nodeType === 1 ? node : node.parentElement);
    return el && el.closest ? el.closest("[data-span-cards] [data-col]") : null;
  }

  /* The stretch of one text a selection covers. A drag that starts outside the text (between lines, below
   * the last one, over a heading) belongs to the text it ends in, clipped to it; mouse and touch selections
   * are snapped to whole words (snapped()). */
  function selectionInColumn() {
    var sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    var col = columnAt(sel.anchorNode);
    if (!markable(col)) col = columnAt(sel.focusNode);
    if (!markable(col)) return null;
    var a = pointOffset(col, sel.anchorNode, sel.anchorOffset);
    var b = pointOffset(col, sel.focusNode, sel.focusOffset);
    var span = trimmed(col, Math.min(a, b), Math.max(a, b));
    if (!span) return null;
    span = snapped(col, span[0], span[1]);
    return { col: col, start: span[0], end: span[1] };
  }

  function openFromSelection() {
    var found = selectionInColumn();
    if (!found) return false;
    var shown = rangeFor(found.col, found.start, found.end);  /* what is selected on screen is what is marked */
    if (shown) { var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(shown); }
    kb = { col: found.col, caret: found.end, anchor: found.start };
    openPanel(cardOf(found.col), found.col, found.start, found.end, null);
    return true;
  }

  /* --- keyboard caret ------------------------------------------------------- */

  function drawCaret() {
    if (!hasHighlights) return;
    CSS.highlights.delete("span-kbd");
    CSS.highlights.delete("span-caret");
    if (!kb || document.activeElement !== kb.col) return;
    var a = Math.min(kb.caret, kb.anchor), b = Math.max(kb.caret, kb.anchor);
    if (a < b) {
      var r = rangeFor(kb.col, a, b);
      if (r) CSS.highlights.set("span-kbd", new Highlight(r));
    }
    var len = textLength(kb.col);
    var c = kb.caret < len ? kb.caret : len - 1;
    if (c >= 0) {
      var rc = rangeFor(kb.col, c, c + 1);
      if (rc) CSS.highlights.set("span-caret", new Highlight(rc));
    }
  }

  function wordJump(col, from, step) {
    var text = new Array(textLength(col) + 1).join(" ").split("");
    segs(col).forEach(function (s) { for (var i = 0; i < s.text.length; i++) text[s.start + i] = s.text[i]; });
    var isWord = function (i) { return i >= 0 && i < text.length && /[\p{L}\p{N}]/u.test(text[i]); };
    var i = from;
    if (step > 0) { while (i < text.length && !isWord(i)) i++; while (i < text.length && isWord(i)) i++; }
    else { while (i > 0 && !isWord(i - 1)) i--; while (i > 0 && isWord(i - 1)) i--; }
    return i;
  }

  function segmentJump(col, from, step) {
    var starts = segs(col).map(function (s) { return s.start; });
    if (step > 0) { for (var k = 0; k < starts.length; k++) if (starts[k] > from) return starts[k]; return textLength(col); }
    for (var j = starts.length - 1; j >= 0; j--) if (starts[j] < from) return starts[j];
    return 0;
  }

  function caretKey(event, col) {
    var key = event.key, len = textLength(col);
    if (!kb || kb.col !== col) kb = { col: col, caret: 0, anchor: 0 };
    var forward = isRtl(col) ? "ArrowLeft" : "ArrowRight";
    var back = isRtl(col) ? "ArrowRight" : "ArrowLeft";
    var next = null;
    if (key === forward) next = event.ctrlKey ? wordJump(col, kb.caret, 1) : kb.caret + 1;
    else if (key === back) next = event.ctrlKey ? wordJump(col, kb.caret, -1) : kb.caret - 1;
    else if (key === "ArrowDown") next = segmentJump(col, kb.caret, 1);
    else if (key === "ArrowUp") next = segmentJump(col, kb.caret, -1);
    else if (key === "Home") next = 0;
    else if (key === "End") next = len;
    if (next !== null) {
      kb.caret = Math.max(0, Math.min(len, next));
      if (!event.shiftKey) kb.anchor = kb.caret;
      drawCaret();
      var a = Math.min(kb.caret, kb.anchor), b = Math.max(kb.caret, kb.anchor);
      shade(a < b ? { col: col, start: a, end: b } : null);
      if (a < b) announce(word("selected") + " " + excerpt(col, a, b));
      return true;
    }
    if (key === "Enter" && kb.caret !== kb.anchor) {
      var span = trimmed(col, Math.min(kb.caret, kb.anchor), Math.max(kb.caret, kb.anchor));
      if (!span) return true;
      openPanel(cardOf(col), col, span[0], span[1], null);
      return true;
    }
    if (key === "Escape" && editing) {
      var was = cardOf(col);
      editing = null; kb.anchor = kb.caret; drawCaret(); shade(null); redraw(was);
      return true;
    }
    if (key === "Escape" && kb.caret !== kb.anchor) {
      kb.anchor = kb.caret; drawCaret(); shade(null);
      return true;
    }
    return false;
  }

  function panelKey(event) {
    var key = event.key;
    var target = event.target;
    if (key === "Escape") { closePanel(true); return true; }
    if (key === "Tab") { trapTab(event); return true; }
    var filter = panel().querySelector("[data-cat-filter]");
    if (target === filter) {
      if (key === "ArrowDown") { moveActive(1); return true; }
      if (key === "ArrowUp") { moveActive(-1); return true; }
      if (key === "Enter") { chooseCategory(activeOption()); return true; }
      if (/^[0-9]$/.test(key)) {  /* digits never start a category: a severity key once one is chosen or shown */
        var sevByDigit = severityForKey(key);
        if (sevByDigit) { if (!pending.category && activeOption()) pending.category = activeOption().dataset.cat; commit(sevByDigit); }
        return true;
      }
      event.stopPropagation();  /* letters go into the filter, never to the page's shortcuts */
      return false;
    }
    if (key === "Enter" || key === " ") return false;  /* buttons' own activation */
    if (key === "ArrowDown" || key === "ArrowRight" || key === "ArrowUp" || key === "ArrowLeft") {
      var buttons = all(panel(), "[data-sev]");
      var k = buttons.indexOf(target);
      if (k >= 0) {
        var step = key === "ArrowDown" || key === "ArrowRight" ? 1 : -1;
        buttons[(k + step + buttons.length) % buttons.length].focus();
      }
      return true;
    }
    var sev = severityForKey(key);
    if (sev) { commit(sev); return true; }
    return true;  /* nothing else typed in the popup reaches the page's shortcuts */
  }

  /* Tab and Shift+Tab go round the popup's controls, never out of it (Esc or a severity closes it). */
  function trapTab(event) {
    var stops = all(panel(), "input, button, [tabindex]").filter(function (el) {
      return !el.disabled && !el.hidden && el.tabIndex >= 0 && el.getClientRects().length > 0;
    });
    if (!stops.length) return;
    var k = stops.indexOf(event.target);
    var next = event.shiftKey ? (k <= 0 ? stops.length - 1 : k - 1) : (k + 1) % stops.length;
    stops[next].focus();
  }

  function severityForKey(key) {
    var button = all(panel(), "[data-sev]").filter(function (b) { return b.dataset.keys.split(" ").indexOf(key) >= 0; })[0];
    return button ? button.dataset.sev : null;
  }

  /* --- source shading (token overlap) ------------------------------------- */

  function tokens(text) {
    var out = [], m;
    WORD.lastIndex = 0;
    while ((m = WORD.exec(text))) out.push({ word: m[0].toLowerCase(), start: m.index, end: m.index + m[0].length });
    return out;
  }
  function sameToken(p, q) {
    if (p === q) return true;
    var n = 0;
    while (n < p.length && n < q.length && p[n] === q[n]) n++;
    return n >= 4;
  }

  function shade(found) {
    if (!hasHighlights) return;
    cancelAnimationFrame(shadeFrame);
    if (!found || found.col.dataset.side !== "target") { CSS.highlights.delete("span-source"); return; }
    shadeFrame = requestAnimationFrame(function () {
      var card = cardOf(found.col), source = colOf(card, "source");
      if (!source) return;
      var targetSegs = segs(found.col), sourceSegs = segs(source);
      var picked = tokens(excerpt(found.col, found.start, found.end)).map(function (t) { return t.word; });
      var ranges = [];
      targetSegs.forEach(function (s, row) {
        if (s.start >= found.end || s.start + s.text.length <= found.start || !sourceSegs[row]) return;
        var src = sourceSegs[row];
        var hits = tokens(src.text).filter(function (t) { return picked.some(function (w) { return sameToken(w, t.word); }); });
        if (!hits.length) return;
        var r = rangeFor(source, src.start + hits[0].start, src.start + hits[hits.length - 1].end);
        if (r) ranges.push(r);
      });
      if (ranges.length) CSS.highlights.set("span-source", new Highlight(...ranges));
      else CSS.highlights.delete("span-source");
    });
  }

  /* --- scores ------------------------------------------------------------------ */

  function scoreOf(card) {
    var number = card.querySelector("[data-score-number]");
    if (!number || number.value === "") return null;
    var v = Number(number.value);
    return isFinite(v) ? v : number.value;
  }
  function syncSlider(card, fromSlider) {
    var slider = card.querySelector("[data-score-slider]"), number = card.querySelector("[data-score-number]");
    if (!slider || !number) return;
    if (fromSlider) number.value = slider.value;
    else if (number.value !== "") slider.value = number.value;
    var unset = number.value === "";
    slider.classList.toggle("is-unset", unset);
    if (unset) slider.setAttribute("aria-valuetext", word("no-score")); else slider.removeAttribute("aria-valuetext");
    clearProblem(card);
    hideNudge(card);
  }
  function hideNudge(card) { var n = card.querySelector("[data-nudge]"); if (n) n.hidden = true; }

  /* --- the answer and submit ----------------------------------------------------- */

  function answer() {
    var out = {};
    all(root, "[data-cand]").forEach(function (card) {
      var id = card.dataset.cand, entry = {};
      if (cfg.spans) {
        var list = (marks[id] || []).map(function (m) {
          var s = { start: m.start, end: m.end, side: m.side, severity: m.severity };
          if (m.category) s.category = m.category;
          if (m.note) s.note = m.note;
          return s;
        });
        var noError = card.querySelector("[data-no-error]");
        if (list.length || cfg.score || (noError && noError.checked) || liveSuggestions(id).length) entry.spans = list;
      }
      if (cfg.score) { var score = scoreOf(card); if (score !== null) entry.score = score; }
      if (Object.keys(entry).length) out[id] = entry;
    });
    return out;
  }

  /* Every suggestion's fate; one left as it is counts as kept. */
  function fates() {
    var out = {};
    Object.keys(sugg).forEach(function (sid) {
      var x = sugg[sid], fate = x.fate || "kept";
      var f = { fate: fate, candidate: x.s.candidate };
      if (fate === "edited") {
        f.start = x.span.start; f.end = x.span.end; f.side = x.span.side; f.severity = x.span.severity;
        if (x.span.category) f.category = x.span.category;
      }
      out[sid] = f;
    });
    return out;
  }

  function unanswered(card, entry) {
    if (!entry) return true;
    if (cfg.score) return entry.score === undefined;
    return entry.spans === undefined;
  }

  // The translation first: most marks are in it (the source only takes omissions).
  function firstColumn(card) {
    return card.querySelector('[data-side="target"][tabindex]') || card.querySelector("[data-col][tabindex]");
  }

  function focusCard(card) {
    var target = card.querySelector("[data-score-slider]") && cfg.score && scoreOf(card) === null
      ? card.querySelector("[data-score-slider]")
      : firstColumn(card) || card.querySelector("input");
    card.scrollIntoView({ block: "nearest" });
    if (target) target.focus();
  }

  function nudgeText(card, entry) {
    if (!cfg.score || !cfg.spans || !entry || entry.score === undefined) return "";
    var spans = entry.spans || [];
    if (entry.score < cfg.nudgeLow && spans.length === 0) return word("nudge-low");
    if (entry.score > cfg.nudgeHigh && spans.some(function (s) { return SEVERITY_RANK[s.severity] >= 2; })) return word("nudge-high");
    return "";
  }

  function onSubmit(event) {
    var form = event.target;
    if (!root || !form.contains || !form.contains(root)) return;
    var value = answer();
    var missing = all(root, "[data-cand]").filter(function (card) { return unanswered(card, value[card.dataset.cand]); });
    var stop = function () { event.preventDefault(); event.stopImmediatePropagation(); };
    if (missing.length) {
      stop();
      missing.forEach(function (card) {
        var problem = card.querySelector("[data-card-problem]");
        problem.replaceChildren(document.createElement("p"));
        problem.firstChild.textContent = word("unanswered");
        problem.hidden = false;
        card.setAttribute("aria-invalid", "true");
        card.classList.add("is-invalid");
      });
      showMissing(missing);
      focusCard(missing[0]);
      return;
    }
    showMissing([]);
    var signature = JSON.stringify(value);
    var nudged = all(root, "[data-cand]").filter(function (card) {
      var text = nudgeText(card, value[card.dataset.cand]);
      var box = card.querySelector("[data-nudge]");
      box.textContent = text;
      box.hidden = !text;
      if (text) box.setAttribute("role", "alert");
      return !!text;
    });
    if (nudged.length && nudgedFor !== signature) {
      stop();
      nudgedFor = signature;
      focusCard(nudged[0]);
      return;
    }
    form.querySelector("[data-annotations]").value = signature;
    var field = form.querySelector("[data-suggestions-field]");
    if (field) field.value = JSON.stringify(fates());
  }

  /* --- wiring ------------------------------------------------------------------------ */

  function init() {
    var found = document.querySelector("[data-span-cards]");
    if (!found || found.dataset.spansReady) return;
    found.dataset.spansReady = "1";
    root = found;
    cfg = JSON.parse(document.getElementById("span-config").textContent);
    marks = {};
    sugg = {};
    pending = null; kb = null; nudgedFor = null; editing = null;
    (cfg.suggestions || []).forEach(function (s) {
      var given = (cfg.fates || {})[s.id] || null;
      var x = { s: s, fate: given ? given.fate : null, span: null };
      if (given && given.fate === "edited") {
        x.span = { start: given.start, end: given.end, side: given.side || "target", severity: given.severity };
        if (given.category) x.span.category = given.category;
      }
      sugg[s.id] = x;
    });
    Object.keys(cfg.initial || {}).forEach(function (id) {
      marks[id] = (cfg.initial[id].spans || []).map(function (s) {
        var m = { start: s.start, end: s.end, side: s.side || "target", severity: s.severity };
        if (s.category) m.category = s.category;
        if (s.note) m.note = s.note;
        return m;
      });
    });
    all(root, "[data-cand]").forEach(redraw);
    var invalid = root.querySelector("[data-cand][aria-invalid]");
    var first = invalid || root.querySelector("[data-cand]");
    if (first && (invalid || !document.activeElement || document.activeElement === document.body)) focusCard(first);
    else if (first) { var col = firstColumn(first); if (col) col.focus(); }
  }

  document.addEventListener("DOMContentLoaded", init);
  document.addEventListener("htmx:load", init);
  if (document.readyState !== "loading") init();

  document.addEventListener("pointerdown", function (event) {
    lastPointer = event.pointerType || "mouse";
    var p = panel();
    if (p && !p.hidden && !p.contains(event.target)) closePanel(false);
    /* Anywhere on a card: a drag may start beside or below the text and end in it (selectionInColumn). */
    if (event.target.closest && event.target.closest("[data-span-cards] [data-cand]") &&
        !event.target.closest("button, input, a, label, select, textarea")) pointerDown = true;
  }, true);
  document.addEventListener("pointerup", function (event) {
    if (!pointerDown) return;
    pointerDown = false;
    if (lastPointer === "touch") return;  /* touch: once the selection rests (selectionchange) */
    setTimeout(openFromSelection, 0);
  }, true);
  document.addEventListener("selectionchange", function () {
    if (!root) return;
    if (pending) return;  /* the popup is open: its stretch stays shaded (focusing the filter moves the selection) */
    var found = selectionInColumn();
    shade(found);
    clearTimeout(touchTimer);
    if (found && !pointerDown && (lastPointer === "touch" || lastPointer === "pen")) {
      touchTimer = setTimeout(function () { var p = panel(); if (p && p.hidden) openFromSelection(); }, 600);
    }
  });

  document.addEventListener("focusin", function (event) {
    var col = event.target.closest && event.target.closest("[data-span-cards] [data-col][tabindex]");
    if (col && (!kb || kb.col !== col)) kb = { col: col, caret: 0, anchor: 0 };
    drawCaret();
  });
  document.addEventListener("focusout", function () { setTimeout(drawCaret, 0); });

  document.addEventListener("keydown", function (event) {
    if (!root || event.isComposing || event.metaKey || event.altKey) return;
    var p = panel();
    var handled = false;
    if (p && !p.hidden && p.contains(event.target)) handled = panelKey(event);
    else if (p && !p.hidden && event.key === "Escape") { closePanel(true); handled = true; }  /* Esc closes it from anywhere */
    else if (p && !p.hidden && event.key === "Tab") { (p.querySelector("[data-cat-filter]") || p.querySelector("[data-sev]")).focus(); handled = true; }
    else if (event.target.matches && event.target.matches("[data-span-cards] [data-col][tabindex]")) handled = caretKey(event, event.target);
    else if (event.target.matches && event.target.matches("[data-score-slider]") && (event.key === "PageUp" || event.key === "PageDown")) {
      var s = event.target;
      s.value = Math.max(Number(s.min), Math.min(Number(s.max), Number(s.value) + (event.key === "PageUp" ? 10 : -10)));
      s.dispatchEvent(new Event("input", { bubbles: true }));
      handled = true;
    }
    if (handled) { event.preventDefault(); event.stopPropagation(); }
  }, true);

  document.addEventListener("input", function (event) {
    var card = cardOf(event.target);
    if (!card || !root || !root.contains(card)) {
      if (event.target.matches && event.target.matches("[data-cat-filter]")) filterCategories();
      return;
    }
    if (event.target.matches("[data-score-slider]")) syncSlider(card, true);
    else if (event.target.matches("[data-score-number]")) syncSlider(card, false);
  });
  /* A click on an untouched slider gives the value under the pointer, even the 50 it already shows
   * (no input event fires then). */
  document.addEventListener("click", function (event) {
    var slider = event.target.matches && event.target.matches("[data-score-slider]") ? event.target : null;
    var card = slider && cardOf(slider);
    if (card && scoreOf(card) === null) syncSlider(card, true);
  });
  document.addEventListener("change", function (event) {
    var card = cardOf(event.target);
    if (card && event.target.matches("[data-no-error]")) clearProblem(card);
  });

  document.addEventListener("click", function (event) {
    var t = event.target.closest ? event.target : null;
    if (!t || !root) return;
    var option = t.closest("[data-span-panel] [data-cat]");
    if (option) { chooseCategory(option); return; }
    var sev = t.closest("[data-span-panel] [data-sev]");
    if (sev) { commit(sev.dataset.sev); return; }
    if (t.closest("[data-panel-cancel]")) { closePanel(true); return; }
    var sb = t.closest("[data-sugg-keep], [data-sugg-edit], [data-sugg-delete]");
    if (sb) { suggestionAction(sb); return; }
    var edit = t.closest("[data-edit-mark]"), del = t.closest("[data-delete-mark]");
    if (!edit && !del) return;
    var card = cardOf(t), id = card.dataset.cand;
    var index = parseInt((edit || del).dataset[edit ? "editMark" : "deleteMark"], 10);
    var m = marks[id][index];
    if (edit) { openPanel(card, colOf(card, m.side), m.start, m.end, index); return; }
    marks[id].splice(index, 1);
    redraw(card);
    hideNudge(card);
    var next = card.querySelector("[data-delete-mark]") || colOf(card, "target");
    if (next) next.focus();
  });

  /* Keep, Edit or Delete a suggestion (its list's buttons: mouse, or Tab and Enter). */
  function suggestionAction(button) {
    var card = cardOf(button);
    var sid = button.dataset.suggKeep || button.dataset.suggEdit || button.dataset.suggDelete;
    var x = sugg[sid];
    if (!x || !card) return;
    if (button.dataset.suggEdit) { startEdit(card, sid); return; }
    var keep = !!button.dataset.suggKeep;
    x.fate = keep ? "kept" : "deleted";
    x.span = null;
    if (editing === sid) editing = null;
    redraw(card);
    clearProblem(card);
    hideNudge(card);
    announce(word(keep ? "sugg-kept" : "sugg-deleted") + ": " + excerpt(colOf(card, x.s.side), x.s.start, x.s.end));
    var again = card.querySelector('[data-sugg-item="' + CSS.escape(sid) + '"] button');
    if (again) again.focus();
  }

  /* Edit: the suggestion's stretch becomes the text's selection; Shift + arrows or the mouse change it, and
   * Enter (or releasing the mouse) opens the popup with its category and severity. */
  function startEdit(card, sid) {
    var m = spanOf(sugg[sid]);
    var col = colOf(card, m.side);
    if (!col) return;
    editing = sid;
    col.focus();
    kb = { col: col, anchor: m.start, caret: m.end };
    redraw(card);
    drawCaret();
    announce(word("sugg-edit-hint"));
  }

  /* Capture phase, after annotate.js's time stamp: runs before htmx reads the form. */
  document.addEventListener("submit", onSubmit, true);
})();
