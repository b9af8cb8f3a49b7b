/* tl-minimal site: a search result's snippet is the page's own text, never the theme's chrome.
   Sphinx cuts the snippet from the whole <main role="main">, which in this theme also holds the
   article's header buttons ("Download ... System Settings Light Dark"), the table of contents of the
   page, a print-only copy of the title and contents (.onlyprint) and the previous/next links. Sphinx has no setting for what it removes, so this wraps its
   Search.htmlToText (loaded on the search page only) to drop those parts first. */
(() => {
  const CHROME = [".bd-header-article", ".bd-sidebar-secondary", ".bd-footer-article",
                  ".prev-next-footer", ".bd-footer-content", ".d-print-none", ".onlyprint"].join(", ");
  const wrap = () => {
    if (typeof Search === "undefined" || Search.tlChromeRemoved) return;
    const original = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(CHROME).forEach((el) => el.remove());
      return original(doc.documentElement.outerHTML, anchor);
    };
    Search.tlChromeRemoved = true;
  };
  wrap();
  document.addEventListener("DOMContentLoaded", wrap);
})();
