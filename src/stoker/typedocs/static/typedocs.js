// Search as you type on the resource type index: every word typed must be in a type's
// name or the first paragraph of its description; namespaces with no match are hidden.
// Runs from file:// too (no fetch, no module).
(function () {
  "use strict";
  var input = document.getElementById("type-search");
  if (!input) { return; }
  var sections = Array.prototype.slice.call(document.querySelectorAll("section.namespace"));
  var none = document.getElementById("no-match");
  function filter() {
    var words = input.value.toLowerCase().split(/\s+/).filter(function (word) { return word.length > 0; });
    var shown = 0;
    sections.forEach(function (section) {
      var visible = 0;
      section.querySelectorAll("li.type").forEach(function (item) {
        var text = item.getAttribute("data-search") || "";
        var match = words.every(function (word) { return text.indexOf(word) !== -1; });
        item.hidden = !match;
        if (match) { visible += 1; }
      });
      section.hidden = visible === 0;
      shown += visible;
    });
    if (none) { none.hidden = shown !== 0; }
  }
  // A link may carry a search: index.html?q=floating+ip
  var given = new URLSearchParams(window.location.search).get("q");
  if (given) { input.value = given; }
  input.addEventListener("input", filter);
  filter();
}());
