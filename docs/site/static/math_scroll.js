/* tl-minimal site: a display formula wider than the page scrolls sideways inside itself (site.css).
   A keyboard reader must be able to reach it to scroll it, so such a formula, and only such, is a Tab
   stop; MathJax's own setting (conf.py) keeps every other formula out of the tab order, so a page of
   math is not hundreds of Tabs. Checked once MathJax has typeset the page and whenever the width changes. */
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
  };
  window.addEventListener("load", start);
  window.addEventListener("resize", mark);
})();
