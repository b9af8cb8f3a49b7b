// Widgets that move without a kernel (docs/site/widget_frames.py drew the frames at build time):
// when a slider or menu of a <figure class="widget-frames"> changes, show the frame drawn at the
// controls' settings (its picture, its full-size link and its text alternative) and the value.
// A menu with data-follows offers the options drawn for its leader's setting (data-options).
(function () {
  if (window.tlWidgetFrames) return;  // one copy per page, however many widgets load it
  window.tlWidgetFrames = true;

  function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }

  function setUp(figure) {
    const frames = JSON.parse(figure.dataset.frames);
    const controls = [...figure.querySelectorAll('[data-control]')];
    const img = figure.querySelector('img');
    const link = img.closest('a');
    const nameOf = c => c.dataset.control;
    const labelOf = c => (figure.querySelector(`label[for="${c.id}"]`) || {}).textContent || nameOf(c);
    const shownValue = c => (c.tagName === 'SELECT' ? c.options[c.selectedIndex].text : String(valueOf(c)));
    const note = document.createElement('p');
    note.className = 'widget-reset';
    note.setAttribute('role', 'status');
    (figure.querySelector('a.full-size') || img).before(note);
    function valueOf(control) { return JSON.parse(control.dataset.values)[Number(control.value)]; }
    function setTo(control, v) {
      control.value = String(Math.max(0, JSON.parse(control.dataset.values).findIndex(x => same(x, v))));
    }
    function follow(leader) {  // each menu that follows `leader`: the options drawn for its setting
      controls.filter(c => c.dataset.follows === nameOf(leader)).forEach(c => {
        const keep = valueOf(c);
        const options = JSON.parse(c.dataset.options)[Number(leader.value)];
        c.replaceChildren(...options.map(([label], i) => new Option(label, String(i))));
        c.dataset.values = JSON.stringify(options.map(o => o[1]));
        setTo(c, keep);  // kept when the new options have it, else the first (as in the notebook)
      });
    }
    function show(moved) {
      if (moved) follow(moved);
      const wanted = {};
      controls.forEach(c => { wanted[nameOf(c)] = valueOf(c); });
      const fits = (f, c) => same(f.values[nameOf(c)], wanted[nameOf(c)]);
      // every combination drawn, or one control at a time: then the others go back to their start
      let frame = frames.find(f => controls.every(c => fits(f, c)));
      if (!frame && moved) {
        const head = moved.dataset.follows || nameOf(moved);  // a leader moves with its followers
        const fixed = controls.filter(c => nameOf(c) === head || c.dataset.follows === head);
        const score = f => controls.filter(c => fits(f, c)).length;
        frame = frames.filter(f => fixed.every(c => fits(f, c)))
          .reduce((best, f) => (!best || score(f) > score(best) ? f : best), null);
        if (frame) {
          controls.filter(c => !c.dataset.follows).forEach(c => { setTo(c, frame.values[nameOf(c)]); follow(c); });
          controls.filter(c => c.dataset.follows).forEach(c => setTo(c, frame.values[nameOf(c)]));
        }
      }
      if (!frame) return;
      // a control that had to go back to a drawn setting says so on screen (and to a screen reader)
      const reset = controls.filter(c => c !== moved && !c.dataset.follows && !same(valueOf(c), wanted[nameOf(c)]));
      note.textContent = reset.length
        ? 'Only some combinations were drawn: ' + reset.map(c => `${labelOf(c)} went back to ${shownValue(c)}`).join(', ') + '.'
        : '';
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
    // when a reader reaches for a control, fetch the pictures of its other settings (the others kept),
    // so each step of a slider shows at once instead of after a round trip (issue 54, item 6)
    const fetched = new Set();
    function preload(control) {
      const others = controls.filter(o => o !== control && o.dataset.follows !== nameOf(control));
      frames.filter(f => others.every(o => same(f.values[nameOf(o)], valueOf(o))))
        .forEach(f => { if (!fetched.has(f.src)) { fetched.add(f.src); new Image().src = f.src; } });
    }
    controls.forEach(c => ['focus', 'pointerdown', 'touchstart'].forEach(
      kind => c.addEventListener(kind, () => preload(c), {passive: true})));
  }

  function all() { document.querySelectorAll('figure.widget-frames').forEach(setUp); }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', all);
  else all();
})();
