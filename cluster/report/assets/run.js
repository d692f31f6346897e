/* evalgrid run page: [data-seek] controls seek the screen video; the step on screen is highlighted.
   Plain script, no module and no fetch, so it works opened from file:// as well as served. */
(function () {
  "use strict";
  var video = document.getElementById("video");
  if (!video) { return; }

  function seek(seconds) {
    if (!isFinite(seconds) || seconds < 0) { return; }
    video.pause();
    video.currentTime = seconds;
    var box = video.getBoundingClientRect();
    if (box.bottom < 0 || box.top > window.innerHeight) { video.scrollIntoView({ block: "nearest" }); }
  }

  document.addEventListener("click", function (event) {
    var node = event.target;
    var control = node && node.closest ? node.closest("[data-seek]") : null;
    if (!control) { return; }
    event.preventDefault();
    seek(parseFloat(control.getAttribute("data-seek")));
  });

  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.step[data-start]"));
  function highlight() {
    var t = video.currentTime, current = null;
    rows.forEach(function (row) {
      if (parseFloat(row.getAttribute("data-start")) <= t + 0.001) { current = row; }
    });
    rows.forEach(function (row) { row.classList.toggle("current", row === current); });
  }
  video.addEventListener("timeupdate", highlight);
  video.addEventListener("seeked", highlight);
})();
