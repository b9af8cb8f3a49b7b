// Typeset the site's formulas once, when it is built (docs/site/math_render.py runs this with Node.js),
// so a reader's browser downloads no 2 MB maths renderer and does no typesetting.
//
// stdin:  {"mathjax": the folder of MathJax 3's components (the copy sphinx-mathjax-offline ships),
//          "pages": [[{"tex": "\\lambda_t", "display": false}, ...], ...]}   one list per page
// stdout: {"css": MathJax's stylesheet for its SVG output,
//          "pages": [{"math": [one <mjx-container> per formula], "cache": the page's glyphs, "errors": [...]}]}
//
// The output is what MathJax makes in a browser: SVG (no web fonts to fetch), each glyph drawn once
// per page (the "global" font cache, an <svg> of <defs> the formulas point to), and the formula as
// MathML hidden beside the picture for screen readers (assistive MathML). A formula TeX cannot read
// is reported in "errors", not drawn in red.
'use strict';

const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  global.MathJax = {
    loader: {paths: {mathjax: request.mathjax}, require: require,
             load: ['adaptors/liteDOM', 'input/tex', 'output/svg', 'a11y/assistive-mml']},
    svg: {fontCache: 'global'},
    startup: {typeset: false},
  };
  require(request.mathjax + '/startup.js');
  MathJax.startup.promise.then(() => {
    const adaptor = MathJax.startup.adaptor;
    const fonts = MathJax.startup.output.fontCache;
    const pages = request.pages.map((formulas) => {
      fonts.clearCache();  // each page carries the glyphs it uses, and only those
      const errors = [];
      const math = formulas.map(({tex, display}) => {
        const node = MathJax.tex2svg(tex, {display});
        const html = adaptor.outerHTML(node);
        if (html.includes('data-mjx-error')) errors.push(`${tex}: ${adaptor.getAttribute(
          adaptor.firstChild(node), 'data-mjx-error') || adaptor.textContent(node)}`);
        return html;
      });
      const cache = '<svg style="display: none;" id="MJX-SVG-global-cache">'
        + adaptor.outerHTML(fonts.getCache()) + '</svg>';
      return {math, cache, errors};
    });
    const css = adaptor.textContent(MathJax.svgStylesheet());
    process.stdout.write(JSON.stringify({css, pages}));
  }).catch((error) => {
    process.stderr.write(`math_render.js: ${error.stack || error}\n`);
    process.exit(1);
  });
});
