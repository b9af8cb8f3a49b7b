/* tl-minimal site: a search result's snippet is the page's own prose, never the theme's chrome, a
   cell's output or raw TeX. Sphinx cuts the snippet from the whole <main role="main">, which in this
   theme also holds the article's header buttons ("Download ... System Settings Light Dark"), the table
   of contents of the page, a print-only copy of the title and contents (.onlyprint) and the
   previous/next links; a notebook page also holds its cells' outputs, and its formulas (typeset at
   build time, their TeX in data-tex: math_render.py; or as TeX that MathJax typesets in the browser:
   "\(\lambda_t\)"). Sphinx has no setting for what it removes, so this wraps its Search.htmlToText
   (loaded on the search page only) to drop those parts first and to write each formula as plain
   symbols ("λ_t"). */
(() => {
  const CHROME = [".bd-header-article", ".bd-sidebar-secondary", ".bd-footer-article",
                  ".prev-next-footer", ".bd-footer-content", ".d-print-none", ".onlyprint",
                  ".cell_output", "div.output", "figure.widget-frames"].join(", ");
  const SYMBOLS = {alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", varepsilon: "ε", zeta: "ζ",
                   eta: "η", theta: "θ", kappa: "κ", lambda: "λ", mu: "μ", nu: "ν", xi: "ξ", pi: "π",
                   rho: "ρ", sigma: "σ", tau: "τ", phi: "φ", varphi: "φ", chi: "χ", psi: "ψ", omega: "ω",
                   Gamma: "Γ", Delta: "Δ", Theta: "Θ", Lambda: "Λ", Sigma: "Σ", Phi: "Φ", Omega: "Ω",
                   top: "ᵀ", odot: "⊙", otimes: "⊗", cdot: "·", times: "×", le: "≤", leq: "≤", ge: "≥",
                   geq: "≥", ne: "≠", neq: "≠", approx: "≈", sum: "Σ", prod: "Π", to: "→", rightarrow: "→",
                   leftarrow: "←", infty: "∞", in: "∈", ell: "ℓ", sqrt: "√", log: "log", exp: "exp",
                   min: "min", max: "max", ldots: "…", dots: "…", cdots: "⋯", mid: "|"};
  const plain = (tex) => tex
    .replace(/^\s*(\\\(|\\\[|\$\$?)|(\\\)|\\\]|\$\$?)\s*$/g, "")
    .replace(/\\(?:operatorname|mathrm|text|textrm|mathbf|mathcal|mathbb|boldsymbol|bm)\s*\{([^{}]*)\}/g, "$1")
    .replace(/\\(?:left|right|big|Big|bigl|bigr|Bigl|Bigr)\b/g, "")
    .replace(/\\([A-Za-z]+)/g, (_, name) => SYMBOLS[name] ?? "")
    .replace(/\\[,;:! ]/g, " ").replace(/\\([{}|_$%&#])/g, "$1").replace(/[{}]/g, "")
    .replace(/\s+/g, " ").trim();
  const wrap = () => {
    if (typeof Search === "undefined" || Search.tlChromeRemoved) return;
    const original = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(CHROME).forEach((el) => el.remove());
      doc.querySelectorAll("span.math, div.math").forEach((el) => { el.textContent = ` ${plain(el.dataset.tex ?? el.textContent)} `; });
      return original(doc.documentElement.outerHTML, anchor);
    };
    Search.tlChromeRemoved = true;
    Search.tlPlainMath = plain;  // for the site test
  };
  wrap();
  document.addEventListener("DOMContentLoaded", wrap);
})();
