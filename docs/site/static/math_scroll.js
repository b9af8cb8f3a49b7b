/* tl-minimal site: a display formula wider than the page scrolls sideways inside itself (site.css).
   A keyboard reader must be able to reach it to scroll it, so such a formula, and only such, is a Tab
   stop; no other formula is, so a page of math is not hundreds of Tabs. The build typesets the formulas
   (math_render.py); where it could not, MathJax does it in the browser (conf.py keeps its formulas out of
   the tab order) and the check waits for it. Checked once the page is ready and whenever the width changes. */
(() => {
  const mark = () => {
    document.querySelectorAll('mjx-container[display="true"]').forEach((el) => {
      if (el.scrollWidth > el.clientWidth + 1) {
        el.setAttribute("tabindex", "0");
        el.dataset.tlScrolls = "1";
      } else if (el.dataset.tlScrolls) {
        el.setAttribute("tabindex", "-1");
        delete el.dataset.tlScrolls;
      }
    });
  };
  const start = () => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) MathJax.startup.promise.then(mark);
    else mark();
  };
  window.addEventListener("load", start);
  window.addEventListener("resize", mark);
})();
