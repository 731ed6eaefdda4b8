// Click a figure or a plot to see it enlarged over the page (as large as the window allows);
// click again, or press Escape, to close.
(function () {
  "use strict";
  function close(overlay) {
    overlay.remove();
    document.removeEventListener("keydown", overlay.onEscape);
  }
  function open(img) {
    const overlay = document.createElement("div");
    overlay.className = "enlarged-image";
    overlay.setAttribute("role", "dialog");
    overlay.setAttribute("aria-label", "enlarged image; click or press Escape to close");
    const big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt;
    overlay.appendChild(big);
    overlay.addEventListener("click", function () { close(overlay); });
    overlay.onEscape = function (event) { if (event.key === "Escape") close(overlay); };
    document.addEventListener("keydown", overlay.onEscape);
    document.body.appendChild(overlay);
  }
  function enlargeable(img) {
    return img.closest(".bd-article") && !img.closest("a");
  }
  document.addEventListener("click", function (event) {
    const img = event.target;
    if (img instanceof HTMLImageElement && enlargeable(img)) {
      event.preventDefault();
      open(img);
    }
  });
  document.addEventListener("DOMContentLoaded", function () {
    for (const img of document.querySelectorAll(".bd-article img")) {
      if (enlargeable(img)) {
        img.classList.add("enlargeable");
        img.title = "click to enlarge";
      }
    }
  });
})();
