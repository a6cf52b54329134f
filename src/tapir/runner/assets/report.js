// Tapir test report: status filters, search, and a lightbox for screenshots. The page is
// complete without this script; it only adds the interactions.
(function () {
  "use strict";
  var scripts = Array.prototype.slice.call(document.querySelectorAll("section.script"));
  var chips = Array.prototype.slice.call(document.querySelectorAll(".chip[data-filter]"));
  var search = document.getElementById("search");
  var active = null;

  function apply() {
    var words = (search && search.value || "").toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    scripts.forEach(function (s) {
      var text = s.getAttribute("data-search");
      var ok = (!active || s.getAttribute("data-status") === active) &&
        words.every(function (w) { return text.indexOf(w) >= 0; });
      s.hidden = !ok;
      if (ok) { shown += 1; }
    });
    var none = document.getElementById("none");
    if (none) { none.hidden = shown > 0; }
  }

  chips.forEach(function (chip) {
    chip.addEventListener("click", function () {
      var value = chip.getAttribute("data-filter");
      active = active === value ? null : value;
      chips.forEach(function (c) { c.setAttribute("aria-pressed", String(c.getAttribute("data-filter") === active)); });
      apply();
    });
  });
  if (search) { search.addEventListener("input", apply); }

  var box = document.getElementById("lightbox");
  document.addEventListener("click", function (event) {
    var shot = event.target.closest && event.target.closest(".shot");
    if (shot && !box.contains(shot)) {
      var big = document.createElement("div");
      big.className = shot.className.replace(/\b(thumb|big)\b/g, "");
      big.style.aspectRatio = getComputedStyle(shot).aspectRatio;
      big.setAttribute("role", "img");
      big.setAttribute("aria-label", shot.getAttribute("aria-label") || "screenshot");
      box.replaceChildren(big);
      box.hidden = false;
    } else if (box.contains(event.target)) {
      box.hidden = true;
    }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { box.hidden = true; }
  });
  if (location.hash) {
    var target = document.querySelector(location.hash + " details");
    if (target) { target.open = true; }
  }
})();
