/* tl-minimal site: a table or a picture wider than its column scrolls inside its own box; this marks
   each such box so that phone.css shows it: tl-scrolls (it overflows), tl-more-right / tl-more-left
   (more to show on that side: the edge fades out), tl-scrolled-left (a table's fixed first column
   casts a shadow over what scrolls under it). Checked on load, on resize and on each scroll. */
(() => {
  const BOXES = ".bd-article .pst-scrollable-table-container, .bd-article div.cell_output, "
              + ".bd-article figure.widget-frames, .bd-article div.cell_output > .output";
  const mark = (box) => {
    const more = box.scrollWidth - box.clientWidth;
    const scrolls = more > 1 && getComputedStyle(box).overflowX !== "visible";
    box.classList.toggle("tl-scrolls", scrolls);
    box.classList.toggle("tl-more-right", scrolls && box.scrollLeft < more - 1);
    box.classList.toggle("tl-more-left", scrolls && box.scrollLeft > 1);
    box.classList.toggle("tl-scrolled-left", scrolls && box.scrollLeft > 1);
  };
  // Wider than a phone a figure is shown at the column's width, unless its smallest text would then be
  // under 9 px: then at the width that keeps it at 9 px (its fig-zoom-NN class, figure_scale.py, times its
  // own width), and its box scrolls with the cue. (On a phone phone.css's zoom rules do the same.)
  const PHONE = window.matchMedia("(max-width: 600px)");
  const readable = () => document.querySelectorAll('.bd-article img[class*="fig-zoom-"]').forEach((img) => {
    const zoom = Number((img.className.match(/\bfig-zoom-(\d+)\b/) || [])[1]);
    const own = Number(img.getAttribute("width"));
    img.style.minWidth = !PHONE.matches && zoom && own ? `${Math.round(own * zoom / 100)}px` : "";
  });
  const boxes = () => [...document.querySelectorAll(BOXES)];
  const markAll = () => { readable(); boxes().forEach(mark); };
  const start = () => {
    boxes().forEach((box) => box.addEventListener("scroll", () => mark(box), {passive: true}));
    markAll();
    // a table's sticky column changes its width once marked: check again after that layout
    requestAnimationFrame(markAll);
    document.querySelectorAll(".bd-article img").forEach((img) => {
      if (!img.complete) img.addEventListener("load", markAll, {once: true});
    });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  window.addEventListener("load", markAll);
  window.addEventListener("resize", markAll);
})();
