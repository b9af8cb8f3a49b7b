// Widgets that move without a kernel (docs/site/widget_frames.py drew the frames at build time):
// when a slider or menu of a <figure class="widget-frames"> changes, show the frame drawn at the
// controls' settings (its picture, its full-size link and its text alternative) and the value.
(function () {
  if (window.tlWidgetFrames) return;  // one copy per page, however many widgets load it
  window.tlWidgetFrames = true;

  function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }

  function setUp(figure) {
    const frames = JSON.parse(figure.dataset.frames);
    const controls = [...figure.querySelectorAll('[data-control]')];
    const img = figure.querySelector('img');
    const link = img.closest('a');
    function valueOf(control) { return JSON.parse(control.dataset.values)[Number(control.value)]; }
    function show(moved) {
      const wanted = {};
      controls.forEach(c => { wanted[c.dataset.control] = valueOf(c); });
      // every combination drawn, or one control at a time: then the others go back to their start
      let frame = frames.find(f => controls.every(c => same(f.values[c.dataset.control], wanted[c.dataset.control])));
      if (!frame && moved) {
        frame = frames.find(f => same(f.values[moved.dataset.control], wanted[moved.dataset.control]));
        controls.forEach(c => {
          if (c !== moved) c.value = String(JSON.parse(c.dataset.values).findIndex(v => same(v, frame.values[c.dataset.control])));
        });
      }
      if (!frame) return;
      img.src = frame.src;
      img.alt = frame.alt;
      if (link) link.href = frame.src;
      controls.forEach(c => {
        if (c.type !== 'range') return;
        const out = figure.querySelector(`output[for="${c.id}"]`);
        const places = Number(c.dataset.places || 0);
        const v = valueOf(c);
        const text = typeof v === 'number' && places ? v.toFixed(places) : String(v);
        c.setAttribute('aria-valuetext', text);
        if (out) out.textContent = text;
      });
    }
    controls.forEach(c => c.addEventListener('input', () => show(c)));
  }

  function all() { document.querySelectorAll('figure.widget-frames').forEach(setUp); }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', all);
  else all();
})();
