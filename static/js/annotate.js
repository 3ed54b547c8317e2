/* Keyboard for the annotator's item page (progressive enhancement, no framework).
 *
 * The page works without this file: plain radios, checkboxes and a submit
 * button. This adds shortcuts (see the legend on the page and docs/annotator.md),
 * keeps ranks unique when ties are not allowed, shows the selected state, and
 * records the client's start/submit times. Keys are ignored while typing in a
 * text field or when a modifier key is held.
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
    } else {
      var first = item.querySelector("input:checked") || item.querySelector("input[type=radio], input[type=checkbox]");
      if (first) first.focus();
    }
    if (errors) errors.scrollIntoView({ block: "nearest" });
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
    refreshSelected(item);
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

  function rankKey(item, digit) {
    var all = cards(item);
    var card = document.activeElement && document.activeElement.closest("[data-card]");
    if (!card || all.indexOf(card) < 0) {
      card = all.filter(function (c) { return !c.querySelector("input[data-rank]:checked"); })[0] || all[0];
    }
    var input = card && card.querySelector('input[data-rank="' + digit + '"]');
    if (!input) return false;
    snapshot(card);
    check(input);
    var next = all[all.indexOf(card) + 1];
    if (next) focusCard(next);
    return true;
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

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    var target = event.target;
    if (isTyping(target)) return;
    var key = event.key;
    var back = document.querySelector("[data-back]");
    if ((key === "u" || key === "U") && back) {
      event.preventDefault();
      back.click();
      return;
    }
    var item = root();
    if (!item) return;
    var form = item.querySelector("[data-item-form]");
    var protocol = item.dataset.protocol;
    var handled = false;
    if (key === "Enter") {
      var tag = target && target.tagName;
      if (tag === "A" || tag === "BUTTON" || tag === "SUMMARY") return;  // their own Enter
      if (form) {
        if (form.requestSubmit) form.requestSubmit(); else form.submit();
        handled = true;
      }
    } else if (protocol === "ranking") {
      if (key === "ArrowDown" || key === "ArrowRight") { moveCard(item, 1); handled = true; }
      else if (key === "ArrowUp" || key === "ArrowLeft") { moveCard(item, -1); handled = true; }
      else if (/^[1-9]$/.test(key)) handled = rankKey(item, key);
    } else if (protocol === "choice") {
      handled = key.length === 1 && choiceKey(item, key.toLowerCase());
    } else if (protocol === "judgment") {
      handled = /^[1-9]$/.test(key) && labelKey(item, key);
    }
    if (handled) event.preventDefault();
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
    }
  });
  if (document.readyState === "complete") init(root());
})();
