// The exercises' prediction checks (docs/site/predictions.py writes the forms): the reader's answer
// opens its verdict from the sealed answer key, exactly as tl_minimal/exercises/answers.py's _open
// does in a notebook: the entry is stored under sha256("salt|task|answer") and XOR-ed with a stream
// of sha256("secret|i") blocks, secret = sha256("open|salt|task|answer"). An answer the key does not
// hold gets the key's "otherwise" hint. Nothing is shown before the reader has chosen and pressed Check.
(() => {
  const encoder = new TextEncoder();
  const hex = (bytes) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const digest = (text) => crypto.subtle.digest("SHA-256", encoder.encode(text));

  // the answer as the key stores it: a letter, or a number's step on the tolerance's grid
  function normal(answer, tolerance) {
    if (tolerance === null) return answer.trim().toLowerCase().replace(/^\(+|\)+$/g, "");
    const value = Number(answer.trim().replace(",", "."));
    return Number.isFinite(value) && answer.trim() !== "" ? String(Math.round(value / tolerance)) : null;
  }

  async function open(task, entry, answer) {
    const name = normal(answer, entry.tolerance);
    if (name === null) return [false, "not quite: the answer should be a number"];
    const box = entry.sealed[hex(await digest(`${entry.salt}|${task}|${name}`))];
    if (box === undefined) return [false, entry.otherwise];
    const data = Uint8Array.from(box.match(/../g), (h) => parseInt(h, 16));
    const secret = hex(await digest(`open|${entry.salt}|${task}|${name}`));
    const stream = [];
    for (let i = 0; stream.length < data.length; i++) stream.push(...new Uint8Array(await digest(`${secret}|${i}`)));
    const text = new TextDecoder().decode(data.map((b, i) => b ^ stream[i]));
    return [text.startsWith("correct"), text];
  }

  function setUp(form) {
    const entry = JSON.parse(form.dataset.key);
    const verdict = form.querySelector(".prediction-verdict");
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const picked = form.querySelector("input[type=radio]:checked");
      const field = form.querySelector("input[type=text]");
      const answer = picked ? picked.value : field ? field.value : "";
      if (!answer.trim()) {
        verdict.textContent = entry.choices ? "Choose one of the answers first." : "Type a number first.";
        verdict.className = "prediction-verdict";
        return;
      }
      if (!(window.crypto && crypto.subtle)) {
        verdict.textContent = "This browser cannot open the answer key here (it needs https); run the notebook.";
        return;
      }
      const [right, text] = await open(form.dataset.task, entry, answer);
      verdict.textContent = text.charAt(0).toUpperCase() + text.slice(1);
      verdict.className = "prediction-verdict " + (right ? "prediction-right" : "prediction-wrong");
    });
    // a new choice hides the old verdict, so a verdict always belongs to the answer shown
    form.addEventListener("input", () => { verdict.textContent = ""; verdict.className = "prediction-verdict"; });
  }

  const start = () => document.querySelectorAll("form.prediction").forEach(setUp);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
