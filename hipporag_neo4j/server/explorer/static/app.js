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
  function network(view, container, hierarchical) {
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
        smooth: hierarchical ? { type: "cubicBezier", forceDirection: "horizontal", roundness: 0.4 } : { type: "continuous" },
      },
      layout: hierarchical
        ? { hierarchical: { direction: "LR", levelSeparation: 260, nodeSpacing: 48, sortMethod: "directed", shakeTowards: "roots" } }
        : { improvedLayout: true },
      physics: hierarchical
        ? false
        : { solver: "forceAtlas2Based", stabilization: { iterations: 150, fit: true }, forceAtlas2Based: { springLength: 90 } },
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
    if (kind === "query")
      return Object.assign(base, { shape: "box", color: { background: COLORS.query, border: "#b8860b" }, margin: 8, font: { size: 14 } });
    if (kind === "fact")
      return Object.assign(base, { shape: "box", color: { background: COLORS.fact, border: "#b8a06a" }, font: { size: 11 } });
    const seed = kind === "seed";
    return Object.assign(base, {
      shape: "dot",
      size: n.size || 12,
      color: { background: seed ? COLORS.seed : COLORS.phrase, border: seed ? "#a4521b" : "#2f5cb8" },
      borderWidth: seed ? 3 : 1,
    });
  }
  function visEdge(e) {
    const dashed = e.kind === "SYNONYM" || e.kind === "SAME_AS";
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
    const net = explorer.networks[view];
    if (!net) return null;
    const pos = net.network.getPositions([key])[key];
    if (!pos) return null;
    const dom = net.network.canvasToDOM(pos);
    const rect = net.container.getBoundingClientRect();
    return { x: rect.left + dom.x, y: rect.top + dom.y };
  }
  explorer.domPosition = domPosition;

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
        key: pkey(name), kind: "phrase", label: name, level: 2,
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
        key: pkey(name), kind: "phrase", style: "seed", label: `${name}\nw ${fmt(weight)}`, level: 1,
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
        key, kind: "fact", level: 0,
        label: `${shorten(f.subject, 24)} — ${shorten(f.predicate, 20)} — ${shorten(f.object, 24)}\nfact ${fmt(f.score, 2)}`,
        tip: ["kept fact", `(${f.subject}, ${f.predicate}, ${f.object})`, `similarity ${fmt(f.similarity, 3)}`],
      });
      addEdge({ kind: "SEED", source: key, target: pkey(f.subject), label: "subject" });
      addEdge({ kind: "SEED", source: key, target: pkey(f.object), label: "object" });
    });
    // passages, by rank; the phrases that brought each up
    for (const item of result.passages) {
      const key = "passage:" + item.passage.id;
      const title = item.passage.title || item.passage.id;
      addNode({
        key, kind: "passage", label: `#${item.rank} ${shorten(title, 32)}`, level: 3, rank: item.rank,
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
      const net = network("ask", $("ask-graph"), true);
      net.edges.clear();
      net.nodes.clear();
      net.nodes.add(drawn.nodes.map(visNode));
      net.edges.add(drawn.edges.map(visEdge));
      net.network.fit();
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
    const label = n.kind === "passage" ? shorten(n.label, 32) : n.label;
    const size = n.kind === "phrase" ? 8 + 4 * Math.log2(1 + (n.passage_count || 0)) : undefined;
    return { key: n.key, kind: n.kind, label, tip, size };
  }
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
    setStatus(status, "Loading…");
    try {
      const params = new URLSearchParams({ kind, id, limit: String(limit) });
      const { data } = await api("/explorer/api/neighbourhood?" + params);
      const net = network("explore", $("explore-graph"), false);
      const all = [data.center, ...data.nodes];
      const fresh = all.filter((n) => !net.nodes.get(n.key)).map(exploreNode);
      net.nodes.add(fresh.map(visNode));
      const edges = data.edges.map((e) => ({ kind: e.kind, source: e.source, target: e.target, label: edgeLabel(e) }));
      net.edges.update(edges.map(visEdge));
      explorer.stable = false;
      net.network.once("stabilizationIterationsDone", () => {
        net.network.fit({ animation: false });
        explorer.stable = true;
      });
      net.network.stabilize(150);
      expanded.add(data.center.key);
      net.nodes.update({ id: data.center.key, borderWidth: 3 });
      const cut = data.truncated ? ` — cut at ${limit}: it has more (raise "neighbours")` : "";
      setStatus(status, `${data.center.label}: ${data.nodes.length} neighbours${cut}`);
      explorer.explore = {
        nodes: net.nodes.getIds(),
        edges: net.edges.get().map((e) => ({ source: e.from, target: e.to, label: e.label || "" })),
        expanded: [...expanded],
        truncated: data.truncated,
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
  ]);

  function onGraphClick(view) {
    return (params) => {
      if (!params.nodes.length) return;
      const [kind, id] = splitKey(params.nodes[0]);
      if (kind === "passage") openPassage(id);
      if (view === "explore" && ["phrase", "passage", "entity"].includes(kind)) expand(kind, id);
      if (view === "ask" && (kind === "phrase" || kind === "entity")) {
        showView("explore");
        expand(kind, id);
      }
    };
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
    network("ask", $("ask-graph"), true).network.on("click", onGraphClick("ask"));
    network("explore", $("explore-graph"), false).network.on("click", onGraphClick("explore"));
  }
  wireGraphs();
  start();
})();
