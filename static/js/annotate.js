/* Keyboard for the annotator's item page (progressive enhancement, no framework).
 *
 * The page works without this file: plain radios, checkboxes and a submit
 * button. This adds shortcuts (see the legend on the page and docs/annotator.md),
 * keeps ranks unique when ties are not allowed, fills in the last free rank
 * (undoable), shows the selected state, keeps keys typed while the next item
 * loads and replays them on it, and records the client's start/submit times.
 * Keys are ignored while typing in a text field or when a modifier key is held.
 * Every word the annotator reads is in the templates (translated), none here.
 */
(function () {
  "use strict";

  function isTyping(el) {
    if (!el) return false;
    if (el.isContentEditable) return true;
    var tag = el.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT") return true;
    if (tag !== "INPUT") return false;
    var type = (el.getAttribute("type") || "text").toLowerCase();
    return ["radio", "checkbox", "button", "submit", "reset", "hidden", "range", "color", "file", "image"].indexOf(type) < 0;
  }

  function root() { return document.querySelector("[data-item]"); }
  function cards(item) { return Array.prototype.slice.call(item.querySelectorAll("[data-card]")); }
  function checkedIn(el) { return el.querySelector("input:checked"); }

  function refreshSelected(item) {
    cards(item).forEach(function (card) { card.classList.toggle("is-selected", !!checkedIn(card)); });
    item.querySelectorAll(".option, .label-choice").forEach(function (el) {
      el.classList.toggle("is-selected", !!checkedIn(el));
    });
  }

  /* A card the server refused stops being marked once the annotator changes its answer. */
  function clearInvalid(card) {
    if (!card || card.getAttribute("aria-invalid") !== "true") return;
    card.removeAttribute("aria-invalid");
    card.removeAttribute("aria-describedby");
    card.classList.remove("is-invalid");
    var problem = card.querySelector("[data-card-problem]");
    if (problem) problem.hidden = true;
    var group = card.querySelector("fieldset[aria-invalid]");
    if (group) group.removeAttribute("aria-invalid");
  }

  function focusCard(card) {
    if (!card) return;
    var target = card.querySelector("input:checked") || card.querySelector("input");
    if (target) target.focus();
  }

  function check(input) {
    if (!input) return;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    input.focus();
  }

  /* Without ties a rank belongs to one card: taking it from another card gives
   * that card the rank this card had (a swap), or clears it. */
  function keepRanksUnique(item, changed) {
    if (item.dataset.allowTies === "true" || changed.type !== "radio" || !changed.dataset.rank) return;
    var card = changed.closest("[data-card]");
    var previous = card.dataset.previousRank || "";
    cards(item).forEach(function (other) {
      if (other === card) return;
      var clash = other.querySelector('input[data-rank="' + changed.value + '"]:checked');
      if (!clash) return;
      clash.checked = false;
      var swap = previous && other.querySelector('input[data-rank="' + previous + '"]');
      if (swap) swap.checked = true;
      other.dataset.previousRank = swap ? previous : "";
    });
    card.dataset.previousRank = changed.value;
  }

  /* Without ties, once every card but one has a rank, the one rank left can
   * only go to that card: fill it in (one action fewer per item) and offer an
   * undo (the button under the card, or Backspace). */
  var lastAutofill = null;

  function clearAutofill(item) {
    cards(item).forEach(function (card) {
      var note = card.querySelector("[data-autofill-note]");
      if (note) note.hidden = true;
    });
    lastAutofill = null;
  }

  function autofillLastRank(item) {
    if (item.dataset.protocol !== "ranking" || item.dataset.allowTies === "true") return;
    var all = cards(item);
    var open = all.filter(function (c) { return !c.querySelector("input[data-rank]:checked"); });
    if (open.length !== 1 || all.length < 2) return;
    var used = {};
    all.forEach(function (c) {
      var r = c.querySelector("input[data-rank]:checked");
      if (r) used[r.value] = true;
    });
    var free = Array.prototype.filter.call(open[0].querySelectorAll("input[data-rank]"), function (input) {
      return !used[input.value];
    });
    if (free.length !== 1) return;
    free[0].checked = true;
    open[0].dataset.previousRank = free[0].value;
    var note = open[0].querySelector("[data-autofill-note]");
    if (note) note.hidden = false;
    clearInvalid(open[0]);
    lastAutofill = { card: open[0], input: free[0] };
  }

  function undoAutofill(item) {
    if (!lastAutofill || !item.contains(lastAutofill.card)) return false;
    var card = lastAutofill.card;
    lastAutofill.input.checked = false;
    card.dataset.previousRank = "";
    clearAutofill(item);
    refreshSelected(item);
    focusCard(card);
    return true;
  }

  /* Remember a card's rank just before something may change it (a click, a
   * key), so the swap above works even if the card was never initialised. */
  function snapshot(card) {
    if (!card) return;
    var c = card.querySelector("input[data-rank]:checked");
    card.dataset.previousRank = c ? c.value : "";
  }

  function rememberRanks(item) {
    cards(item).forEach(function (card) {
      var c = card.querySelector("input[data-rank]:checked");
      card.dataset.previousRank = c ? c.value : "";
    });
  }

  function init(item) {
    if (!item || item.dataset.ready) return;
    item.dataset.ready = "1";
    var started = item.querySelector("[data-started]");
    if (started) started.value = new Date().toISOString();
    rememberRanks(item);
    refreshSelected(item);
    var errors = item.querySelector("#item-errors");
    if (item.dataset.protocol === "ranking") {
      var all = cards(item);
      var firstOpen = all.filter(function (c) { return !c.querySelector("input[data-rank]:checked"); })[0];
      focusCard(firstOpen || all[0]);
    } else if (!item.querySelector("[data-span-cards]")) {  // span pages: spans.js focuses the first text
      var first = item.querySelector("input:checked") || item.querySelector("input[type=radio], input[type=checkbox]");
      if (first) first.focus();
    }
    if (errors) errors.scrollIntoView({ block: "nearest" });
    lastAutofill = null;
  }

  ["pointerdown", "keydown"].forEach(function (type) {
    document.addEventListener(type, function (event) {
      var card = event.target.closest && event.target.closest("[data-item] [data-card]");
      if (card) snapshot(card);
    }, true);
  });

  document.addEventListener("change", function (event) {
    var item = event.target.closest && event.target.closest("[data-item]");
    if (!item) return;
    keepRanksUnique(item, event.target);
    clearInvalid(event.target.closest("[data-card]"));
    if (event.target.dataset && event.target.dataset.rank) {
      clearAutofill(item);
      autofillLastRank(item);
    }
    refreshSelected(item);
  });

  document.addEventListener("click", function (event) {
    var undo = event.target.closest && event.target.closest("[data-autofill-undo]");
    if (undo) undoAutofill(undo.closest("[data-item]"));
  });

  // Capture phase: runs before htmx reads the form.
  document.addEventListener("submit", function (event) {
    var stamp = event.target.querySelector && event.target.querySelector("[data-submitted]");
    if (stamp) stamp.value = new Date().toISOString();
  }, true);

  function moveCard(item, step) {
    var all = cards(item);
    var current = document.activeElement && document.activeElement.closest("[data-card]");
    var index = current ? all.indexOf(current) + step : 0;
    focusCard(all[Math.max(0, Math.min(all.length - 1, index))]);
  }

  function rankKey(item, rank) {
    var all = cards(item);
    var card = pendingCard || (document.activeElement && document.activeElement.closest("[data-card]"));
    if (!card || all.indexOf(card) < 0) {
      card = all.filter(function (c) { return !c.querySelector("input[data-rank]:checked"); })[0] || all[0];
    }
    var input = card && card.querySelector('input[data-rank="' + rank + '"]');
    if (!input) return false;
    snapshot(card);
    check(input);
    var next = all[all.indexOf(card) + 1];
    if (next) focusCard(next);
    return true;
  }

  /* Ranks of 10 and more: "0" is rank 10, and two digits typed within
   * TWO_DIGIT_MS make one rank ("1", "2" = 12). Only a digit that can start a
   * two-digit rank of this item waits (on items with 10+ candidates), and the
   * wait is visible: the card shows the digit with an ellipsis ("1…") until a
   * second digit, the timeout, or Space (which takes the digit alone at once:
   * "1 Space 2" ranks two cards 1 and 2 however fast it is typed). */
  var TWO_DIGIT_MS = 800;
  var pendingDigit = "";
  var pendingCard = null;
  var pendingTimer = null;

  function showPending(card, digit) {
    if (!card) return;
    var badge = card.querySelector("[data-pending-digit]");
    if (!digit) { if (badge) badge.remove(); card.classList.remove("is-pending"); return; }
    if (!badge) {
      badge = document.createElement("span");
      badge.className = "pending-digit";
      badge.setAttribute("data-pending-digit", "");
      badge.setAttribute("aria-live", "polite");
      var title = card.querySelector(".card-title") || card.firstElementChild;
      if (title) title.appendChild(badge); else card.appendChild(badge);
    }
    badge.setAttribute("data-pending-digit", digit);  /* drawn by CSS as "1…" */
    badge.title = card.closest("[data-item]").dataset.pendingHint || "";
    card.classList.add("is-pending");
  }

  function flushPending(item) {
    if (!pendingDigit) return;
    var digit = pendingDigit;
    clearTimeout(pendingTimer);
    pendingDigit = "";
    showPending(pendingCard, "");
    rankKey(item, digit);
    pendingCard = null;
  }

  function rankDigit(item, digit) {
    var n = cards(item).length;
    if (pendingDigit) {
      var combined = pendingDigit + digit;
      clearTimeout(pendingTimer);
      if (parseInt(combined, 10) <= n) {
        pendingDigit = "";
        showPending(pendingCard, "");
        var ok = rankKey(item, combined);
        pendingCard = null;
        return ok;
      }
      flushPending(item);
    }
    if (digit === "0") return rankKey(item, "10");
    if (n >= 10 && parseInt(digit, 10) * 10 <= n) {
      pendingDigit = digit;
      pendingCard = document.activeElement && document.activeElement.closest("[data-card]");
      showPending(pendingCard, digit);
      pendingTimer = setTimeout(function () { flushPending(item); }, TWO_DIGIT_MS);
      return true;
    }
    return rankKey(item, digit);
  }

  function choiceKey(item, key) {
    var input = item.querySelector('.options input[data-key="' + key + '"]') ||
      item.querySelector('[data-card] input[data-key="' + key + '"]') ||
      (/^[1-9]$/.test(key) && item.querySelector('[data-card] input[data-number="' + key + '"]'));
    if (!input) return false;
    check(input);
    return true;
  }

  function labelKey(item, digit) {
    var input = item.querySelector('.labels input[data-number="' + digit + '"]');
    if (!input) return false;
    if (input.type === "checkbox") {
      input.checked = !input.checked;
      input.dispatchEvent(new Event("change", { bubbles: true }));
      input.focus();
    } else {
      check(input);
    }
    return true;
  }

  /* One key on the current item; true when it was a shortcut. ``target`` is
   * where the key was typed (the focused element at replay time for buffered keys). */
  function handleKey(key, target) {
    var back = document.querySelector("[data-back]");
    var item = root();
    if ((key === "u" || key === "U") && back) {
      if (item) flushPending(item);
      back.click();
      return true;
    }
    if (!item) return false;
    var form = item.querySelector("[data-item-form]");
    var protocol = item.dataset.protocol;
    if (key === "Enter") {
      var tag = target && target.tagName;
      if (tag === "A" || tag === "BUTTON" || tag === "SUMMARY") return false;  // their own Enter
      if (!form) return false;
      flushPending(item);
      if (form.requestSubmit) form.requestSubmit(); else form.submit();
      return true;
    }
    if (protocol === "ranking") {
      if (key === "ArrowDown" || key === "ArrowRight") { flushPending(item); moveCard(item, 1); return true; }
      if (key === "ArrowUp" || key === "ArrowLeft") { flushPending(item); moveCard(item, -1); return true; }
      if (key === "Backspace") return undoAutofill(item);
      if (/^[0-9]$/.test(key)) return rankDigit(item, key);
      if (key === " " && pendingDigit) { flushPending(item); return true; }
      return false;
    }
    if (protocol === "choice") return key.length === 1 && choiceKey(item, key.toLowerCase());
    if (protocol === "judgment") return /^[1-9]$/.test(key) && labelKey(item, key);
    return false;
  }

  /* While htmx fetches the next item, the keys typed for it are kept (in
   * order) and replayed once it is on screen, so nothing typed ahead is lost
   * and the next Enter submits the next item. The page shows a loading note. */
  var loading = false;
  var typedAhead = [];
  var BUFFERED = /^([0-9a-zA-Z ]|Enter|Backspace|Arrow(Up|Down|Left|Right))$/;

  function setLoading(on) {
    loading = on;
    document.documentElement.classList.toggle("is-loading", on);
    var note = document.querySelector("[data-loading-note]");
    if (note) note.hidden = !on;
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail && event.detail.elt;
    if (elt && elt.closest && elt.closest("[data-item]")) {
      var item = root();
      if (item) flushPending(item);
      setLoading(true);
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    // A failed request (network error, 5xx) swaps nothing: stop waiting, drop what was typed.
    if (loading && event.detail && !event.detail.successful) {
      typedAhead = [];
      setLoading(false);
    }
  });

  function replayTypedAhead() {
    var keys = typedAhead;
    typedAhead = [];
    for (var k = 0; k < keys.length && !loading; k++) {
      handleKey(keys[k], document.activeElement);
      // An Enter replayed here starts the next request; what follows it waits for that item.
      if (loading) typedAhead = keys.slice(k + 1);
    }
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    var target = event.target;
    if (isTyping(target)) return;
    if (loading) {
      if (BUFFERED.test(event.key)) {
        typedAhead.push(event.key);
        event.preventDefault();
      }
      return;
    }
    if (handleKey(event.key, target)) event.preventDefault();
  });

  // After htmx's own DOMContentLoaded handler (its script comes first), so
  // data-ready also means htmx has wired up the form and the back link.
  document.addEventListener("DOMContentLoaded", function () { init(root()); });
  // htmx:load fires for content htmx has just put into the page (the new #item).
  document.addEventListener("htmx:load", function () {
    var item = root();
    if (item && !item.dataset.ready) {
      window.scrollTo(0, 0);
      init(item);
      setLoading(false);
      replayTypedAhead();
    }
  });
  if (document.readyState === "complete") init(root());

  // htmx swaps nothing on an error status or a lost connection, so the answer stays in the form;
  // show the (translated) message the template holds, or the annotator would think it was saved.
  function notSaved(event) {
    var form = event.target.closest && event.target.closest("[data-item-form]");
    var box = form && form.querySelector("[data-not-saved]");
    if (box) { box.setAttribute("role", "alert"); box.hidden = false; }  // an alert only once shown
  }
  document.addEventListener("htmx:responseError", notSaved);
  document.addEventListener("htmx:sendError", notSaved);
})();
