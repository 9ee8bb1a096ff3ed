// The hipporag-neo4j graph explorer. Every text from the server is put into the page with textContent
// (never as HTML); graph labels are drawn on a canvas by vis-network. The API key is kept in this tab's
// sessionStorage. window.__explorer exposes what each view draws (node keys, edges) for tests.
"use strict";

(() => {
  const KEY = "hipporag-explorer-key";
  const $ = (id) => document.getElementById(id);
  const explorer = (window.__explorer = {
    ready: false,
    ask: { nodes: [], edges: [] },
    explore: { nodes: [], edges: [] },
    panel: null,
    networks: {},
  });
  let overview = null;

  const COLORS = {
    query: "#f6c343",
    fact: "#f1e3bd",
    seed: "#e8843c",
    phrase: "#5b8def",
    passage: "#3f9c5a",
    entity: "#9b59b6",
    more: "#dfe3ec",
  };

  // --- DOM helpers (text only) -----------------------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(props || {})) {
      if (name === "text") node.textContent = value;
      else if (name === "cls") node.className = value;
      else if (name.startsWith("data-")) node.setAttribute(name, value);
      else node[name] = value;
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }
  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }
  function tooltip(lines) {
    const box = el("div", { cls: "tip" });
    for (const line of lines) box.append(el("div", { text: line }));
    return box;
  }
  function fmt(x, digits = 3) {
    if (x === null || x === undefined) return "";
    const a = Math.abs(x);
    return a !== 0 && (a < 0.001 || a >= 10000) ? x.toExponential(2) : x.toFixed(digits);
  }
  function shorten(text, n) {
    return text.length > n ? text.slice(0, n - 1) + "…" : text;
  }
  // a chunk's "#n" (the indexer's id suffix) is kept whole when a label is cut: "support-tick…#1234"
  const CHUNK = /#\d+$/;
  function splitChunk(text) {
    const m = CHUNK.exec(text);
    return m ? [text.slice(0, m.index), m[0]] : [text, ""];
  }
  function shortenKeepingChunk(text, n) {
    const [head, chunk] = splitChunk(text);
    return text.length <= n || !chunk ? shorten(text, n) : shorten(head, Math.max(n - chunk.length, 2)) + chunk;
  }
  // what a passage is called (as common/captions.py): its title, else the file name of its id; a chunk's
  // "#n" either way
  function passageCaption(id, title) {
    const [head, chunk] = splitChunk(id);
    if (title && title.trim()) return chunk ? `${title.trim()} ${chunk}` : title.trim();
    return (head.replace(/\\/g, "/").replace(/\/+$/, "").split("/").pop() || head) + chunk;
  }
  explorer.shortenKeepingChunk = shortenKeepingChunk;

  // --- API ---------------------------------------------------------------------------------------
  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }
  function detailOf(data, status) {
    if (data && typeof data === "object" && "detail" in data) {
      const d = data.detail;
      if (typeof d === "string") return d;
      if (Array.isArray(d)) return d.map((e) => `${(e.loc || []).join(".")}: ${e.msg}`).join("; ");
      return JSON.stringify(d);
    }
    return typeof data === "string" && data ? data : `HTTP ${status}`;
  }
  async function api(path, options = {}) {
    const headers = Object.assign({}, options.headers || {});
    const key = sessionStorage.getItem(KEY);
    if (key) headers.Authorization = "Bearer " + key;
    const init = { method: options.method || "GET", headers };
    if (options.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(options.body);
    }
    const response = await fetch(path, init);
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (_) {
      data = text;
    }
    if (response.status === 401) {
      const had = sessionStorage.getItem(KEY) !== null;
      sessionStorage.removeItem(KEY);
      showLogin(had ? "The server refused this API key (401). Enter the right key." : "");
      throw new ApiError(401, detailOf(data, 401));
    }
    if (!response.ok) throw new ApiError(response.status, detailOf(data, response.status));
    return { status: response.status, data };
  }
  function reportError(target, error) {
    if (error instanceof ApiError && error.status === 401) return;
    target.textContent = "Error: " + (error && error.message ? error.message : String(error));
    target.classList.add("error");
  }
  function setStatus(target, text) {
    target.classList.remove("error");
    target.textContent = text;
  }

  // --- login and start ----------------------------------------------------------------------------
  function showLogin(message) {
    $("app").hidden = true;
    $("login").hidden = false;
    $("forget-key").hidden = true;
    $("login-error").textContent = message || "";
    $("key-input").focus();
  }
  function showApp() {
    $("login").hidden = true;
    $("app").hidden = false;
    $("forget-key").hidden = sessionStorage.getItem(KEY) === null;
  }
  async function loadOverview() {
    const { data } = await api("/explorer/api/overview");
    overview = data;
    const s = data.stats;
    $("store-line").textContent =
      `${data.backend} store · namespace ${data.namespace} · ${s.passages} passages, ${s.phrases} phrases, ` +
      `${s.facts} facts, ${s.relation_edges} relation and ${s.synonym_edges} synonym edges`;
    const box = $("store-overview");
    clear(box);
    box.append(el("h3", { text: "Store" }));
    box.append(el("div", { text: s.location }));
    const counts = ["passages", "phrases", "facts", "relation_edges", "synonym_edges", "mentions"];
    box.append(el("div", { text: counts.map((c) => `${c.replace("_", " ")}: ${s[c]}`).join("\n") }));
    box.append(el("div", { text: "namespaces: " + data.namespaces.join(", ") }));
    box.append(el("div", { text: `neighbourhoods are cut at ${data.max_nodes} nodes` }));
    if (data.cypher) showCypher("explore-cypher", data.cypher);
    return data;
  }
  async function start() {
    if (typeof vis === "undefined") {
      let why = "the graph drawing library did not load";
      try {
        const r = await fetch("/explorer/lib/vis-network.min.js", { method: "GET" });
        if (!r.ok) why = detailOf(JSON.parse(await r.text()), r.status);
      } catch (_) {
        /* keep the generic reason */
      }
      const banner = $("lib-error");
      banner.textContent = "Graphs cannot be drawn: " + why;
      banner.hidden = false;
    }
    try {
      await loadOverview();
      showApp();
      explorer.ready = true;
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401)) {
        showLogin("");
        $("login-error").textContent = "Error: " + error.message;
      }
    }
  }
  $("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, $("key-input").value);
    try {
      await loadOverview();
      $("key-input").value = "";
      showApp();
      explorer.ready = true;
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401)) $("login-error").textContent = error.message;
    }
  });
  $("forget-key").addEventListener("click", () => {
    sessionStorage.removeItem(KEY);
    showLogin("");
  });

  // --- tabs ---------------------------------------------------------------------------------------
  function showView(name) {
    $("passage-panel").hidden = true;
    for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("active", tab.dataset.view === name);
    for (const view of ["ask", "explore", "manage"]) $("view-" + view).hidden = view !== name;
    if (name === "manage" && !$("passage-table").dataset.loaded) loadPassages(true);
    const net = explorer.networks[name];
    if (net)
      setTimeout(() => {
        net.network.redraw();
        net.network.fit({ animation: false });
      }, 0);
  }
  for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => showView(tab.dataset.view));
  explorer.showView = showView;

  function showCypher(id, cypher) {
    const box = $(id);
    if (!cypher) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    box.querySelector("pre").textContent = `// ${cypher.file}\n${cypher.text}`;
  }

  // --- graphs -------------------------------------------------------------------------------------
  function legend(id, kinds) {
    const box = $(id);
    clear(box);
    for (const [kind, text] of kinds) {
      const item = el("span", { text });
      item.style.setProperty("--c", COLORS[kind]);
      box.append(item);
    }
  }
  function network(view, container) {
    if (explorer.networks[view]) return explorer.networks[view];
    const nodes = new vis.DataSet();
    const edges = new vis.DataSet();
    const options = {
      autoResize: true,
      interaction: { hover: true, tooltipDelay: 150 },
      nodes: { font: { size: 13, face: "system-ui, sans-serif" }, borderWidth: 1 },
      edges: {
        font: { size: 10, align: "middle", strokeWidth: 3, color: "#48526a" },
        color: { color: "#9aa5b8", highlight: "#1d2433" },
        arrows: { to: { enabled: true, scaleFactor: 0.5 } },
        smooth: { type: "continuous" },
      },
      layout: { improvedLayout: true },
      physics: {
        solver: "forceAtlas2Based",
        stabilization: { iterations: 150, fit: true },
        forceAtlas2Based: { springLength: 90, avoidOverlap: 0.8 },
      },
    };
    const net = { nodes, edges, container, network: new vis.Network(container, { nodes, edges }, options) };
    explorer.networks[view] = net;
    return net;
  }
  function visNode(n) {
    const kind = n.style || n.kind;
    const base = { id: n.key, label: n.label, title: tooltip(n.tip || [n.label]), level: n.level };
    if (kind === "passage")
      return Object.assign(base, { shape: "box", color: { background: COLORS.passage, border: "#2a6e3e" }, font: { color: "#fff" }, margin: 8 });
    if (kind === "entity")
      return Object.assign(base, { shape: "diamond", size: 16, color: { background: COLORS.entity, border: "#6c3483" } });
    if (kind === "more")
      return Object.assign(base, {
        shape: "box", margin: 8, borderWidth: 1, shapeProperties: { borderDashes: [4, 3] },
        color: { background: COLORS.more, border: "#69748a" }, font: { color: "#1d2433", size: 14, bold: true },
      });
    return Object.assign(base, {
      shape: "dot",
      size: n.size || 12,
      color: { background: COLORS.phrase, border: "#2f5cb8" },
    });
  }
  function visEdge(e) {
    const dashed = e.kind === "SYNONYM" || e.kind === "SAME_AS" || e.kind === "MORE";
    const strong = e.kind === "REACHED" || e.kind === "LINK" || e.kind === "SEED";
    return {
      id: e.id || `${e.kind}|${e.source}|${e.target}|${e.label || ""}`,
      from: e.source,
      to: e.target,
      label: e.label || undefined,
      dashes: dashed,
      width: strong ? 2 : 1,
      color: { color: strong ? "#2f6b3a" : e.kind === "SAME_AS" ? COLORS.entity : "#9aa5b8" },
      arrows: { to: { enabled: e.kind !== "SYNONYM" } },
    };
  }
  function domPosition(view, key) {
    if (view === "ask") {
      const marker = document.querySelector(`#ask-graph g.node[data-key="${CSS.escape(key)}"] .marker`);
      if (!marker) return null;
      const r = marker.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    }
    const net = explorer.networks[view];
    if (!net) return null;
    const pos = net.network.getPositions([key])[key];
    if (!pos) return null;
    const dom = net.network.canvasToDOM(pos);
    const rect = net.container.getBoundingClientRect();
    return { x: rect.left + dom.x, y: rect.top + dom.y };
  }
  explorer.domPosition = domPosition;

  // --- the Ask graph: SVG in columns, labels placed so that none overlaps ---------------------------
  // The result is drawn left to right in four columns (level 0 to 3). Each node is a marker with its label
  // beside it (phrases, your nodes) or a box holding its label (query entities, facts, passages); a column
  // stacks its nodes with a gap, so no two labels or markers can meet. Long labels are cut with "…" (the
  // full text is in the node's tooltip). The drawing is fitted to its box but never shrunk below
  // ASK.minFont CSS pixels: where it would be, labels are cut shorter and columns drawn closer first, and
  // only then is the rest reached by dragging. The wheel zooms (no further out than that floor), a drag
  // pans, a double click fits again.
  const SVG_NS = "http://www.w3.org/2000/svg";
  const ASK = { font: 13, line: 17, minFont: 10, good: 0.85, maxScale: 1.3, gap: 4, maxGap: 20, pad: 14, boxPadX: 7, boxPadY: 4 };
  // labels cut ever shorter: the first layout that fits with its font at >= ASK.good of full size is drawn,
  // else the first that fits with labels >= minFont, else the last
  const ASK_LAYOUTS = [
    { chars: 40, colGap: 64 },
    { chars: 30, colGap: 56 },
    { chars: 22, colGap: 44 },
    { chars: 16, colGap: 32 },
  ];
  const EDGE_STYLE = {
    LINK: { color: "#2f6b3a", width: 1.6 },
    SEED: { color: "#2f6b3a", width: 1.6 },
    REACHED: { color: "#2f6b3a", width: 1.3 },
    RELATION: { color: "#9aa5b8", width: 1 },
    MENTIONS: { color: "#c9cfdb", width: 1 },
    SYNONYM: { color: "#9aa5b8", width: 1, dash: "4 3" },
    SAME_AS: { color: COLORS.entity, width: 1.2, dash: "4 3" },
  };
  function svgEl(tag, attrs, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function askShape(n) {
    const kind = n.style || n.kind;
    if (kind === "query") return { box: true, fill: COLORS.query, stroke: "#b8860b", text: "#1d2433" };
    if (kind === "fact") return { box: true, fill: COLORS.fact, stroke: "#b8a06a", text: "#1d2433" };
    if (kind === "passage") return { box: true, fill: COLORS.passage, stroke: "#2a6e3e", text: "#fff" };
    if (kind === "entity") return { diamond: true, r: 7, fill: COLORS.entity, stroke: "#6c3483" };
    if (kind === "seed") return { r: n.size ? radius(n.size) : 6, fill: COLORS.seed, stroke: "#a4521b", strokeWidth: 2.5 };
    return { r: radius(n.size || 8), fill: COLORS.phrase, stroke: "#2f5cb8" };
  }
  function radius(size) {
    return 3 + (7 * Math.max(0, size - 8)) / 26; // buildAskGraph's 8..34 (PPR score) as 3..10 px
  }
  // the label's text, cut to `chars` (a fact's parts each cut), and its weight or score after it
  function askLabel(n, chars) {
    if (n.kind === "fact") {
      const part = Math.max(6, Math.floor(chars / 2));
      return { main: `${shorten(n.subject, part)} — ${shorten(n.predicate, part)} — ${shorten(n.object, part)}`, extra: n.extra };
    }
    const cut = n.kind === "passage" ? shortenKeepingChunk : shorten;
    return { main: cut(n.name || n.label, chars), extra: n.extra };
  }

  const askView = { svg: null, layout: null, scale: 1, view: null, drag: null, drawn: null, size: "" };
  function drawAsk(drawn) {
    const box = $("ask-graph");
    askView.drawn = drawn;
    askView.size = `${askBox().w}x${askBox().h}`;
    if (!askBox().w) return; // labels are measured as drawn: drawn when the Ask view is shown
    clear(box);
    const root = svgEl("svg", { class: "ask-svg", role: "img", "aria-label": "retrieval graph" });
    box.append(root);
    askView.svg = root;
    if (!drawn.nodes.length) {
      askView.layout = null;
      return;
    }
    let layout = null;
    let readable = null;
    for (const option of ASK_LAYOUTS) {
      clear(root);
      layout = layoutAsk(root, drawn, option);
      const s = fitScale(layout);
      if (s >= ASK.good) break;
      if (!readable && s >= floorScale()) readable = layout;
    }
    if (fitScale(layout) < ASK.good && readable && readable !== layout) {
      clear(root);
      layout = layoutAsk(root, drawn, readable.option);
    }
    askView.layout = layout;
    fitAsk();
    explorer.askDraws = (explorer.askDraws || 0) + 1;
  }
  explorer.drawAsk = drawAsk;

  function layoutAsk(root, drawn, option) {
    const edgeLayer = svgEl("g", { class: "edges" });
    const nodeLayer = svgEl("g", { class: "nodes" });
    root.append(edgeLayer, nodeLayer);
    const columns = [[], [], [], []];
    const byKey = new Map();
    for (const n of drawn.nodes) {
      const shape = askShape(n);
      const label = askLabel(n, shape.box ? Math.round(option.chars * (n.kind === "fact" ? 1.4 : 1)) : option.chars);
      const g = svgEl("g", { class: `node ${n.style || n.kind}`, "data-key": n.key });
      g.append(svgEl("title", {}, (n.tip || [n.label]).join("\n")));
      const text = svgEl("text", { class: "label", "font-size": ASK.font, "dominant-baseline": "central" });
      text.append(document.createTextNode(label.main));
      if (label.extra) text.append(svgEl("tspan", { class: "extra" }, " " + label.extra));
      if (shape.text) text.setAttribute("fill", shape.text);
      let marker;
      if (shape.box) marker = svgEl("rect", { rx: 4, fill: shape.fill, stroke: shape.stroke });
      else if (shape.diamond) marker = svgEl("path", { fill: shape.fill, stroke: shape.stroke });
      else marker = svgEl("circle", { r: shape.r, fill: shape.fill, stroke: shape.stroke, "stroke-width": shape.strokeWidth || 1 });
      marker.setAttribute("class", "marker");
      g.append(marker, text);
      nodeLayer.append(g);
      const textWidth = text.getComputedTextLength();
      const item = { n, g, text, marker, shape, level: Math.max(0, Math.min(3, n.level || 0)) };
      if (shape.box) {
        item.w = textWidth + 2 * ASK.boxPadX;
        item.h = ASK.line + 2 * ASK.boxPadY;
      } else {
        item.w = 2 * shape.r + 5 + textWidth;
        item.h = Math.max(2 * shape.r, ASK.line);
      }
      columns[item.level].push(item);
      byKey.set(n.key, item);
    }
    // neighbours, for ordering each column by where its neighbours are
    const around = new Map([...byKey.keys()].map((k) => [k, []]));
    for (const e of drawn.edges) {
      if (!byKey.has(e.source) || !byKey.has(e.target)) continue;
      around.get(e.source).push(byKey.get(e.target));
      around.get(e.target).push(byKey.get(e.source));
    }
    columns[3].sort((a, b) => (a.n.rank || 0) - (b.n.rank || 0));
    const used = columns.filter((c) => c.length);
    // x: each used column as wide as its widest node, `colGap` apart
    let x = 0;
    for (const column of used) {
      const width = Math.max(...column.map((i) => i.w));
      for (const item of column) item.x = column[0].shape.box && column.every((i) => i.shape.box) ? x + (width - item.w) / 2 : x;
      column.width = width;
      x += width + option.colGap;
    }
    const width = x - option.colGap;
    // rows ASK.gap apart, or further where the box has room (up to ASK.maxGap)
    const rowsHeight = (column) => column.reduce((sum, i) => sum + i.h, 0);
    const most = used.reduce((a, b) => (rowsHeight(b) + ASK.gap * b.length > rowsHeight(a) + ASK.gap * a.length ? b : a));
    const room = askBox().h - 2 * ASK.pad - rowsHeight(most);
    const gap = most.length > 1 ? Math.max(ASK.gap, Math.min(ASK.maxGap, room / (most.length - 1))) : ASK.gap;
    const heightOf = (column) => rowsHeight(column) + gap * (column.length - 1);
    const height = Math.max(...used.map(heightOf));
    // y: the tallest column stacked in its order; the others near their neighbours, in turn, then again
    const stack = (column) => {
      let y = (height - heightOf(column)) / 2;
      for (const item of column) {
        item.y = y + item.h / 2;
        y += item.h + gap;
      }
    };
    const placed = new Set();
    const want = (item) => {
      const ys = around.get(item.n.key).filter((o) => placed.has(o) && o.level !== item.level).map((o) => o.y);
      return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : null;
    };
    const settle = (column) => {
      const wanted = column.map((item, i) => ({ item, y: want(item), i }));
      let fallback = 0;
      for (const w of wanted) {
        if (w.y === null) w.y = fallback;
        else fallback = w.y;
      }
      if (column !== columns[3]) wanted.sort((a, b) => a.y - b.y || a.i - b.i);
      column.splice(0, column.length, ...wanted.map((w) => w.item));
      // keep the wanted places where they do not meet; push apart where they do; stay inside [0, height]
      let y = 0;
      for (const w of wanted) {
        w.item.y = Math.max(w.y, y + w.item.h / 2);
        y = w.item.y + w.item.h / 2 + gap;
      }
      let bottom = height;
      for (const w of [...wanted].reverse()) {
        w.item.y = Math.min(w.item.y, bottom - w.item.h / 2);
        bottom = w.item.y - w.item.h / 2 - gap;
      }
      for (const item of column) placed.add(item);
    };
    const tallest = used.reduce((a, b) => (heightOf(b) > heightOf(a) ? b : a));
    const start = used.indexOf(tallest);
    if (tallest !== columns[3]) {
      // order the tallest column by its neighbours' order first (passages are fixed, by rank)
      stack(columns[3]);
      columns[3].forEach((i) => placed.add(i));
      settleOrder(tallest, want);
      placed.clear();
    }
    stack(tallest);
    tallest.forEach((i) => placed.add(i));
    const order = used.map((c, i) => [Math.abs(i - start), c]).sort((a, b) => a[0] - b[0]).map(([, c]) => c);
    for (const column of order.slice(1)) settle(column);
    for (const column of order.slice(1)) settle(column);
    // draw: markers, labels, then the edges behind them
    for (const item of byKey.values()) {
      const cy = item.y;
      if (item.shape.box) {
        item.marker.setAttribute("x", item.x);
        item.marker.setAttribute("y", cy - item.h / 2);
        item.marker.setAttribute("width", item.w);
        item.marker.setAttribute("height", item.h);
        item.text.setAttribute("x", item.x + ASK.boxPadX);
        item.left = item.x;
        item.right = item.x + item.w;
        item.cx = item.x + item.w / 2;
      } else {
        const r = item.shape.r;
        const cx = item.x + r;
        if (item.shape.diamond)
          item.marker.setAttribute("d", `M${cx - r},${cy} L${cx},${cy - r} L${cx + r},${cy} L${cx},${cy + r} Z`);
        else {
          item.marker.setAttribute("cx", cx);
          item.marker.setAttribute("cy", cy);
        }
        item.text.setAttribute("x", cx + r + 5);
        item.left = item.x;
        item.right = item.x + item.w;
        item.cx = cx;
      }
      item.text.setAttribute("y", cy);
    }
    for (const e of drawn.edges) {
      const a = byKey.get(e.source);
      const b = byKey.get(e.target);
      if (!a || !b) continue;
      edgeLayer.append(askEdge(e, a, b));
    }
    return { width, height, items: byKey, option };
  }
  // the tallest column's order: by where its neighbours in the other columns would be
  function settleOrder(column, want) {
    const keyed = column.map((item, i) => ({ item, y: want(item), i }));
    keyed.sort((a, b) => (a.y ?? Infinity) - (b.y ?? Infinity) || a.i - b.i);
    column.splice(0, column.length, ...keyed.map((k) => k.item));
  }
  function askEdge(e, a, b) {
    const style = EDGE_STYLE[e.kind] || EDGE_STYLE.RELATION;
    let d;
    if (a.level === b.level) {
      // within a column: an arc out to the left of the markers, never across the labels
      const x = Math.min(a.left, b.left);
      const bend = 18 + Math.min(60, Math.abs(a.y - b.y) / 4);
      d = `M${a.left},${a.y} C${x - bend},${a.y} ${x - bend},${b.y} ${b.left},${b.y}`;
    } else {
      const [l, r] = a.level < b.level ? [a, b] : [b, a];
      const dx = Math.max(24, (r.left - l.right) / 2);
      d = `M${l.right},${l.y} C${l.right + dx},${l.y} ${r.left - dx},${r.y} ${r.left},${r.y}`;
    }
    const g = svgEl("g", { class: "edge " + e.kind, "data-source": e.source, "data-target": e.target });
    const what = e.kind === "REACHED" ? `phrase's score for this passage ${e.label}` : e.label || "";
    g.append(svgEl("title", {}, `${e.kind}${what ? ": " + what : ""}`));
    const line = svgEl("path", { d, fill: "none", stroke: style.color, "stroke-width": style.width });
    if (Math.abs(a.level - b.level) > 1) line.setAttribute("stroke-opacity", 0.45); // it passes over a column
    if (style.dash) line.setAttribute("stroke-dasharray", style.dash);
    g.append(line, svgEl("path", { d, class: "hit", fill: "none", stroke: "transparent", "stroke-width": 8 }));
    return g;
  }

  function askBox() {
    const box = $("ask-graph");
    return { w: box.clientWidth, h: box.clientHeight };
  }
  function fitScale(layout) {
    const { w, h } = askBox();
    const s = Math.min(w / (layout.width + 2 * ASK.pad), h / (layout.height + 2 * ASK.pad));
    return Math.min(ASK.maxScale, s);
  }
  const floorScale = () => ASK.minFont / ASK.font;
  // the view: `scale` CSS px per unit, centred on (cx, cy) in layout units
  function setView(scale, cx, cy) {
    const layout = askView.layout;
    const { w, h } = askBox();
    if (!layout || !w || !h) return;
    askView.scale = Math.max(floorScale(), Math.min(4, scale));
    askView.view = { cx, cy };
    const vw = w / askView.scale;
    const vh = h / askView.scale;
    askView.svg.setAttribute("viewBox", `${cx - vw / 2} ${cy - vh / 2} ${vw} ${vh}`);
    explorer.askScale = askView.scale;
  }
  function fitAsk() {
    const layout = askView.layout;
    if (!layout) return;
    const s = fitScale(layout);
    if (s >= floorScale()) {
      setView(s, layout.width / 2, layout.height / 2);
      return;
    }
    // too large to fit with readable labels: readable, from the top left (drag for the rest)
    const { w, h } = askBox();
    const f = floorScale();
    setView(f, Math.min(layout.width / 2, w / f / 2 - ASK.pad), Math.min(layout.height / 2, h / f / 2 - ASK.pad));
  }
  explorer.fitAsk = fitAsk;
  function wireAskGraph() {
    const box = $("ask-graph");
    box.addEventListener(
      "wheel",
      (event) => {
        if (!askView.layout || !askView.view) return;
        event.preventDefault();
        const rect = box.getBoundingClientRect();
        const { w, h } = askBox();
        const s0 = askView.scale;
        const s1 = Math.max(floorScale(), Math.min(4, s0 * Math.exp(-event.deltaY / 500)));
        // keep the point under the pointer where it is
        const px = askView.view.cx + (event.clientX - rect.left - w / 2) / s0;
        const py = askView.view.cy + (event.clientY - rect.top - h / 2) / s0;
        setView(s1, px - (event.clientX - rect.left - w / 2) / s1, py - (event.clientY - rect.top - h / 2) / s1);
      },
      { passive: false },
    );
    box.addEventListener("pointerdown", (event) => {
      if (!askView.view || event.button !== 0) return;
      askView.drag = { x: event.clientX, y: event.clientY, cx: askView.view.cx, cy: askView.view.cy, moved: false };
    });
    window.addEventListener("pointermove", (event) => {
      const drag = askView.drag;
      if (!drag) return;
      const dx = event.clientX - drag.x;
      const dy = event.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (drag.moved) setView(askView.scale, drag.cx - dx / askView.scale, drag.cy - dy / askView.scale);
    });
    window.addEventListener("pointerup", () => {
      setTimeout(() => (askView.drag = null), 0);
    });
    box.addEventListener("dblclick", fitAsk);
    box.addEventListener("click", (event) => {
      if (askView.drag && askView.drag.moved) return;
      const node = event.target.closest && event.target.closest("g.node");
      if (!node) return;
      const [kind, id] = splitKey(node.dataset.key);
      if (kind === "passage") openPassage(id);
      if (kind === "phrase" || kind === "entity") {
        showView("explore");
        expand(kind, id);
      }
    });
    // a new size is laid out again: labels cut and rows spaced for the room there is
    new ResizeObserver(() => {
      const size = `${askBox().w}x${askBox().h}`;
      if (askBox().w && askView.drawn && size !== askView.size) drawAsk(askView.drawn);
    }).observe(box);
  }

  // --- Ask ----------------------------------------------------------------------------------------
  function phraseNames(result) {
    const names = new Set();
    for (const l of result.linked) names.add(l.phrase);
    for (const l of result.seed_links || []) names.add(l.phrase);
    for (const s of result.seeds) names.add(s.phrase);
    for (const f of result.facts) if (f.kept) [f.subject, f.object].forEach((x) => names.add(x));
    for (const item of result.passages) {
      for (const p of item.explanation.top_phrases) names.add(p.phrase);
      for (const l of item.explanation.linked) names.add(l.phrase);
      for (const e of item.linked_entities || []) names.add(e.via_phrase);
    }
    return [...names];
  }

  function buildAskGraph(result, graph) {
    const ids = graph.phrase_ids;
    const nodes = new Map();
    const edges = new Map();
    const pkey = (name) => "phrase:" + (ids[name] || name);
    const addNode = (n) => {
      const old = nodes.get(n.key);
      nodes.set(n.key, old ? Object.assign(old, n, { level: Math.min(old.level, n.level) }) : n);
    };
    const addEdge = (e) => {
      const id = `${e.kind}|${e.source}|${e.target}`;
      if (!edges.has(id)) edges.set(id, Object.assign({ id }, e));
    };
    // reached phrases: PPR score (or contribution) as size
    const reached = new Map();
    for (const item of result.passages)
      for (const p of item.explanation.top_phrases) reached.set(p.phrase, Math.max(reached.get(p.phrase) || 0, p.score));
    const maxReached = Math.max(1e-12, ...reached.values());
    for (const [name, score] of reached)
      addNode({
        key: pkey(name), kind: "phrase", label: name, name, level: 2,
        size: 8 + 26 * Math.sqrt(score / maxReached), score,
        tip: [name, `PPR score ${fmt(score, 4)}`],
      });
    // seeds: the query's entities and their linked phrases, the kept facts and the phrases they seed
    const seedWeight = new Map();
    for (const l of [...result.linked, ...(result.seed_links || [])])
      seedWeight.set(l.phrase, Math.max(seedWeight.get(l.phrase) || 0, l.weight));
    for (const s of result.seeds) seedWeight.set(s.phrase, Math.max(seedWeight.get(s.phrase) || 0, s.weight));
    for (const [name, weight] of seedWeight) {
      const score = reached.get(name);
      addNode({
        key: pkey(name), kind: "phrase", style: "seed", label: `${name}\nw ${fmt(weight)}`, name, extra: `w ${fmt(weight)}`, level: 1,
        size: score ? 8 + 26 * Math.sqrt(score / maxReached) : 14, score,
        tip: [name, `seed weight ${fmt(weight, 4)}`].concat(score ? [`PPR score ${fmt(score, 4)}`] : []),
      });
    }
    for (const entity of result.query_entities)
      addNode({ key: "query:" + entity, kind: "query", label: entity, level: 0, tip: ["query entity", entity] });
    for (const l of result.linked) {
      addNode({ key: "query:" + l.query_entity, kind: "query", label: l.query_entity, level: 0, tip: ["query entity", l.query_entity] });
      addEdge({ kind: "LINK", source: "query:" + l.query_entity, target: pkey(l.phrase), label: `cos ${fmt(l.similarity, 2)}` });
    }
    for (const l of result.seed_links || []) {
      const key = "entity:" + l.query_entity;
      addNode({ key, kind: "entity", label: l.query_entity, level: 0, tip: ["seed node (your graph)", l.query_entity] });
      addEdge({ kind: "SAME_AS", source: pkey(l.phrase), target: key, label: `SAME_AS ${fmt(l.similarity, 2)}` });
    }
    result.facts.forEach((f, i) => {
      if (!f.kept) return;
      const key = "fact:" + i;
      addNode({
        key, kind: "fact", level: 0, subject: f.subject, predicate: f.predicate, object: f.object, extra: fmt(f.score, 2),
        label: `${shorten(f.subject, 24)} — ${shorten(f.predicate, 20)} — ${shorten(f.object, 24)}\nfact ${fmt(f.score, 2)}`,
        tip: ["kept fact", `(${f.subject}, ${f.predicate}, ${f.object})`, `similarity ${fmt(f.similarity, 3)}`],
      });
      addEdge({ kind: "SEED", source: key, target: pkey(f.subject), label: "subject" });
      addEdge({ kind: "SEED", source: key, target: pkey(f.object), label: "object" });
    });
    // passages, by rank; the phrases that brought each up
    for (const item of result.passages) {
      const key = "passage:" + item.passage.id;
      const title = passageCaption(item.passage.id, item.passage.title);
      addNode({
        key, kind: "passage", label: `#${item.rank} ${shortenKeepingChunk(title, 32)}`, name: `#${item.rank} ${title}`, level: 3, rank: item.rank,
        tip: [title, `rank ${item.rank} · score ${fmt(item.score, 4)}`],
      });
      for (const p of item.explanation.top_phrases)
        addEdge({ kind: "REACHED", source: pkey(p.phrase), target: key, label: fmt(p.score, 4) });
      for (const e of item.linked_entities || []) {
        const ekey = "entity:" + e.node_id;
        addNode({
          key: ekey, kind: "entity", label: e.name || e.node_id, level: 2,
          tip: [`${e.labels.join(":")} ${e.name || ""}`, e.node_id, `via ${e.via_phrase} (${e.method} ${fmt(e.score, 2)})`],
        });
        addEdge({ kind: "SAME_AS", source: pkey(e.via_phrase), target: ekey, label: `SAME_AS ${fmt(e.score, 2)}` });
      }
    }
    // edges the store holds among what is drawn: relations, synonyms, mentions not already shown
    for (const e of graph.edges) {
      if (!nodes.has(e.source) || !nodes.has(e.target)) continue;
      if (e.kind === "MENTIONS") {
        if (edges.has(`REACHED|${e.target}|${e.source}`)) continue;
        addEdge({ kind: "MENTIONS", source: e.target, target: e.source, label: "" });
      } else if (e.kind === "SYNONYM") {
        addEdge({ kind: "SYNONYM", source: e.source, target: e.target, label: `synonym ${fmt(e.weight, 2)}` });
      } else {
        addEdge({ kind: e.kind, source: e.source, target: e.target, label: shorten(e.label, 40) });
      }
    }
    return { nodes: [...nodes.values()], edges: [...edges.values()] };
  }

  function renderResults(result) {
    const list = $("ask-results");
    clear(list);
    for (const item of result.passages) {
      const ex = item.explanation;
      const via = ex.top_phrases.map((p) => p.phrase).slice(0, 5).join(", ");
      const li = el(
        "li",
        { "data-key": "passage:" + item.passage.id, "data-rank": String(item.rank) },
        el("span", { cls: "score", text: fmt(item.score, 4) }),
        el("div", { cls: "title", text: `${item.rank}. ${item.passage.title || item.passage.id}` }),
        el("div", { cls: "snippet", text: shorten(item.passage.text, 220) }),
        via ? el("div", { cls: "via", text: "via " + via }) : null,
      );
      li.addEventListener("click", () => openPassage(item.passage.id));
      list.append(li);
    }
    const notes = [];
    if (result.query_entities.length) notes.push("query entities: " + result.query_entities.join(", "));
    if (result.note) notes.push(result.note);
    if (result.clues.length) notes.push("clues: " + result.clues.join(" | "));
    if (result.thoughts.length) notes.push("thoughts: " + result.thoughts.join(" | "));
    if (result.joined) notes.push("joined graph via: " + (result.joined.join(", ") || "SAME_AS only"));
    const discarded = result.facts.filter((f) => !f.kept);
    if (discarded.length) notes.push("facts not kept: " + discarded.map((f) => `(${f.subject}, ${f.predicate}, ${f.object})`).join("; "));
    $("ask-notes").textContent = notes.join("\n");
  }

  async function ask(event) {
    if (event) event.preventDefault();
    const status = $("ask-status");
    const body = { query: $("ask-query").value, top_k: Number($("ask-topk").value) || 5 };
    if ($("ask-mode").value) body.mode = $("ask-mode").value;
    if ($("ask-strategy").value) body.strategy = $("ask-strategy").value;
    const via = $("ask-via").value.split(",").map((s) => s.trim()).filter(Boolean);
    if (via.length) body.via = via;
    if ($("ask-joined").checked) body.joined = true;
    setStatus(status, "Retrieving…");
    try {
      const { data: result } = await api("/query", { method: "POST", body });
      const { data: graph } = await api("/explorer/api/answer-graph", {
        method: "POST",
        body: { phrases: phraseNames(result), passage_ids: result.passages.map((p) => p.passage.id) },
      });
      renderResults(result);
      const drawn = buildAskGraph(result, graph);
      explorer.ask = drawn;
      explorer.askResult = result;
      drawAsk(drawn);
      const t = result.timings && result.timings.total ? ` in ${fmt(result.timings.total, 2)} s` : "";
      setStatus(status, `${result.mode} · ${result.strategy}: ${result.passages.length} passages${t}`);
      showCypher("ask-cypher", graph.cypher);
      explorer.askCount = (explorer.askCount || 0) + 1;
    } catch (error) {
      reportError(status, error);
    }
  }
  $("ask-form").addEventListener("submit", ask);
  legend("ask-legend", [
    ["query", "query entity"], ["fact", "kept fact"], ["seed", "seed phrase (weight)"],
    ["phrase", "phrase reached (size: PPR score)"], ["passage", "passage (rank)"], ["entity", "your node (SAME_AS)"],
  ]);

  // --- Explore ------------------------------------------------------------------------------------
  const expanded = new Set();
  function exploreNode(n) {
    const tip = [n.label, n.key];
    if (n.passage_count !== null && n.passage_count !== undefined) tip.push(`${n.passage_count} passages`);
    if (n.labels && n.labels.length) tip.push("labels: " + n.labels.join(", "));
    const label = n.kind === "passage" ? shortenKeepingChunk(n.label, 32) : n.label;
    const size = n.kind === "phrase" ? 8 + 4 * Math.log2(1 + (n.passage_count || 0)) : undefined;
    return { key: n.key, kind: n.kind, label, tip, size };
  }
  const QUIET_EDGES = 20;
  function edgeLabel(e) {
    if (e.kind === "RELATION") return shorten(e.label, 40);
    if (e.kind === "SYNONYM") return `synonym ${fmt(e.weight, 2)}`;
    if (e.kind === "SAME_AS") return `SAME_AS ${fmt(e.weight, 2)}`;
    if (e.kind === "LINKED") return e.label;
    return "";
  }
  async function expand(kind, id) {
    const status = $("explore-status");
    const limit = Math.min(300, Math.max(1, Number($("explore-limit").value) || 60));
    const cap = Math.min(300, Math.max(1, Number($("explore-cap").value) || 25));
    setStatus(status, "Loading…");
    try {
      const params = new URLSearchParams({ kind, id, limit: String(limit), cap: String(cap) });
      const { data } = await api("/explorer/api/neighbourhood?" + params);
      const net = network("explore", $("explore-graph"));
      const all = [data.center, ...data.nodes];
      const fresh = all.filter((n) => !net.nodes.get(n.key)).map(exploreNode);
      net.nodes.add(fresh.map(visNode));
      // a "+N more" node drawn before says how many are not drawn now
      net.nodes.update(all.filter((n) => n.kind === "more").map((n) => visNode(exploreNode(n))));
      // "+N more" nodes of this center that no longer stand for anything (a larger cap) go
      const mores = new Set(data.groups.map((g) => g.more).filter(Boolean));
      net.nodes.remove(net.nodes.getIds().filter((k) => k.startsWith(`more:${data.center.key}|`) && !mores.has(k)));
      // around a hub, labels on every edge would pile up at the center: there they are tooltips only
      const quiet = data.edges.length > QUIET_EDGES;
      const edges = data.edges.map((e) => ({ kind: e.kind, source: e.source, target: e.target, label: edgeLabel(e) }));
      net.edges.update(edges.map((e) => Object.assign(visEdge(quiet ? { ...e, label: "" } : e), { title: e.label || undefined })));
      explorer.stable = false;
      net.network.once("stabilizationIterationsDone", () => {
        net.network.fit({ animation: false });
        explorer.stable = true;
      });
      net.network.stabilize(150);
      expanded.add(data.center.key);
      net.nodes.update({ id: data.center.key, borderWidth: 3 });
      setStatus(status, exploreSummary(data, limit, cap));
      explorer.explore = {
        nodes: net.nodes.getIds(),
        edges: net.edges.get().map((e) => ({ source: e.from, target: e.to, label: e.label || "", title: e.title || "" })),
        expanded: [...expanded],
        truncated: data.truncated,
        groups: data.groups,
      };
      showCypher("explore-cypher", data.cypher);
      explorer.exploreCount = (explorer.exploreCount || 0) + 1;
      return data;
    } catch (error) {
      reportError(status, error);
      return null;
    }
  }
  explorer.expand = expand;
  // "stanford university: 25 of 1,068 passages, 12 related phrases, 3 of 40 synonyms shown (25 a kind at
  // most; the rest are the '+N more' nodes)"
  function exploreSummary(data, limit, cap) {
    const shown = data.nodes.filter((n) => n.kind !== "more").length;
    if (!data.groups.length) return `${data.center.label}: ${shown} neighbours${data.truncated ? ` (cut at ${limit})` : ""}`;
    const parts = data.groups.map((g) =>
      g.shown < g.total ? `${g.shown} of ${g.total.toLocaleString("en")} ${g.name}` : `${g.total.toLocaleString("en")} ${g.name}`);
    const cut = data.truncated
      ? ` shown — at most ${cap} of a kind and ${limit} in all (raise "per kind" or "neighbours"); the rest are the "+N more" nodes`
      : "";
    return `${data.center.label}: ${parts.join(", ")}${cut}`;
  }
  function splitKey(key) {
    const i = key.indexOf(":");
    return [key.slice(0, i), key.slice(i + 1)];
  }
  async function search(event) {
    event.preventDefault();
    const status = $("explore-status");
    const list = $("search-results");
    clear(list);
    try {
      const params = new URLSearchParams({ q: $("search-input").value, limit: "20" });
      const { data } = await api("/explorer/api/search?" + params);
      for (const n of data) {
        const extra = n.kind === "phrase" ? ` · ${n.passage_count} passages` : "";
        const li = el("li", { "data-key": n.key }, el("div", { cls: "title", text: n.label }), el("div", { cls: "snippet", text: n.kind + extra }));
        li.addEventListener("click", () => expand(n.kind, n.id));
        list.append(li);
      }
      setStatus(status, `${data.length} found; click one to open its neighbourhood, then click nodes to expand`);
    } catch (error) {
      reportError(status, error);
    }
  }
  $("search-form").addEventListener("submit", search);
  $("explore-clear").addEventListener("click", () => {
    const net = explorer.networks.explore;
    if (net) {
      net.nodes.clear();
      net.edges.clear();
    }
    expanded.clear();
    explorer.explore = { nodes: [], edges: [], expanded: [] };
  });
  legend("explore-legend", [
    ["phrase", "phrase (size: passages)"], ["passage", "passage (click: text)"], ["entity", "your node (SAME_AS)"],
    ["more", "+N more: the rest of a kind, not drawn"],
  ]);

  function onExploreClick(params) {
    if (!params.nodes.length) return;
    const [kind, id] = splitKey(params.nodes[0]);
    if (kind === "passage") openPassage(id);
    if (["phrase", "passage", "entity"].includes(kind)) expand(kind, id);
    if (kind === "more") {
      const node = explorer.networks.explore.nodes.get(params.nodes[0]);
      setStatus($("explore-status"), `${node.label} not drawn: raise "per kind" and open the node again, or run the Cypher below in Neo4j Browser`);
    }
  }

  // --- passage panel ----------------------------------------------------------------------------
  async function openPassage(id) {
    const panel = $("passage-panel");
    try {
      const { data } = await api("/explorer/api/passage?" + new URLSearchParams({ id }));
      $("panel-title").textContent = data.passage.title || data.passage.id;
      $("panel-id").textContent = data.passage.id;
      $("panel-text").textContent = data.passage.text;
      const chips = $("panel-phrases");
      clear(chips);
      for (const n of data.graph.nodes.filter((x) => x.kind === "phrase")) {
        const chip = el("li", { text: n.label, "data-key": n.key });
        chip.addEventListener("click", () => {
          showView("explore");
          expand("phrase", n.id);
        });
        chips.append(chip);
      }
      if (data.graph.truncated) chips.append(el("li", { text: "… more" }));
      showCypher("panel-cypher", data.graph.cypher);
      panel.hidden = false;
      explorer.panel = { id: data.passage.id, phrases: data.graph.nodes.filter((x) => x.kind === "phrase").map((x) => x.key) };
    } catch (error) {
      panel.hidden = false;
      reportError($("panel-text"), error);
    }
  }
  explorer.openPassage = openPassage;
  $("panel-close").addEventListener("click", () => ($("passage-panel").hidden = true));

  // --- Manage ---------------------------------------------------------------------------------------
  let nextAfter = "";
  async function loadPassages(reset) {
    const body = $("passage-table").querySelector("tbody");
    const status = $("manage-status");
    if (reset) {
      clear(body);
      nextAfter = "";
    }
    try {
      const params = new URLSearchParams({ after: nextAfter, limit: "50" });
      const { data } = await api("/explorer/api/passages?" + params);
      for (const p of data.passages) {
        const box = el("input", { type: "checkbox", value: p.id });
        box.addEventListener("change", updateDelete);
        const open = el("a", { href: "#", text: p.id });
        open.addEventListener("click", (e) => {
          e.preventDefault();
          openPassage(p.id);
        });
        body.append(
          el("tr", { "data-id": p.id }, el("td", {}, box), el("td", {}, open), el("td", { text: p.title || "" }),
            el("td", { text: p.source || "" }), el("td", { text: String(p.chars) })),
        );
      }
      nextAfter = data.next_after || "";
      $("passages-more").hidden = !data.next_after;
      $("passage-table").dataset.loaded = "1";
      setStatus(status, `${body.children.length} shown`);
      updateDelete();
    } catch (error) {
      reportError(status, error);
    }
  }
  function selectedIds() {
    return [...$("passage-table").querySelectorAll("tbody input:checked")].map((b) => b.value);
  }
  function updateDelete() {
    $("passages-delete").disabled = selectedIds().length === 0;
  }
  $("passages-reload").addEventListener("click", () => loadPassages(true));
  $("passages-more").addEventListener("click", () => loadPassages(false));
  $("passages-delete").addEventListener("click", async () => {
    const ids = selectedIds();
    if (!ids.length || !window.confirm(`Delete ${ids.length} passage(s) and what only they supported?`)) return;
    const status = $("manage-status");
    try {
      const { data } = await api("/passages", { method: "DELETE", body: { ids } });
      await loadPassages(true);
      await loadOverview();
      setStatus(status, `deleted ${data.passages.length}, missing ${data.missing.length}; ${data.phrases_removed} phrases and ${data.facts_removed} facts went with them`);
    } catch (error) {
      reportError(status, error);
    }
  });

  async function followJob(job, item) {
    const bar = el("progress", { max: job.total, value: job.done });
    const line = el("div", { text: "" });
    item.append(bar, line);
    for (;;) {
      bar.max = job.total;
      bar.value = job.done;
      const r = job.report;
      line.textContent = `${job.status}: ${job.done} of ${job.total} · indexed ${r.indexed.length}, skipped ${r.skipped.length}, failed ${r.failed.length}`;
      for (const f of r.failed) if (!item.querySelector(`[data-failed="${CSS.escape(f.passage_id || "")}"]`))
        item.append(el("div", { cls: "error", "data-failed": f.passage_id || "", text: `${f.passage_id || f.source || "?"}: ${f.reason}` }));
      if (job.error) line.textContent += ` · ${job.error}`;
      if (["succeeded", "failed", "interrupted"].includes(job.status)) break;
      await new Promise((resolve) => setTimeout(resolve, 400));
      job = (await api("/jobs/" + encodeURIComponent(job.id))).data;
    }
    item.dataset.status = job.status;
    await loadOverview();
    if (!$("view-manage").hidden) await loadPassages(true);
  }
  $("index-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const passages = [];
    const text = $("index-text").value;
    if (text.trim()) {
      const p = { text };
      if ($("index-title").value.trim()) p.title = $("index-title").value.trim();
      if ($("index-id").value.trim()) p.id = $("index-id").value.trim();
      passages.push(p);
    }
    for (const file of $("index-files").files)
      passages.push({ id: file.name, title: file.name, text: await file.text(), metadata: { source: file.name } });
    const item = el("li", {}, el("div", { text: `${passages.length} passage(s)` }));
    $("jobs").prepend(item);
    if (!passages.length) {
      item.append(el("div", { cls: "error", text: "Nothing to index: paste a text or choose files." }));
      return;
    }
    try {
      const { data: job } = await api("/passages?as_job=true", { method: "POST", body: { passages } });
      item.dataset.job = job.id;
      for (const id of ["index-text", "index-title", "index-id", "index-files"]) $(id).value = "";
      await followJob(job, item);
    } catch (error) {
      const line = el("div", { cls: "error" });
      item.append(line);
      reportError(line, error);
    }
  });

  // --- wire up --------------------------------------------------------------------------------------
  function wireGraphs() {
    if (typeof vis === "undefined") return;
    network("explore", $("explore-graph")).network.on("click", onExploreClick);
  }
  wireGraphs();
  wireAskGraph();
  start();
})();
