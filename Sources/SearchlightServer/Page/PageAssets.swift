/// The search page's script and style sheet, shipped inside the binary (no CDN, no build
/// step): served at `/assets/page.js` and `/assets/page.css`, so that the page's Content
/// Security Policy allows no inline script.
enum PageAssets {
    static let script = #"""
// The search page's script: searches as you type through /v1/search, and redraws what the
// server renders without it. Text is only ever set with textContent (never as HTML).
(() => {
  "use strict";
  const root = document.getElementById("searchlight");
  if (!root || !window.fetch || !window.URLSearchParams) return;
  const config = JSON.parse(root.dataset.config || "{}");
  const facets = config.facets || [];
  const $ = (id) => document.getElementById(id);
  const input = $("q"), form = $("search-form"), listbox = $("suggestions");
  const notice = $("notice"), status = $("status"), chips = $("chips"), facetsBox = $("facets");
  const explanation = $("explanation"), hitsList = $("hits"), more = $("more");
  const keyForm = $("key-form"), keyInput = $("key");
  const START = "\uE000", END = "\uE001", DEBOUNCE_MS = 120, LIMIT = 20;

  let state = read(location.search);
  let issued = 0;           // the newest search sent; only its answer is drawn
  let controller = null;    // aborts the search it replaces
  let timer = 0;
  let composing = false;    // an input method is composing: no search on half-composed text
  let suggestSeq = 0, suggestionsOn = true, active = -1, options = [];
  let nextCursor = null;
  let answered = 0;         // answers handled, drawn or dropped (data-answered: tests wait on it)

  // ---- state and URLs ----
  function read(search) {
    const p = new URLSearchParams(search);
    return { q: p.get("q") || "", filters: p.getAll("filter").filter(Boolean),
             entities: p.getAll("entity").filter(Boolean), sources: p.getAll("source").filter(Boolean) };
  }
  function copy(s) { return { q: s.q, filters: s.filters.slice(), entities: s.entities.slice(), sources: s.sources.slice() }; }
  function pageURL(s) {
    const p = new URLSearchParams();
    if (s.q) p.append("q", s.q);
    s.filters.forEach((f) => p.append("filter", f));
    s.entities.forEach((e) => p.append("entity", e));
    s.sources.forEach((x) => p.append("source", x));
    const text = p.toString();
    return text ? "/?" + text : "/";
  }
  function apiURL(s, cursor) {
    const p = new URLSearchParams();
    p.append("q", s.q); p.append("prefix", "true"); p.append("highlight", "private-use"); p.append("limit", String(LIMIT));
    if (s.filters.length) p.append("filter", s.filters.length === 1 ? s.filters[0] : s.filters.map((f) => "(" + f + ")").join(" AND "));
    facets.forEach((f) => p.append("facet", f));
    s.entities.forEach((e) => p.append("entity", e));
    s.sources.forEach((x) => p.append("source", x));
    if (cursor) p.append("cursor", cursor);
    return "/v1/search?" + p.toString();
  }
  function clause(attribute, value) {
    const name = "`" + attribute.replace(/`/g, "``") + "`";
    if (value === null) return name + " IS NULL";
    if (typeof value === "number") return Number.isFinite(value) ? name + " = " + String(value) : null;
    if (typeof value === "string") return name + ' = "' + value.replace(/"/g, '""') + '"';
    return null; // a BLOB: the page cannot name it
  }
  function shownValue(value) {
    if (value === null) return "null";
    if (typeof value === "object") return value.blob !== undefined ? "x'" + value.blob + "'" : JSON.stringify(value);
    return String(value);
  }
  // Typing edits one entry of the history; a new query, a filter or a suggestion adds one.
  function remember(s, push) {
    const url = pageURL(s);
    if (url === location.pathname + location.search) return;
    const current = read(location.search).q;
    const editing = current !== "" && s.q !== "" && (s.q.startsWith(current) || current.startsWith(s.q));
    if (push || !editing) history.pushState(null, "", url); else history.replaceState(null, "", url);
  }
  function headers() {
    const key = sessionStorage.getItem("searchlight.key");
    return key ? { Authorization: "Bearer " + key } : {};
  }

  // ---- drawing ----
  function marked(text, into) {
    let mark = null, buffer = "";
    const flush = () => { if (buffer) { (mark || into).appendChild(document.createTextNode(buffer)); buffer = ""; } };
    for (const ch of text) {
      if (ch === START && !mark) { flush(); mark = document.createElement("mark"); }
      else if (ch === END && mark) { flush(); into.appendChild(mark); mark = null; }
      else if (ch !== START && ch !== END) buffer += ch;
    }
    flush();
    if (mark) into.appendChild(mark);
  }
  function count(total, atLeast) { return total.toLocaleString("en-US") + (atLeast ? "+" : ""); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function element(tag, text, attributes) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    Object.entries(attributes || {}).forEach(([name, value]) => node.setAttribute(name, value));
    return node;
  }
  function link(text, next, onClick) {
    const a = element("a", text, { href: pageURL(next) });
    a.addEventListener("click", (event) => {
      if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
      event.preventDefault();
      (onClick || go)(next);
    });
    return a;
  }
  function showNotice(message) {
    notice.textContent = message || "";
    notice.hidden = !message;
  }
  function drawChips() {
    clear(chips);
    const add = (label, next) => {
      const li = element("li");
      li.appendChild(element("bdi", label));
      li.appendChild(document.createTextNode(" "));
      const a = link("×", next);
      a.setAttribute("aria-label", "Remove " + label);
      li.appendChild(a);
      chips.appendChild(li);
    };
    state.filters.forEach((f) => { const n = copy(state); n.filters = n.filters.filter((x) => x !== f); add(f, n); });
    state.entities.forEach((e) => { const n = copy(state); n.entities = []; add("entity: " + e, n); });
    state.sources.forEach((x) => { const n = copy(state); n.sources = []; add("source: " + x, n); });
  }
  function drawFacets(page) {
    clear(facetsBox);
    const group = (name, items) => {
      if (!items.length) return;
      const section = element("section", null, { class: "facet" });
      section.appendChild(element("h2", name));
      const ul = element("ul");
      items.forEach((item) => {
        const li = element("li");
        const target = item.next ? link("", item.next) : element("span");
        target.appendChild(element("bdi", item.label));
        if (item.selected) { target.setAttribute("aria-current", "true"); target.classList.add("selected"); }
        target.appendChild(document.createTextNode(" "));
        target.appendChild(element("span", count(item.count, false), { class: "count" }));
        li.appendChild(target);
        ul.appendChild(li);
      });
      section.appendChild(ul);
      facetsBox.appendChild(section);
    };
    const byCount = (counts) => Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const single = (list, value) => list.length === 1 && list[0] === value;
    if (Object.keys(page.countsByEntity || {}).length > 1 || state.entities.length) {
      group("entity", byCount(page.countsByEntity || {}).filter(([name, n]) => n > 0 || single(state.entities, name)).map(([name, n]) => {
        const next = copy(state); next.entities = single(state.entities, name) ? [] : [name];
        return { label: name, count: n, selected: single(state.entities, name), next };
      }));
    }
    if (page.countsBySource && (Object.keys(page.countsBySource).length > 1 || state.sources.length)) {
      group("source", byCount(page.countsBySource).map(([name, n]) => {
        const next = copy(state); next.sources = single(state.sources, name) ? [] : [name];
        return { label: name, count: n, selected: single(state.sources, name), next };
      }));
    }
    (page.facets || []).forEach((facet) => {
      group(facet.attribute, facet.buckets.map((bucket) => {
        const c = clause(facet.attribute, bucket.value);
        const selected = c !== null && state.filters.includes(c);
        let next = null;
        if (c !== null) { next = copy(state); next.filters = selected ? next.filters.filter((x) => x !== c) : next.filters.concat([c]); }
        return { label: shownValue(bucket.value), count: bucket.count, selected, next };
      }));
    });
  }
  function drawExplanation(page) {
    clear(explanation);
    if (page.explanation) {
      explanation.appendChild(element("p", page.explanation.message));
      const suggestions = page.explanation.suggestions || [];
      if (suggestions.length) {
        const p = element("p", "Did you mean ");
        suggestions.forEach((text, i) => {
          if (i) p.appendChild(document.createTextNode(", "));
          const next = copy(state); next.q = text;
          p.appendChild(link(text, next, (n) => { input.value = n.q; go(n); }));
        });
        p.appendChild(document.createTextNode("?"));
        explanation.appendChild(p);
      }
    }
    const corrected = (page.corrections || []).filter((c) => c.replacements && c.replacements.length);
    if (corrected.length) {
      explanation.appendChild(element("p", "Also matching: " + corrected.map((c) =>
        c.word + " → " + c.replacements.slice(0, 3).map((r) => r.text).join(", ")).join("; "), { class: "corrections" }));
    }
  }
  function hitElement(hit, first) {
    const li = element("li", null, { class: "hit", tabindex: first ? "0" : "-1" });
    // Each piece of document text in a <bdi>: a right-to-left override in it turns nothing around it.
    const h3 = element("h3"), title = element("bdi");
    if (hit.titleHighlight !== null && hit.titleHighlight !== undefined) marked(hit.titleHighlight, title);
    else title.textContent = hit.title !== null && hit.title !== undefined ? hit.title : shownValue(hit.id);
    h3.appendChild(title);
    li.appendChild(h3);
    if (hit.snippet && hit.snippet !== hit.titleHighlight) { // a snippet of the title alone says nothing more
      const snippet = element("p", null, { class: "snippet" }), text = element("bdi");
      marked(hit.snippet, text);
      snippet.appendChild(text);
      li.appendChild(snippet);
    }
    const meta = element("p", null, { class: "meta" });
    meta.appendChild(element("bdi", (hit.source ? hit.source + " · " : "") + hit.entity + " · " + shownValue(hit.id)));
    li.appendChild(meta);
    return li;
  }
  function drawMore(cursor) {
    nextCursor = cursor || null;
    if (cursor) {
      const p = new URLSearchParams(pageURL(state).slice(2));
      p.append("cursor", cursor);
      more.setAttribute("href", "/?" + p.toString());
      more.hidden = false;
    } else {
      more.removeAttribute("href");
      more.hidden = true;
    }
  }
  function draw(page) {
    showNotice("");
    const took = typeof page.tookMs === "number" ? " (" + Math.round(page.tookMs) + " ms)" : "";
    clear(status);
    status.appendChild(document.createTextNode(page.total === 0 ? "No results for “"
      : count(page.total, page.totalRelation === "gte") + (page.total === 1 && page.totalRelation !== "gte" ? " result" : " results") + " for “"));
    status.appendChild(element("bdi", state.q));
    status.appendChild(document.createTextNode("”" + took));
    drawChips();
    drawFacets(page);
    drawExplanation(page);
    clear(hitsList);
    page.hits.forEach((hit, i) => hitsList.appendChild(hitElement(hit, i === 0)));
    drawMore(page.cursor);
  }
  function drawEmpty() {
    showNotice("");
    status.textContent = "";
    drawChips();
    clear(facetsBox); clear(explanation); clear(hitsList);
    drawMore(null);
  }

  // ---- searching ----
  async function call(url) {
    const response = await fetch(url, { headers: headers(), signal: controller.signal, cache: "no-store" });
    let body = null;
    try { body = await response.json(); } catch (_) { body = null; }
    if (response.status === 401 && config.keyed) keyForm.hidden = false;
    if (!response.ok) throw new Error(body && body.message ? body.message : "the server answered " + response.status);
    return body;
  }
  async function search(push) {
    clearTimeout(timer);
    const s = copy(state);
    remember(s, push);
    document.title = s.q ? s.q + " – " + (config.title || "Search") : (config.title || "Search");
    const seq = ++issued;
    if (controller) controller.abort();
    controller = new AbortController();
    if (!s.q.trim()) { drawEmpty(); return; }
    root.setAttribute("aria-busy", "true");
    try {
      const page = await call(apiURL(s));
      if (seq !== issued) return; // a newer search was sent: its answer, not this one, is drawn
      draw(page);
    } catch (error) {
      if (seq !== issued || error.name === "AbortError") return;
      showNotice(error.message);
    } finally {
      if (seq === issued) root.removeAttribute("aria-busy");
      root.dataset.answered = String(++answered);
    }
  }
  async function loadMore() {
    if (!nextCursor) return;
    const seq = issued;
    try {
      const page = await call(apiURL(state, nextCursor));
      if (seq !== issued) return;
      const start = hitsList.children.length;
      page.hits.forEach((hit) => hitsList.appendChild(hitElement(hit, false)));
      drawMore(page.cursor);
      const first = hitsList.children[start];
      if (first) first.focus();
    } catch (error) {
      if (seq === issued && error.name !== "AbortError") showNotice(error.message);
    }
  }
  function go(next) {
    state = copy(next);
    closeSuggestions();
    search(true);
  }
  function typed() {
    state.q = input.value;
    clearTimeout(timer);
    timer = setTimeout(() => { search(false); suggest(); }, DEBOUNCE_MS); // one search and one suggestion per pause
  }

  // ---- suggestions (a combobox's listbox) ----
  function closeSuggestions() {
    suggestSeq++;
    clear(listbox); options = []; active = -1;
    listbox.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }
  async function suggest() {
    const text = input.value;
    const seq = ++suggestSeq;
    if (!suggestionsOn || !text.trim() || /\s$/.test(text)) { closeSuggestions(); return; }
    try {
      const p = new URLSearchParams(); p.append("q", text); p.append("limit", "6");
      const response = await fetch("/v1/suggest?" + p.toString(), { headers: headers(), cache: "no-store" });
      if (response.status === 403) { suggestionsOn = false; return; } // a tenant token: no suggestions
      if (!response.ok || seq !== suggestSeq || composing) return;
      const body = await response.json();
      if (seq !== suggestSeq || input.value !== text) return;
      clear(listbox); active = -1;
      options = (body.suggestions || []).filter((s) => s.text !== text);
      options.forEach((s, i) => {
        const li = element("li", s.text, { role: "option", id: "suggestion-" + i, "aria-selected": "false" });
        li.addEventListener("mousedown", (event) => { event.preventDefault(); choose(i); });
        listbox.appendChild(li);
      });
      listbox.hidden = options.length === 0;
      input.setAttribute("aria-expanded", options.length ? "true" : "false");
    } catch (_) { /* suggestions are optional */ }
  }
  function highlightOption(index) {
    active = index;
    Array.from(listbox.children).forEach((li, i) => li.setAttribute("aria-selected", i === index ? "true" : "false"));
    if (index >= 0) input.setAttribute("aria-activedescendant", "suggestion-" + index);
    else input.removeAttribute("aria-activedescendant");
  }
  function choose(index) {
    const option = options[index];
    if (!option) return;
    input.value = option.text;
    const next = copy(state); next.q = option.text;
    go(next);
  }

  // ---- keys ----
  function hits() { return Array.from(hitsList.querySelectorAll(".hit")); }
  function focusHit(index) {
    const list = hits();
    if (!list.length) return;
    const i = Math.max(0, Math.min(index, list.length - 1));
    list.forEach((li, j) => li.setAttribute("tabindex", j === i ? "0" : "-1"));
    list[i].focus();
  }
  input.addEventListener("keydown", (event) => {
    if (event.isComposing || composing) return;
    const open = !listbox.hidden && options.length > 0;
    if (event.key === "ArrowDown") {
      event.preventDefault();
      if (open && active < options.length - 1) highlightOption(active + 1); else { closeSuggestions(); focusHit(0); }
    } else if (event.key === "ArrowUp" && open) {
      event.preventDefault();
      highlightOption(active - 1);
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (open && active >= 0) choose(active);
      else { state.q = input.value; closeSuggestions(); search(true); }
    } else if (event.key === "Escape") {
      if (open) { event.preventDefault(); closeSuggestions(); }
    }
  });
  hitsList.addEventListener("keydown", (event) => {
    const list = hits(), i = list.indexOf(document.activeElement);
    if (i < 0) return;
    if (event.key === "ArrowDown" || event.key === "j") { event.preventDefault(); focusHit(i + 1); }
    else if (event.key === "ArrowUp" || event.key === "k") { event.preventDefault(); if (i === 0) input.focus(); else focusHit(i - 1); }
    else if (event.key === "Escape") { event.preventDefault(); input.focus(); }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "/" && document.activeElement !== input && !(document.activeElement instanceof HTMLInputElement)) {
      event.preventDefault();
      input.focus(); input.select();
    }
  });
  input.addEventListener("input", (event) => {
    if (composing || event.isComposing) return;
    typed();
  });
  // An input method (Chinese, Japanese) composes a word in several steps: search once it is done.
  input.addEventListener("compositionstart", () => { composing = true; clearTimeout(timer); closeSuggestions(); });
  input.addEventListener("compositionend", () => { composing = false; typed(); });
  input.addEventListener("blur", () => setTimeout(closeSuggestions, 100));
  form.addEventListener("submit", (event) => { event.preventDefault(); state.q = input.value; closeSuggestions(); search(true); });
  more.addEventListener("click", (event) => { if (nextCursor) { event.preventDefault(); loadMore(); } });
  window.addEventListener("popstate", () => {
    state = read(location.search);
    input.value = state.q;
    closeSuggestions();
    search(false);
  });
  keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem("searchlight.key", keyInput.value.trim());
    keyInput.value = "";
    keyForm.hidden = true;
    suggestionsOn = true;
    search(false);
  });
  if (config.keyed && !sessionStorage.getItem("searchlight.key")) keyForm.hidden = false;

  // The server drew the results of the URL's search (without a key's header when keyed): draw
  // them again through the API, whose answers carry the cursors the script pages with.
  if (state.q) search(false);
  root.dataset.answered = root.dataset.answered || "0";
  root.dataset.ready = "true";
})();
"""#

    static let styleSheet = #"""
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #57606a; --bg: #ffffff; --line: #d0d7de; --accent: #0b5cad; --mark: #fff3a3; --chip: #eef2f6; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9aa5b1; --bg: #0f1419; --line: #30363d; --accent: #6cb6ff; --mark: #6b5b00; --chip: #1f2630; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", sans-serif; color: var(--fg); background: var(--bg); }
#searchlight { max-width: 64rem; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
.skip { position: absolute; left: -999px; top: 0; }
.skip:focus { left: 1rem; background: var(--bg); padding: .25rem .5rem; z-index: 10; }
h1 { font-size: 1.25rem; margin: .5rem 0 1rem; }
form[role=search] { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
form[role=search] label { flex-basis: 100%; font-weight: 600; }
.combo { position: relative; flex: 1 1 20rem; }
input[type=search], input[type=password] { width: 100%; font: inherit; padding: .55rem .75rem; border: 1px solid var(--line); border-radius: .4rem; background: var(--bg); color: var(--fg); }
button { font: inherit; padding: .55rem 1rem; border: 1px solid var(--line); border-radius: .4rem; background: var(--chip); color: var(--fg); cursor: pointer; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
#suggestions { position: absolute; left: 0; right: 0; top: 100%; margin: .15rem 0 0; padding: .25rem 0; list-style: none; background: var(--bg); border: 1px solid var(--line); border-radius: .4rem; z-index: 5; box-shadow: 0 4px 14px rgba(0,0,0,.12); }
#suggestions li { padding: .3rem .75rem; cursor: pointer; }
#suggestions li[aria-selected=true], #suggestions li:hover { background: var(--chip); }
.help { color: var(--muted); font-size: .85rem; margin: .4rem 0 0; }
.key-form { display: flex; gap: .5rem; align-items: center; margin-top: .75rem; }
.key-form[hidden] { display: none; }
.notice { border-left: 4px solid #c62828; padding: .4rem .75rem; background: var(--chip); }
.status { color: var(--muted); min-height: 1.5em; margin: 1rem 0 .5rem; }
.chips { list-style: none; padding: 0; margin: 0 0 .5rem; display: flex; flex-wrap: wrap; gap: .4rem; }
.chips li { background: var(--chip); border-radius: 1rem; padding: .1rem .7rem; font-size: .9rem; }
.chips a { text-decoration: none; font-weight: 700; padding: 0 .2rem; }
.layout { display: grid; grid-template-columns: 14rem 1fr; gap: 1.5rem; }
@media (max-width: 44rem) { .layout { grid-template-columns: 1fr; } }
.facets h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: .5rem 0 .25rem; }
.facets ul { list-style: none; margin: 0 0 1rem; padding: 0; }
.facets li a, .facets li > span { display: flex; justify-content: space-between; gap: .5rem; padding: .15rem .4rem; border-radius: .3rem; text-decoration: none; color: var(--fg); overflow-wrap: anywhere; }
.facets li a:hover { background: var(--chip); }
.facets a.selected { background: var(--chip); font-weight: 600; }
.facets .count { color: var(--muted); font-variant-numeric: tabular-nums; }
a { color: var(--accent); }
.explanation p { margin: .25rem 0 .75rem; }
.corrections { color: var(--muted); font-size: .9rem; }
.hits { list-style: none; margin: 0; padding: 0; }
.hit { padding: .6rem .5rem; border-bottom: 1px solid var(--line); border-radius: .3rem; }
.hit:focus { background: var(--chip); }
.hit h3 { font-size: 1.05rem; margin: 0 0 .15rem; overflow-wrap: anywhere; }
.hit .snippet { margin: 0; overflow-wrap: anywhere; }
.hit .meta { margin: .2rem 0 0; color: var(--muted); font-size: .8rem; overflow-wrap: anywhere; }
mark { background: var(--mark); color: inherit; border-radius: .15rem; padding: 0 .05rem; }
.more { display: inline-block; margin-top: 1rem; }
.more[hidden] { display: none; }
#searchlight[aria-busy=true] .hits { opacity: .6; }
"""#
}
