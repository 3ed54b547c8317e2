/* Researcher pages: "Copy" buttons for links. Without JavaScript the buttons stay hidden and
   the links are plain selectable text (and the CSV download works). */
(function () {
  "use strict";
  function copy(button) {
    var target = document.getElementById(button.getAttribute("data-copy-target"));
    if (!target) { return; }
    var text = target.textContent.trim();
    var label = button.textContent;
    function done(message) {
      button.textContent = message;
      setTimeout(function () { button.textContent = label; }, 1500);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done("Copied"); }, function () { select(target); done("Press Ctrl+C"); });
    } else {
      select(target);
      done(document.execCommand && document.execCommand("copy") ? "Copied" : "Press Ctrl+C");
    }
  }
  function select(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  function init(root) {
    root.querySelectorAll(".js-copy").forEach(function (button) { button.hidden = false; });
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".js-copy") : null;
    if (button) { copy(button); }
  });
  // A refused members form comes back with its error beside the field (role=alert) and the field autofocused;
  // bring the error and the field to the middle of the screen (autofocus alone may leave the error off the top).
  function focusRefused() {
    var field = document.querySelector("[aria-invalid=true][aria-describedby=members-notice]");
    if (!field) { return; }
    document.getElementById("members-notice").scrollIntoView({block: "center"});
    field.focus({preventScroll: true});
  }
  document.addEventListener("DOMContentLoaded", function () { init(document); focusRefused(); });
  // The annotator table is swapped in by htmx after an invitation.
  // (an outerHTML swap may fire on the replaced element, so look at the whole document).
  document.addEventListener("htmx:afterSwap", function () { init(document); });
}());
