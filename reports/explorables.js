// The book's explorables: plain JavaScript, no library and nothing fetched, so the HTML book still reads offline.
//
// Each explorable is a <div class="explorable" data-explorable="KIND"> that a chapter's Python cell wrote
// (rnnbench.book.explorables), holding its data as <script type="application/json">: the chapter's weights and
// sentence (unroll), the lecture's sizes (params), the measured gradient-decay curves (decay). The arithmetic
// here is the little the controls need: three steps of the recurrence, the two parameter formulas, powers of
// the chapter's factors. Measured curves are drawn as read, never recomputed. tests/test_explorables.py drives
// a real browser through each explorable and checks what it shows against the workflow's tables.
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";

  // ------------------------------------------------------------------------------------------------------------
  // Small helpers: elements, numbers as the book prints them

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (k === "html") node.innerHTML = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const child of children) if (child != null) node.append(child);
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const child of children) if (child != null) node.append(child);
    return node;
  }

  // Decimals as rnnbench.book.format.fixed prints them; a value that rounds to zero prints without its sign.
  function fixed(value, digits) {
    const text = value.toFixed(digits);
    return Number(text) === 0 ? (0).toFixed(digits) : text.replace("-", "\u2212");
  }

  function vector(values, digits) {
    return "(" + values.map((v) => fixed(v, digits)).join(", ") + ")";
  }

  function integer(value) {
    return Math.round(value).toLocaleString("en-US");
  }

  // Three significant digits, scientific (1.2 × 10⁻⁵) outside [0.001, 10⁶), as rnnbench.book.format.sig.
  const SUPERSCRIPT = { "-": "\u207b", 0: "\u2070", 1: "\u00b9", 2: "\u00b2", 3: "\u00b3", 4: "\u2074", 5: "\u2075", 6: "\u2076", 7: "\u2077", 8: "\u2078", 9: "\u2079" };
  function sig(value, digits = 3) {
    if (value === 0) return "0";
    const size = Math.abs(value);
    if (size < 1e-3 || size >= 1e6) {
      const [mantissa, exponent] = value.toExponential(digits - 1).split("e");
      const power = String(Number(exponent)).split("").map((c) => SUPERSCRIPT[c]).join("");
      return mantissa.replace("-", "\u2212") + " \u00d7 10" + power;
    }
    return Number(value.toPrecision(digits)).toString().replace("-", "\u2212");
  }

  function readData(root) {
    const script = root.querySelector('script[type="application/json"]');
    return JSON.parse(script.textContent);
  }

  function uniqueId(prefix) {
    uniqueId.count = (uniqueId.count || 0) + 1;
    return `${prefix}-${uniqueId.count}`;
  }

  // ------------------------------------------------------------------------------------------------------------
  // 1. Unrolling: h_t = tanh(W x_t + U h_{t-1} + b_h) from h_0 = 0, one word at a time

  function matVec(M, v) {
    return M.map((row) => row.reduce((sum, m, j) => sum + m * v[j], 0));
  }

  // Every step of the recurrence over the inputs xs: the terms the book's table prints.
  function unroll(W, U, b, xs) {
    let h = b.map(() => 0);
    return xs.map((x) => {
      const input = matVec(W, x);
      const recurrent = matVec(U, h);
      const pre = input.map((v, i) => v + recurrent[i] + b[i]);
      const step = { x, hPrev: h, input, recurrent, bias: b, pre, h: pre.map(Math.tanh) };
      h = step.h;
      return step;
    });
  }

  function weightGrid(name, label, values, onChange) {
    // A matrix (rows of inputs) or a vector (one column) of number fields, named W[1,2] and so on.
    const matrix = Array.isArray(values[0]);
    const rows = matrix ? values : values.map((v) => [v]);
    const grid = el("span", { class: "explorable-matrix", style: `grid-template-columns: repeat(${rows[0].length}, auto)` });
    rows.forEach((row, i) =>
      row.forEach((value, j) => {
        const entry = matrix ? `${name}[${i + 1},${j + 1}]` : `${name}[${i + 1}]`;
        grid.append(
          el("input", {
            type: "number",
            step: "0.1",
            value: String(value),
            "aria-label": entry,
            "data-weight": entry,
            oninput: (event) => {
              const v = Number(event.target.value);
              if (event.target.value === "" || !Number.isFinite(v)) return;
              if (matrix) values[i][j] = v;
              else values[i] = v;
              onChange();
            },
          })
        );
      })
    );
    return el("span", { class: "explorable-weight" }, el("span", { class: "explorable-weight-name", html: label }), grid);
  }

  function initUnroll(root, data) {
    const chapter = JSON.parse(JSON.stringify(data)); // the chapter's weights, kept for "reset"
    const W = data.W.map((r) => r.slice());
    const U = data.U.map((r) => r.slice());
    const b = data.b.slice();
    const words = data.steps.map((s) => s.word);
    const xs = data.steps.map((s) => s.x);
    let shown = 0; // how many words have been read

    const status = el("span", { class: "explorable-status", "data-role": "status", "aria-live": "polite" });
    const back = el("button", { type: "button", "data-role": "back", text: "\u25c0 back", onclick: () => show(shown - 1) });
    const next = el("button", { type: "button", "data-role": "next", text: "next word \u25b6", onclick: () => show(shown + 1) });
    const reset = el("button", { type: "button", "data-role": "reset", text: "the chapter's weights", onclick: resetWeights });
    const diagram = el("div", { class: "explorable-diagram" });
    const body = el("tbody");
    const headers = ["t", "word", "x<sub>t</sub>", "W x<sub>t</sub>", "U h<sub>t\u22121</sub>", "b<sub>h</sub>", "pre-activation", "h<sub>t</sub>"];
    const table = el("table", { class: "explorable-table table table-sm" }, el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { html: h })))), body);
    const weights = el("div", { class: "explorable-weights" });

    function drawWeights() {
      weights.replaceChildren(
        weightGrid("W", "W =", W, update),
        weightGrid("U", "U =", U, update),
        weightGrid("b_h", "b<sub>h</sub> =", b, update),
        reset
      );
    }

    function resetWeights() {
      chapter.W.forEach((row, i) => row.forEach((v, j) => (W[i][j] = v)));
      chapter.U.forEach((row, i) => row.forEach((v, j) => (U[i][j] = v)));
      chapter.b.forEach((v, i) => (b[i] = v));
      drawWeights();
      update();
    }

    function show(n) {
      shown = Math.max(0, Math.min(words.length, n));
      update();
    }

    function update() {
      const steps = unroll(W, U, b, xs);
      back.disabled = shown === 0;
      next.disabled = shown === words.length;
      status.textContent =
        shown === 0
          ? `h\u2080 = ${vector(b.map(() => 0), 3)}: nothing read yet.`
          : `Step ${shown} of ${words.length}: read \u201c${words[shown - 1]}\u201d, h${subscript(shown)} = ${vector(steps[shown - 1].h, 3)}.`;
      body.replaceChildren(
        ...steps.slice(0, shown).map((s, k) =>
          el(
            "tr",
            { "data-step": String(k + 1), class: k + 1 === shown ? "explorable-current" : "" },
            el("td", { text: String(k + 1) }),
            el("td", { text: words[k] }),
            el("td", { "data-term": "x", text: vector(s.x, 0) }),
            el("td", { "data-term": "input", text: vector(s.input, 3) }),
            el("td", { "data-term": "recurrent", text: vector(s.recurrent, 3) }),
            el("td", { "data-term": "bias", text: vector(s.bias, 2) }),
            el("td", { "data-term": "pre", text: vector(s.pre, 3) }),
            el("td", { "data-term": "h", text: vector(s.h, 3) })
          )
        )
      );
      diagram.replaceChildren(unrollDiagram(words, steps, shown));
    }

    root.append(
      el("div", { class: "explorable-controls" }, back, next, status),
      diagram,
      weights,
      el("div", { class: "explorable-scroll" }, table)
    );
    drawWeights();
    update();
  }

  function subscript(n) {
    return String(n)
      .split("")
      .map((c) => String.fromCharCode(0x2080 + Number(c)))
      .join("");
  }

  // The unrolled network: one box per word, the same W and U in each; the states read so far above them.
  function unrollDiagram(words, steps, shown) {
    const box = { w: 140, h: 46, gap: 52 };
    const left = 50;
    const width = left + words.length * (box.w + box.gap);
    const top = 44;
    const root = svg("svg", { viewBox: `0 0 ${width} 170`, class: "explorable-svg", role: "img", "aria-label": "the network unrolled over the sentence" });
    root.append(
      svg("defs", {}, svg("marker", { id: "explorable-arrow", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "currentColor" })))
    );
    root.append(svg("text", { x: 4, y: top + box.h / 2 + 18, class: "explorable-label", text: "h\u2080 = 0" }));
    words.forEach((word, k) => {
      const x = left + box.gap / 2 + k * (box.w + box.gap);
      const done = k < shown;
      const current = k === shown - 1;
      const group = svg("g", { class: "explorable-cell" + (done ? " explorable-done" : "") + (current ? " explorable-current" : "") });
      // The state coming in from the left, the word from below, the new state out to the right.
      group.append(svg("line", { x1: x - box.gap + 4, y1: top + box.h / 2, x2: x - 2, y2: top + box.h / 2, class: "explorable-arrow", "marker-end": "url(#explorable-arrow)" }));
      group.append(svg("text", { x: x - box.gap / 2, y: top + box.h / 2 - 6, class: "explorable-small", "text-anchor": "middle", text: "U" }));
      group.append(svg("line", { x1: x + box.w / 2, y1: 140, x2: x + box.w / 2, y2: top + box.h + 2, class: "explorable-arrow", "marker-end": "url(#explorable-arrow)" }));
      group.append(svg("text", { x: x + box.w / 2 + 6, y: top + box.h + 22, class: "explorable-small", text: "W" }));
      group.append(svg("rect", { x, y: top, width: box.w, height: box.h, rx: 6 }));
      group.append(svg("text", { x: x + box.w / 2, y: top + box.h / 2 + 5, "text-anchor": "middle", class: "explorable-label", text: "tanh(W x + U h + b)" }));
      group.append(svg("text", { x: x + box.w / 2, y: 160, "text-anchor": "middle", class: "explorable-word", text: `x${subscript(k + 1)}: ${word}` }));
      group.append(svg("text", { x: x + box.w / 2, y: top - 12, "text-anchor": "middle", class: "explorable-state", text: done ? `h${subscript(k + 1)} = ${vector(steps[k].h, 3)}` : `h${subscript(k + 1)}` }));
      root.append(group);
    });
    return root;
  }

  // ------------------------------------------------------------------------------------------------------------
  // 2. The parameter count: the feed-forward and the recurrent language model (rnnbench.params, restated)

  // Both models have the embedding |V| d, the output layer |V| H + |V| and a hidden bias H. The feed-forward
  // model adds W_h, (n-1) d H; the recurrent one adds W, d H, and U, H².
  function parameterCounts(V, d, H, context) {
    const shared = V * d + V * H + V + H;
    return { ff: shared + context * d * H, rnn: shared + d * H + H * H };
  }

  // count(FF) - count(RNN) = H (d (n-2) - H): a tie at n-1 = 1 + H/d when that is a whole number, and the
  // feed-forward model strictly larger from floor(H/d) + 2 on (rnnbench.params.crossover_context).
  function crossover(d, H) {
    return { tie: H % d === 0 ? 1 + H / d : null, larger: Math.floor(H / d) + 2 };
  }

  function initParams(root, data) {
    const sizes = { vocab: data.vocab, embed: data.embed, hidden: data.hidden, context: data.context };
    const controls = [
      { key: "vocab", label: "|V|, vocabulary", min: 100, max: 100000, step: 100 },
      { key: "embed", label: "d, embedding size", min: 1, max: 1000, step: 1 },
      { key: "hidden", label: "H, hidden units", min: 1, max: 2000, step: 1 },
      { key: "context", label: "n\u22121, context", min: 1, max: 40, step: 1 },
    ];
    const fields = el("div", { class: "explorable-fields" });
    for (const c of controls) {
      const id = uniqueId(`explorable-${c.key}`);
      const range = el("input", { type: "range", min: c.min, max: c.max, step: c.step, value: sizes[c.key], "aria-label": c.label });
      const number = el("input", { type: "number", id, min: 1, step: 1, value: sizes[c.key], "data-size": c.key });
      const set = (value, from) => {
        if (!Number.isInteger(value) || value < 1) return;
        sizes[c.key] = value;
        if (from !== range) range.value = String(Math.min(c.max, value));
        if (from !== number) number.value = String(value);
        update();
      };
      range.addEventListener("input", () => set(Number(range.value), range));
      number.addEventListener("input", () => set(Number(number.value), number));
      fields.append(el("label", { for: id }, el("span", { text: c.label }), range, number));
    }
    const counts = el("table", { class: "explorable-table table table-sm" });
    const verdict = el("p", { class: "explorable-status", "data-role": "crossover", "aria-live": "polite" });
    const chart = el("div", { class: "explorable-diagram" });
    root.append(fields, el("div", { class: "explorable-scroll" }, counts), verdict, chart);

    function update() {
      const { vocab: V, embed: d, hidden: H, context } = sizes;
      const n = parameterCounts(V, d, H, context);
      const cross = crossover(d, H);
      const larger = n.ff > n.rnn ? "ff" : n.ff < n.rnn ? "rnn" : "tie";
      counts.replaceChildren(
        el("thead", {}, el("tr", {}, el("th", { text: "model" }), el("th", { text: "what grows with the context" }), el("th", { text: "parameters" }))),
        el(
          "tbody",
          {},
          el("tr", { class: larger === "ff" ? "explorable-current" : "" }, el("td", { text: "feed-forward" }), el("td", { html: `W<sub>h</sub>: (n\u22121) d H = ${integer(context * d * H)}` }), el("td", { "data-count": "ff", text: integer(n.ff) })),
          el("tr", { class: larger === "rnn" ? "explorable-current" : "" }, el("td", { text: "recurrent" }), el("td", { text: "nothing" }), el("td", { "data-count": "rnn", text: integer(n.rnn) }))
        )
      );
      const tie = cross.tie === null ? "they never tie (H/d is not a whole number)" : `they tie at n\u22121 = 1 + H/d = ${integer(cross.tie)}`;
      const now = larger === "tie" ? "the two are equal" : larger === "ff" ? `the feed-forward model is larger by ${integer(n.ff - n.rnn)}` : `the recurrent model is larger by ${integer(n.rnn - n.ff)}`;
      verdict.replaceChildren(
        `At a context of ${integer(context)}, ${now}. With d = ${integer(d)} and H = ${integer(H)}, ${tie}, and the feed-forward model is larger from n\u22121 = `,
        el("strong", { "data-role": "crossover-context", text: integer(cross.larger) }),
        " on."
      );
      chart.replaceChildren(paramsChart(V, d, H, context, cross));
    }
    update();
  }

  // Ticks from 0 at a round step (1, 2 or 5 times a power of ten), four to eight of them below top.
  function roundTicks(top) {
    const power = 10 ** Math.floor(Math.log10(top / 4));
    const step = [1, 2, 5, 10].map((m) => m * power).find((st) => top / st <= 8);
    return Array.from({ length: Math.floor(top / step) + 1 }, (_, k) => k * step);
  }

  function paramsChart(V, d, H, context, cross) {
    const size = { w: 620, h: 260, left: 84, right: 96, top: 14, bottom: 40 };
    const last = Math.max(20, context, cross.larger + 3);
    const contexts = Array.from({ length: last }, (_, i) => i + 1);
    const counts = contexts.map((c) => parameterCounts(V, d, H, c));
    const top = Math.max(...counts.map((c) => Math.max(c.ff, c.rnn))) * 1.05;
    const x = (c) => size.left + ((c - 1) / (last - 1)) * (size.w - size.left - size.right);
    const y = (v) => size.top + (1 - v / top) * (size.h - size.top - size.bottom);
    const root = svg("svg", { viewBox: `0 0 ${size.w} ${size.h}`, class: "explorable-svg", role: "img", "aria-label": "parameters against context" });
    const axes = svg("g", { class: "explorable-axes" });
    for (const v of roundTicks(top)) {
      axes.append(svg("line", { x1: size.left, x2: size.w - size.right, y1: y(v), y2: y(v), class: "explorable-grid" }));
      axes.append(svg("text", { x: size.left - 6, y: y(v) + 4, "text-anchor": "end", text: integer(v) }));
    }
    const step = last > 30 ? 5 : last > 12 ? 2 : 1;
    for (let c = 1; c <= last; c += step) axes.append(svg("text", { x: x(c), y: size.h - size.bottom + 16, "text-anchor": "middle", text: String(c) }));
    axes.append(svg("text", { x: (size.left + size.w - size.right) / 2, y: size.h - 6, "text-anchor": "middle", text: "context n\u22121 (words)" }));
    root.append(axes);
    root.append(svg("line", { x1: x(cross.larger), x2: x(cross.larger), y1: size.top, y2: size.h - size.bottom, class: "explorable-marker" }));
    for (const [key, label] of [["ff", "feed-forward"], ["rnn", "recurrent"]]) {
      const points = counts.map((c, i) => `${x(contexts[i]).toFixed(1)},${y(c[key]).toFixed(1)}`).join(" ");
      root.append(svg("polyline", { points, class: `explorable-line explorable-${key}` }));
      root.append(svg("text", { x: size.w - size.right + 6, y: y(counts[counts.length - 1][key]) + 4, class: `explorable-legend explorable-${key}-text`, text: label }));
    }
    const now = parameterCounts(V, d, H, context);
    for (const key of ["ff", "rnn"]) root.append(svg("circle", { cx: x(context), cy: y(now[key]), r: 4, class: `explorable-dot explorable-${key}` }));
    return root;
  }

  // ------------------------------------------------------------------------------------------------------------
  // 3. The gradient fading: measured ||dL/dh_t|| against distance, beside the chapter's per-step factors

  const NO_RADIUS = "none";

  function radiusKey(network) {
    return network.radius === null ? NO_RADIUS : network.radius_measured ? `${network.analysis}:${JSON.stringify(network.keys)}` : String(network.radius);
  }

  function radiusLabel(network) {
    if (network.radius === null) return network.activation === "LSTM" ? "none (an LSTM has no U to rescale)" : "not measured";
    if (!network.radius_measured) return sig(network.radius);
    const seed = network.keys.seed != null ? `, seed ${network.keys.seed}` : "";
    return `${sig(network.radius)}, measured (${network.analysis}${seed})`;
  }

  function snapshotOrder(snapshot) {
    if (snapshot === "untrained") return -1;
    if (snapshot === "final") return Infinity;
    return Number(snapshot);
  }

  function select(label, role, onChange) {
    const id = uniqueId(`explorable-${role}`);
    const node = el("select", { id, "data-role": role, onchange: onChange });
    return { node, field: el("label", { for: id }, el("span", { text: label }), node) };
  }

  // Fill a <select> with (value, label) pairs, keeping the current value when it is still offered.
  function offer(sel, options, preferred) {
    const keep = options.some(([v]) => v === sel.node.value) ? sel.node.value : preferred(options);
    sel.node.replaceChildren(...options.map(([v, label]) => el("option", { value: v, text: label })));
    sel.node.value = keep;
    sel.node.disabled = options.length < 2;
    return keep;
  }

  function sameCurve(a, b) {
    return a.activation === b.activation && a.radius === b.radius && a.snapshot === b.snapshot && JSON.stringify(a.median) === JSON.stringify(b.median);
  }

  function initDecay(root, data) {
    // The same network measured the same way by two analyses (e.g. tanh at one radius, in a radius sweep and
    // in an activation sweep) is one curve: drawn once, from the first analysis that has it.
    const networks = [];
    for (const n of data.networks) if (!networks.some((m) => sameCurve(m, n))) networks.push(n);
    const activation = select("activation", "activation", update);
    const snapshot = select("training snapshot", "snapshot", update);
    const radius = select("spectral radius \u03c1(U)", "radius", update);
    const readout = el("p", { class: "explorable-status", "data-role": "readout", "aria-live": "polite" });
    const plot = el("div", { class: "explorable-diagram" });
    root.append(el("div", { class: "explorable-fields" }, activation.field, snapshot.field, radius.field), plot, readout);
    if (!networks.length) {
      readout.textContent = "This copy of the book has no gradient-decay analysis to explore.";
      return;
    }

    function update() {
      // Each control offers only what the ones before it leave: activation, then snapshot, then radius.
      const activations = [...new Set(networks.map((n) => n.activation))];
      const a = offer(activation, activations.map((v) => [v, v]), (o) => (o.some(([v]) => v === "tanh") ? "tanh" : o[0][0]));
      const byActivation = networks.filter((n) => n.activation === a);
      const snapshots = [...new Map(byActivation.map((n) => [n.snapshot, n.snapshot_label])).entries()].sort((p, q) => snapshotOrder(p[0]) - snapshotOrder(q[0]));
      const s = offer(snapshot, snapshots, (o) => o[0][0]);
      const bySnapshot = byActivation.filter((n) => n.snapshot === s);
      const radii = [...new Map(bySnapshot.map((n) => [radiusKey(n), [radiusLabel(n), n.radius]])).entries()].sort((p, q) => (p[1][1] ?? -1) - (q[1][1] ?? -1));
      // Start at the radius nearest the edge, rho(U) = 1: the one the chapter's story turns on.
      const nearestEdge = (o) => o.reduce((best, opt) => (Math.abs((radii.find(([k]) => k === opt[0])[1][1] ?? 0) - 1) < Math.abs((radii.find(([k]) => k === best[0])[1][1] ?? 0) - 1) ? opt : best))[0];
      const r = offer(radius, radii.map(([k, [label]]) => [k, label]), nearestEdge);
      const shown = bySnapshot.filter((n) => radiusKey(n) === r);
      plot.replaceChildren(decayPlot(shown, data.factors));
      readout.replaceChildren(...decayReadout(shown));
    }
    update();
  }

  function decayReadout(shown) {
    const parts = shown.map((n) => {
      const name = n.keys.seed != null ? `${n.analysis}, seed ${n.keys.seed}` : n.analysis;
      const rate = n.rate === null ? "no rate could be fitted" : `measured rate ${sig(n.rate)} per step (a factor of ${sig(Math.exp(n.rate))})`;
      return `${name}: ${rate}`;
    });
    const sources = [...new Set(shown.map((n) => n.source))].join(", ");
    return [parts.join("; ") + ". ", el("span", { class: "explorable-source", text: `Measured curves from ${sources}; the chapter's factors start from the measured norm at distance 0.` })];
  }

  const COLOURS = ["#2c7fb8", "#d95f0e", "#31a354", "#756bb1", "#e7298a", "#636363"];

  function decayPlot(shown, factors) {
    const size = { w: 620, h: 340, left: 64, right: 50, top: 30, bottom: 42 };
    const inner = { x0: size.left, x1: size.w - size.right, y0: size.top, y1: size.h - size.bottom };
    const positive = (v) => v !== null && v > 0;
    const values = shown.flatMap((n) => [...n.median, ...n.q10, ...n.q90].filter(positive));
    const distances = shown.flatMap((n) => n.distance);
    const dMax = Math.max(1, ...distances);
    // The log axis covers what was measured, to whole decades; the chapter's lines are cut at its edges.
    // Half a decade of room above the highest point, where the growing factor's line leaves the plot.
    let low = Math.floor(Math.log10(Math.min(...values)));
    let high = Math.ceil(Math.log10(Math.max(...values)) + 0.5);
    if (high - low < 2) [low, high] = [low - 1, high + 1];
    const x = (d) => inner.x0 + (d / dMax) * (inner.x1 - inner.x0);
    const y = (v) => inner.y0 + ((high - Math.log10(v)) / (high - low)) * (inner.y1 - inner.y0);
    const clip = uniqueId("explorable-clip");
    const root = svg("svg", {
      viewBox: `0 0 ${size.w} ${size.h}`,
      class: "explorable-svg",
      role: "img",
      "aria-label": "gradient norm against distance, log scale",
      // The axis as data, so a reader of the SVG (the browser test) can turn a point back into a value.
      "data-log10-top": String(high),
      "data-log10-bottom": String(low),
      "data-plot-top": String(inner.y0),
      "data-plot-bottom": String(inner.y1),
      "data-plot-left": String(inner.x0),
      "data-plot-right": String(inner.x1),
      "data-distance-max": String(dMax),
    });
    root.append(svg("defs", {}, svg("clipPath", { id: clip }, svg("rect", { x: inner.x0, y: inner.y0, width: inner.x1 - inner.x0, height: inner.y1 - inner.y0 }))));
    const axes = svg("g", { class: "explorable-axes" });
    const every = Math.max(1, Math.ceil((high - low) / 8));
    for (let p = Math.ceil(low / every) * every; p <= high; p += every) {
      axes.append(svg("line", { x1: inner.x0, x2: inner.x1, y1: y(10 ** p), y2: y(10 ** p), class: "explorable-grid" }));
      axes.append(svg("text", { x: inner.x0 - 6, y: y(10 ** p) + 4, "text-anchor": "end", text: p === 0 ? "1" : `10${String(p).split("").map((c) => SUPERSCRIPT[c]).join("")}` }));
    }
    const tick = dMax > 60 ? 20 : dMax > 25 ? 5 : 2;
    for (let d = 0; d <= dMax; d += tick) axes.append(svg("text", { x: x(d), y: inner.y1 + 16, "text-anchor": "middle", text: String(d) }));
    axes.append(svg("text", { x: (inner.x0 + inner.x1) / 2, y: size.h - 6, "text-anchor": "middle", text: "distance from the loss (steps)" }));
    axes.append(svg("text", { x: 14, y: (inner.y0 + inner.y1) / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${(inner.y0 + inner.y1) / 2})`, text: "\u2016dL/dh\u2016" }));
    axes.append(svg("rect", { x: inner.x0, y: inner.y0, width: inner.x1 - inner.x0, height: inner.y1 - inner.y0, class: "explorable-frame" }));
    root.append(axes);
    const drawn = svg("g", { "clip-path": `url(#${clip})` });
    const legend = [];
    shown.forEach((n, i) => {
      const colour = COLOURS[i % COLOURS.length];
      // The 10-90% band over windows, where both edges can sit on the log axis.
      const band = n.distance.map((d, k) => [d, n.q10[k], n.q90[k]]).filter(([, lo, hi]) => positive(lo) && positive(hi));
      if (band.length > 1) {
        const upper = band.map(([d, , hi]) => `${x(d).toFixed(2)},${y(hi).toFixed(2)}`);
        const lower = band.map(([d, lo]) => `${x(d).toFixed(2)},${y(lo).toFixed(2)}`).reverse();
        drawn.append(svg("polygon", { points: [...upper, ...lower].join(" "), fill: colour, class: "explorable-band" }));
      }
      // The median, stopped where it underflows to zero (a zero has no place on a log axis), as the figures do.
      const line = [];
      for (let k = 0; k < n.distance.length && positive(n.median[k]); k++) line.push([n.distance[k], n.median[k]]);
      drawn.append(
        svg("polyline", {
          points: line.map(([d, v]) => `${x(d).toFixed(2)},${y(v).toFixed(2)}`).join(" "),
          stroke: colour,
          class: "explorable-line explorable-measured",
          "data-analysis": n.analysis,
          "data-keys": JSON.stringify(n.keys),
        })
      );
      legend.push([colour, n.keys.seed != null && shown.length > 1 ? `measured, seed ${n.keys.seed}` : "measured (median)", "solid"]);
    });
    // The chapter's per-step factors, raised to the distance from the first measured norm.
    const origin = shown.map((n) => n.median[0]).find(positive);
    if (origin !== undefined) {
      const labels = [];
      factors.forEach((f) => {
        const points = [];
        for (let d = 0; d <= dMax; d++) {
          const v = origin * f ** d;
          if (!(v > 0) || !Number.isFinite(v)) break;
          points.push(`${x(d).toFixed(2)},${y(v).toFixed(2)}`);
          if (Math.log10(v) < low || Math.log10(v) > high) break; // past the axis: the clip hides the rest
        }
        drawn.append(svg("polyline", { points: points.join(" "), class: "explorable-line explorable-factor", "data-factor": String(f) }));
        // Its label where the line leaves the plot: through the bottom, the top, or the right edge.
        const slope = Math.log10(f);
        const edge = slope < 0 ? low : high;
        const exit = slope === 0 ? dMax : Math.min(dMax, (edge - Math.log10(origin)) / slope);
        labels.push({ f, x: x(exit), y: y(origin * f ** exit), side: exit < dMax ? (slope < 0 ? "bottom" : "top") : "right" });
      });
      // Labels on the same edge, too close to read, are moved apart along it.
      for (const side of ["bottom", "top", "right"]) {
        const along = side === "right" ? "y" : "x";
        const gap = side === "right" ? 14 : 34;
        const group = labels.filter((l) => l.side === side).sort((a, b) => a[along] - b[along]);
        group.forEach((l, i) => i > 0 && l[along] - group[i - 1][along] < gap && (l[along] = group[i - 1][along] + gap));
      }
      for (const l of labels) {
        const position = {
          bottom: { x: l.x + 4, y: inner.y1 - 6, anchor: "start" },
          top: { x: l.x + 4, y: inner.y0 + 13, anchor: "start" },
          right: { x: inner.x1 + 4, y: l.y + 4, anchor: "start" },
        }[l.side];
        root.append(svg("text", { x: position.x, y: position.y, "text-anchor": position.anchor, class: "explorable-factor-text", text: `${l.f}\u1d57` }));
      }
    }
    root.append(drawn);
    legend.push(["#7f7f7f", "the chapter's \u03bb\u1d57", "dashed"]);
    // The legend in a row above the plot, each entry as wide as its text.
    let lx = inner.x0;
    legend.forEach(([colour, text, dash]) => {
      root.append(svg("line", { x1: lx, x2: lx + 22, y1: 12, y2: 12, stroke: colour, class: `explorable-legend-line explorable-${dash}` }));
      root.append(svg("text", { x: lx + 28, y: 16, class: "explorable-legend", text }));
      lx += 28 + 7 * text.length + 18;
    });
    return root;
  }

  // ------------------------------------------------------------------------------------------------------------

  const KINDS = { unroll: initUnroll, params: initParams, decay: initDecay };

  function start() {
    for (const root of document.querySelectorAll(".explorable[data-explorable]")) {
      const init = KINDS[root.dataset.explorable];
      if (!init || root.dataset.ready) continue;
      root.dataset.ready = "true";
      try {
        init(root, readData(root));
      } catch (error) {
        root.append(el("p", { class: "explorable-error", text: `This explorable could not start: ${error.message}` }));
        throw error;
      }
      root.dataset.ready = "done";
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
