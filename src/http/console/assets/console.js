// hindsight console: keyboard shortcuts for the review queue. Every page works without this
// script; it only moves focus and submits the forms already on the page.
(function () {
  "use strict";
  var selected = -1;

  function cards() {
    return Array.prototype.slice.call(document.querySelectorAll("article.card"));
  }

  function select(index) {
    var all = cards();
    if (all.length === 0) return null;
    selected = Math.max(0, Math.min(index, all.length - 1));
    all.forEach(function (card, i) { card.classList.toggle("selected", i === selected); });
    var card = all[selected];
    card.focus({ preventScroll: true });
    card.scrollIntoView({ block: "nearest" });
    return card;
  }

  function current() {
    var all = cards();
    if (selected < 0 || selected >= all.length) return select(0);
    return all[selected];
  }

  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (cards().length === 0) return;
    var card;
    switch (event.key) {
      case "j":
        select(selected + 1);
        break;
      case "k":
        select(selected - 1);
        break;
      case "a":
        card = current();
        var approve = card && card.querySelector("form.approve");
        if (approve) approve.requestSubmit();
        break;
      case "e":
        card = current();
        var edit = card && card.querySelector("details.edit");
        if (edit) {
          edit.open = true;
          var area = edit.querySelector("textarea");
          if (area) area.focus();
        }
        break;
      case "r":
        card = current();
        var note = card && card.querySelector("form.reject input[name=note]");
        if (note) note.focus();
        break;
      case "x":
        card = current();
        var pick = card && card.querySelector("input.pick");
        if (pick) pick.checked = !pick.checked;
        break;
      default:
        return;
    }
    event.preventDefault();
  });

  // Clicking into a card selects it, so the keys act on what the reviewer is looking at.
  document.addEventListener("click", function (event) {
    var card = event.target.closest && event.target.closest("article.card");
    if (card) select(cards().indexOf(card));
  });
})();
