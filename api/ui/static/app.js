// tsd's web UI: Graph, Series and Status views in one page, chosen by the
// URL fragment (#graph?..., #series?..., #status) so that a link shows
// the same thing again. Plain JavaScript, no build step; charts by uPlot.
// It only reads: GET everywhere, and POST for /api/query, which reads.
'use strict';

(function () {
  // ---------- small helpers ----------

  // el builds an element: attrs may hold class, text, data-*, on<event>,
  // and any attribute; kids are nodes or strings. No HTML is parsed, so
  // names from the store can never become markup.
  function el(tag, attrs) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'value') e.value = v;
      else if (k === 'checked') e.checked = !!v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (let i = 2; i < arguments.length; i++) {
      const kid = arguments[i];
      if (kid === null || kid === undefined || kid === false) continue;
      if (Array.isArray(kid)) kid.forEach((k) => k && e.append(k));
      else e.append(kid);
    }
    return e;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  // errorText reads an OpenTSDB ({"error":{"message","details"}}) or a
  // Prometheus ({"error":"..."}) error answer.
  function errorText(status, body, text) {
    if (body && typeof body.error === 'object' && body.error) {
      return status + ' ' + (body.error.message || '') + (body.error.details ? ': ' + body.error.details : '');
    }
    if (body && typeof body.error === 'string') return status + ' ' + body.error;
    return status + ' ' + String(text || '').slice(0, 300);
  }

  // api fetches a same-origin URL as JSON. The browser adds the
  // credentials the user gave for this site, if any.
  async function api(url, opts) {
    const o = Object.assign({ headers: { Accept: 'application/json' }, credentials: 'same-origin' }, opts || {});
    const r = await fetch(url, o);
    const text = await r.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch (e) { /* not JSON */ }
    if (!r.ok) throw new Error(errorText(r.status, body, text));
    if (body === null && text) throw new Error('not JSON: ' + text.slice(0, 200));
    return body;
  }

  function postJSON(url, obj) {
    return api(url, { method: 'POST', headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: JSON.stringify(obj) });
  }

  function qs(params) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      if (Array.isArray(v)) v.forEach((x) => p.append(k, x));
      else if (v !== undefined && v !== null && v !== '') p.set(k, v);
    }
    return p.toString();
  }

  function fmtNum(v) {
    if (v === null || v === undefined) return '—';
    if (typeof v !== 'number') return String(v);
    return String(v);
  }

  function fmtBytes(n) {
    n = Number(n);
    if (!isFinite(n)) return '—';
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + ' ' + u[i];
  }

  function fmtDuration(s) {
    s = Math.floor(Number(s));
    if (!isFinite(s)) return '—';
    const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60), sec = s % 60;
    return (d ? d + 'd ' : '') + (d || h ? h + 'h ' : '') + (d || h || m ? m + 'm ' : '') + sec + 's';
  }

  // fmtTime shows a Unix time in ms as UTC ISO text.
  function fmtTime(ms) {
    if (ms === null || ms === undefined || !isFinite(ms)) return '—';
    return new Date(ms).toISOString().replace('T', ' ').replace('.000Z', 'Z');
  }

  function seriesLabel(metric, tags) {
    const keys = Object.keys(tags || {}).sort();
    return metric + '{' + keys.map((k) => k + '=' + tags[k]).join(',') + '}';
  }

  function errorBox(err) { return el('div', { class: 'error', role: 'alert', text: String(err && err.message || err) }); }

  // ---------- time ----------

  const unitSeconds = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, n: 2592000, y: 31536000 };

  // parseTime reads OpenTSDB's forms: "" (now), "<n><unit>-ago", Unix
  // seconds or milliseconds, "YYYY/MM/DD[-HH:MM[:SS]]" (UTC here) or
  // anything Date.parse reads. It returns Unix seconds, or NaN.
  function parseTime(s, nowSec) {
    s = String(s || '').trim();
    if (s === '' || s === 'now') return nowSec;
    let m = /^(\d+)(ms|s|m|h|d|w|n|y)-ago$/.exec(s);
    if (m) return nowSec - Number(m[1]) * unitSeconds[m[2]];
    if (/^\d{1,10}$/.test(s)) return Number(s);
    if (/^\d{13}$/.test(s)) return Number(s) / 1000;
    m = /^(\d{4})\/(\d{2})\/(\d{2})(?:[- ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(s);
    if (m) return Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] || 0), +(m[5] || 0), +(m[6] || 0)) / 1000;
    const t = Date.parse(s);
    return isNaN(t) ? NaN : t / 1000;
  }

  // ---------- suggestions ----------

  // attachSuggest shows, under input, the words source(input) resolves
  // to while the user types; a click, Enter or Tab picks the highlighted
  // one (pick(word) may rewrite the input's text), Escape hides them.
  // With chain, a pick asks for suggestions again at once (a PromQL label
  // name is followed by its values).
  function attachSuggest(input, source, pick, chain) {
    if (!input.parentNode) throw new Error('attachSuggest: the input must be in its place first');
    const box = el('ul', { class: 'suggest', role: 'listbox', hidden: true });
    input.after(box);
    input.setAttribute('autocomplete', 'off');
    let items = [], active = -1, seq = 0, timer = null;
    pick = pick || ((w) => { input.value = w; });

    function hide() { box.hidden = true; items = []; active = -1; }
    function show(words) {
      clear(box);
      items = words;
      active = words.length ? 0 : -1;
      words.forEach((w, i) => box.append(el('li', {
        role: 'option', class: i === active ? 'active' : '', text: w, 'data-word': w,
        onmousedown: (ev) => { ev.preventDefault(); choose(i); },
      })));
      box.hidden = words.length === 0;
    }
    function highlight() {
      Array.from(box.children).forEach((li, i) => li.classList.toggle('active', i === active));
    }
    function choose(i) {
      const w = items[i];
      hide();
      if (w !== undefined) {
        pick(w);
        if (chain) update();
      }
    }
    async function update() {
      const my = ++seq;
      const asked = input.value;
      try {
        const words = await source(input);
        if (my === seq && document.activeElement === input) {
          box.dataset.for = asked; // the text these words complete
          show(words.slice(0, 50));
        }
      } catch (e) {
        if (my === seq) hide();
      }
    }
    // Typing makes the shown words stale: they go until the new ones come,
    // so Enter never picks a word for the old text.
    input.addEventListener('input', () => { hide(); clearTimeout(timer); timer = setTimeout(update, 120); });
    input.addEventListener('focus', () => { if (input.value === '' || input.dataset.suggestOnFocus) update(); });
    input.addEventListener('blur', () => setTimeout(hide, 100));
    input.addEventListener('keydown', (ev) => {
      if (box.hidden || !items.length) return;
      if (ev.key === 'ArrowDown') { active = (active + 1) % items.length; highlight(); ev.preventDefault(); }
      else if (ev.key === 'ArrowUp') { active = (active - 1 + items.length) % items.length; highlight(); ev.preventDefault(); }
      else if (ev.key === 'Enter' || ev.key === 'Tab') { if (active >= 0) { choose(active); ev.preventDefault(); } }
      else if (ev.key === 'Escape') hide();
    });
    return box;
  }

  // suggestFrom asks /api/suggest for names of a type starting with the
  // input's text.
  function suggestFrom(type) {
    return (input) => api('/api/suggest?' + qs({ type: type, q: input.value, max: 25 }));
  }

  // ---------- routing ----------

  function route() {
    const h = location.hash.replace(/^#/, '');
    const i = h.indexOf('?');
    const page = (i < 0 ? h : h.slice(0, i)) || 'graph';
    return { page: page, params: new URLSearchParams(i < 0 ? '' : h.slice(i + 1)) };
  }

  function hashOf(page, params) {
    const s = params.toString();
    return '#' + page + (s ? '?' + s : '');
  }

  let stopPage = null; // the current view's cleanup (timers)

  function render() {
    if (stopPage) { stopPage(); stopPage = null; }
    const r = route();
    ['graph', 'series', 'status'].forEach((p) => {
      const a = document.getElementById('nav-' + p);
      a.classList.toggle('current', p === r.page);
    });
    const main = document.getElementById('main');
    clear(main);
    const view = { graph: graphPage, series: seriesPage, status: statusPage }[r.page] || graphPage;
    document.body.dataset.page = r.page;
    stopPage = view(main, r.params) || null;
  }

  // ---------- Graph ----------

  const defaultAggs = ['avg', 'count', 'dev', 'first', 'last', 'max', 'min', 'none', 'sum', 'zimsum'];
  let aggregators = null; // from /api/aggregators, once
  let filterTypes = null; // from /api/config/filters, once

  async function loadAggregators() {
    if (!aggregators) {
      try { aggregators = await api('/api/aggregators'); } catch (e) { aggregators = defaultAggs; }
    }
    return aggregators;
  }

  async function loadFilterTypes() {
    if (!filterTypes) {
      try { filterTypes = Object.keys(await api('/api/config/filters')).sort(); } catch (e) { filterTypes = ['literal_or', 'wildcard', 'regexp']; }
    }
    return filterTypes;
  }

  function select(id, options, value) {
    const s = el('select', { id: id });
    options.forEach((o) => {
      const [v, label] = Array.isArray(o) ? o : [o, o];
      s.append(el('option', { value: v, text: label }));
    });
    if (value !== null && value !== undefined) s.value = value;
    return s;
  }

  function field(label, control, hint) {
    return el('label', { class: 'field' }, el('span', { text: label }), control, hint ? el('small', { class: 'dim', text: hint }) : null);
  }

  function graphPage(main, params) {
    const mode = params.get('mode') === 'promql' ? 'promql' : 'tsdb';
    const state = {
      start: params.get('start') || '1h-ago',
      end: params.get('end') || '',
    };

    const start = el('input', { id: 'g-start', value: state.start, size: 16 });
    const end = el('input', { id: 'g-end', value: state.end, placeholder: 'now', size: 16 });
    const run = el('button', { id: 'g-run', type: 'submit', class: 'primary', text: 'Run' });
    const tabTSDB = el('button', { type: 'button', id: 'tab-tsdb', class: 'tab' + (mode === 'tsdb' ? ' current' : ''), text: 'OpenTSDB' });
    const tabProm = el('button', { type: 'button', id: 'tab-promql', class: 'tab' + (mode === 'promql' ? ' current' : ''), text: 'PromQL' });
    const builder = el('div', { id: 'tsdb-builder', hidden: mode !== 'tsdb' });
    const promEd = el('div', { id: 'promql-editor', hidden: mode !== 'promql' });
    const status = el('div', { id: 'g-status', class: 'dim' });
    const viewChart = el('button', { type: 'button', id: 'view-chart', class: 'tab current', text: 'Chart' });
    const viewTable = el('button', { type: 'button', id: 'view-table', class: 'tab', text: 'Table' });
    const chartBox = el('div', { id: 'chart', 'data-state': 'empty' });
    const tableBox = el('div', { id: 'table', hidden: true });
    const resetZoom = el('button', { type: 'button', id: 'g-reset', text: 'Reset zoom', disabled: true });

    // --- the OpenTSDB builder ---
    const metric = el('input', { id: 'q-metric', value: params.get('m') || '', placeholder: 'metric name', size: 30 });
    const agg = select('q-agg', defaultAggs, params.get('agg') || 'sum');
    const dsInterval = el('input', { id: 'q-ds', value: params.get('ds') || '', placeholder: 'e.g. 1m, empty: none', size: 10 });
    const dsAgg = select('q-dsagg', defaultAggs.filter((a) => a !== 'none'), params.get('dsagg') || 'avg');
    const fill = select('q-fill', [['none', 'none'], ['nan', 'NaN'], ['null', 'null'], ['zero', 'zero']], params.get('fill') || 'none');
    const rate = el('input', { type: 'checkbox', id: 'q-rate', checked: params.get('rate') === '1' });
    const counter = el('input', { type: 'checkbox', id: 'q-counter', checked: params.get('counter') === '1' });
    const filterRows = el('div', { id: 'q-filters' });
    const addFilter = el('button', { type: 'button', id: 'q-add-filter', text: '+ filter' });

    loadAggregators().then((list) => {
      for (const [s, keep] of [[agg, params.get('agg') || 'sum'], [dsAgg, params.get('dsagg') || 'avg']]) {
        clear(s);
        list.filter((a) => s !== dsAgg || a !== 'none').forEach((a) => s.append(el('option', { value: a, text: a })));
        s.value = keep;
      }
    });

    function filterRow(f) {
      const tagk = el('input', { class: 'f-tagk', value: f.tagk || '', placeholder: 'tag key', size: 14 });
      const type = select('', ['literal_or', 'wildcard', 'regexp', 'not_literal_or', 'iliteral_or', 'iwildcard', 'not_iliteral_or'], f.type || 'literal_or');
      type.removeAttribute('id');
      type.className = 'f-type';
      loadFilterTypes().then((ts) => { const keep = type.value; clear(type); ts.forEach((t) => type.append(el('option', { value: t, text: t }))); type.value = keep; });
      const value = el('input', { class: 'f-value', value: f.filter || '', placeholder: 'value, a|b, web*', size: 18 });
      const groupBy = el('input', { type: 'checkbox', class: 'f-group', checked: f.groupBy !== false });
      const remove = el('button', { type: 'button', class: 'f-remove', text: '×', title: 'remove this filter' });
      const row = el('div', { class: 'filter-row' },
        el('span', { class: 'ac' }, tagk), type, el('span', { class: 'ac' }, value),
        el('label', { class: 'inline' }, groupBy, ' group by'), remove);
      attachSuggest(tagk, suggestFrom('tagk'));
      // Tag values: the last alternative of a|b is completed.
      attachSuggest(value, (input) => {
        const parts = input.value.split('|');
        return api('/api/suggest?' + qs({ type: 'tagv', q: parts[parts.length - 1], max: 25 }));
      }, (w) => {
        const parts = value.value.split('|');
        parts[parts.length - 1] = w;
        value.value = parts.join('|');
      });
      remove.addEventListener('click', () => row.remove());
      filterRows.append(row);
    }
    params.getAll('f').forEach((s) => {
      // f=<tagk>:<type>:<groupBy 0|1>:<filter>
      const m = /^([^:]*):([^:]*):([01]):(.*)$/.exec(s);
      if (m) filterRow({ tagk: m[1], type: m[2], groupBy: m[3] === '1', filter: m[4] });
    });
    addFilter.addEventListener('click', () => filterRow({}));

    builder.append(
      el('div', { class: 'row' },
        field('Metric', el('span', { class: 'ac' }, metric)),
        field('Aggregator', agg),
        field('Downsample', el('span', {}, dsInterval, dsAgg)),
        field('Fill', fill),
        el('label', { class: 'inline' }, rate, ' rate'),
        el('label', { class: 'inline' }, counter, ' counter')),
      el('div', { class: 'row' }, el('span', { class: 'dim', text: 'Filters' }), filterRows, addFilter));
    attachSuggest(metric, suggestFrom('metrics')); // once metric has its place

    // --- the PromQL editor ---
    const promQ = el('textarea', { id: 'promql', rows: 3, cols: 70, spellcheck: 'false', placeholder: 'rate(http_requests_total[5m])' });
    promQ.value = params.get('q') || '';
    const step = el('input', { id: 'p-step', value: params.get('step') || '', placeholder: 'auto', size: 8 });
    promEd.append(el('div', { class: 'row' }, el('span', { class: 'ac wide' }, promQ), field('Step (s)', step)),
      el('small', { class: 'dim', text: 'Metric and label names complete as you type (Tab or Enter picks one). Ctrl+Enter runs.' }));
    attachPromComplete(promQ);
    promQ.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); submit(); } });

    const form = el('form', { id: 'g-form' },
      el('div', { class: 'row' }, tabTSDB, tabProm,
        field('From', start), field('To', end), run),
      builder, promEd);
    form.addEventListener('submit', (ev) => { ev.preventDefault(); submit(); });
    tabTSDB.addEventListener('click', () => switchMode('tsdb'));
    tabProm.addEventListener('click', () => switchMode('promql'));

    let current = mode;
    function switchMode(m) {
      current = m;
      tabTSDB.classList.toggle('current', m === 'tsdb');
      tabProm.classList.toggle('current', m === 'promql');
      builder.hidden = m !== 'tsdb';
      promEd.hidden = m !== 'promql';
    }

    // toParams writes the form into URL parameters.
    function toParams() {
      const p = new URLSearchParams();
      p.set('mode', current);
      p.set('start', start.value.trim() || '1h-ago');
      if (end.value.trim()) p.set('end', end.value.trim());
      if (current === 'tsdb') {
        p.set('m', metric.value.trim());
        p.set('agg', agg.value);
        if (dsInterval.value.trim()) { p.set('ds', dsInterval.value.trim()); p.set('dsagg', dsAgg.value); p.set('fill', fill.value); }
        if (rate.checked) p.set('rate', '1');
        if (counter.checked) p.set('counter', '1');
        filterRows.querySelectorAll('.filter-row').forEach((row) => {
          const k = row.querySelector('.f-tagk').value.trim(), v = row.querySelector('.f-value').value.trim();
          if (k && v) p.append('f', k + ':' + row.querySelector('.f-type').value + ':' + (row.querySelector('.f-group').checked ? '1' : '0') + ':' + v);
        });
      } else {
        p.set('q', promQ.value.trim());
        if (step.value.trim()) p.set('step', step.value.trim());
      }
      return p;
    }

    function submit() {
      const h = hashOf('graph', toParams());
      if (location.hash === h) execute(); // same query again: refresh
      else location.hash = h; // render() runs it
    }

    [viewChart, viewTable].forEach((b) => b.addEventListener('click', () => {
      const table = b === viewTable;
      viewChart.classList.toggle('current', !table);
      viewTable.classList.toggle('current', table);
      chartBox.hidden = table;
      tableBox.hidden = !table;
      resetZoom.hidden = table;
    }));

    main.append(el('section', { class: 'card' }, form),
      el('section', { class: 'card' },
        el('div', { class: 'row' }, viewChart, viewTable, resetZoom, status),
        chartBox, tableBox));

    let plot = null;
    resetZoom.addEventListener('click', () => {
      if (plot) plot.setScale('x', { min: plot.data[0][0], max: plot.data[0][plot.data[0].length - 1] });
    });
    const onResize = () => { if (plot) plot.setSize({ width: chartWidth(), height: 360 }); };
    window.addEventListener('resize', onResize);
    function chartWidth() { return Math.max(300, chartBox.clientWidth || main.clientWidth - 40); }

    async function execute() {
      const nowSec = Math.floor(Date.now() / 1000);
      status.textContent = 'Running…';
      chartBox.dataset.state = 'loading';
      let series;
      const t0 = performance.now();
      try {
        series = current === 'tsdb' ? await runTSDB() : await runPromQL(nowSec);
      } catch (e) {
        status.textContent = '';
        chartBox.dataset.state = 'error';
        if (plot) { plot.destroy(); plot = null; }
        clear(chartBox); clear(tableBox);
        chartBox.append(errorBox(e));
        window.tsdChart = { error: String(e.message || e) };
        return;
      }
      draw(series);
      status.textContent = series.length + ' series, ' + series.reduce((n, s) => n + s.points.length, 0) + ' points in ' + Math.round(performance.now() - t0) + ' ms';
    }

    async function runTSDB() {
      const m = metric.value.trim();
      if (!m) throw new Error('Pick a metric');
      const q = { aggregator: agg.value, metric: m };
      if (dsInterval.value.trim()) q.downsample = dsInterval.value.trim() + '-' + dsAgg.value + (fill.value !== 'none' ? '-' + fill.value : '');
      if (rate.checked) { q.rate = true; if (counter.checked) q.rateOptions = { counter: true }; }
      const filters = [];
      filterRows.querySelectorAll('.filter-row').forEach((row) => {
        const k = row.querySelector('.f-tagk').value.trim(), v = row.querySelector('.f-value').value.trim();
        if (k && v) filters.push({ type: row.querySelector('.f-type').value, tagk: k, filter: v, groupBy: row.querySelector('.f-group').checked });
      });
      if (filters.length) q.filters = filters;
      const body = { start: start.value.trim() || '1h-ago', queries: [q], msResolution: true };
      if (end.value.trim()) body.end = end.value.trim();
      const res = await postJSON('/api/query', body);
      return res.map((r) => ({
        label: seriesLabel(r.metric, r.tags),
        points: Object.entries(r.dps || {}).map(([t, v]) => [Number(t) / 1000, v === null ? null : Number(v)]).sort((a, b) => a[0] - b[0]),
      }));
    }

    async function runPromQL(nowSec) {
      const q = promQ.value.trim();
      if (!q) throw new Error('Write a PromQL query');
      const s = parseTime(start.value || '1h-ago', nowSec), e = parseTime(end.value, nowSec);
      if (isNaN(s) || isNaN(e)) throw new Error('Cannot read the time range');
      let st = Number(step.value);
      if (!(st > 0)) st = Math.max(1, Math.round((e - s) / 300));
      const res = await api('/api/v1/query_range?' + qs({ query: q, start: s, end: e, step: st }));
      const result = (res.data && res.data.result) || [];
      return result.map((r) => {
        const m = Object.assign({}, r.metric);
        const name = m.__name__ || '';
        delete m.__name__;
        return { label: seriesLabel(name, m), points: (r.values || []).map(([t, v]) => [Number(t), Number(v)]) };
      });
    }

    function draw(series) {
      if (plot) { plot.destroy(); plot = null; }
      clear(chartBox); clear(tableBox);
      // One x axis for all: the union of every series' times.
      const times = Array.from(new Set(series.flatMap((s) => s.points.map((p) => p[0])))).sort((a, b) => a - b);
      const index = new Map(times.map((t, i) => [t, i]));
      const ys = series.map((s) => {
        const col = new Array(times.length).fill(null);
        s.points.forEach(([t, v]) => { col[index.get(t)] = Number.isFinite(v) ? v : null; });
        return col;
      });
      // What the chart shows, for tests and the curious: labels, points
      // per series, and the aligned data.
      window.tsdChart = { labels: series.map((s) => s.label), points: series.map((s) => s.points.length), x: times, y: ys };
      chartBox.dataset.series = String(series.length);
      chartBox.dataset.points = String(series.reduce((n, s) => n + s.points.length, 0));
      drawTable(series, times, ys);
      if (!series.length) {
        chartBox.dataset.state = 'empty';
        chartBox.append(el('p', { class: 'dim', text: 'No data in this range.' }));
        resetZoom.disabled = true;
        return;
      }
      const opts = {
        width: chartWidth(),
        height: 360,
        scales: { x: { time: true } },
        // The axis in UTC, as the legend and the table.
        tzDate: (ts) => window.uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        cursor: { drag: { x: true, y: false } },
        legend: { live: true },
        series: [{ label: 'time', value: (u, v) => v === null || v === undefined ? '—' : fmtTime(v * 1000) }].concat(series.map((s, i) => ({
          label: s.label,
          stroke: color(i),
          width: 1.5,
          spanGaps: false,
          points: { show: times.length <= 120 },
          value: (u, v) => fmtNum(v),
        }))),
        hooks: { setScale: [(u, key) => { if (key === 'x') resetZoom.disabled = u.scales.x.min <= times[0] && u.scales.x.max >= times[times.length - 1]; }] },
      };
      plot = new window.uPlot(opts, [times].concat(ys), chartBox);
      window.tsdChart.plot = plot;
      chartBox.dataset.state = 'drawn';
    }

    function drawTable(series, times, ys) {
      const max = 5000;
      const head = el('tr', {}, el('th', { text: 'time (UTC)' }), series.map((s) => el('th', { text: s.label })));
      const body = el('tbody');
      times.slice(0, max).forEach((t, i) => body.append(el('tr', {}, el('td', { text: fmtTime(t * 1000) }), ys.map((col) => el('td', { class: 'num', text: fmtNum(col[i]) })))));
      tableBox.append(el('table', { class: 'data', id: 'data-table' }, el('thead', {}, head), body));
      if (times.length > max) tableBox.append(el('p', { class: 'dim', text: 'First ' + max + ' of ' + times.length + ' rows.' }));
    }

    if ((mode === 'tsdb' && params.get('m')) || (mode === 'promql' && params.get('q'))) execute();
    return () => window.removeEventListener('resize', onResize);
  }

  const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  function color(i) { return palette[i % palette.length]; }

  // ---------- PromQL completion ----------

  const promFunctions = ['abs', 'absent', 'absent_over_time', 'avg', 'avg_over_time', 'ceil', 'changes', 'clamp', 'clamp_max', 'clamp_min',
    'count', 'count_over_time', 'count_values', 'delta', 'deriv', 'exp', 'floor', 'histogram_quantile', 'holt_winters', 'idelta',
    'increase', 'irate', 'label_join', 'label_replace', 'last_over_time', 'ln', 'log10', 'log2', 'max', 'max_over_time', 'min',
    'min_over_time', 'predict_linear', 'quantile', 'quantile_over_time', 'rate', 'resets', 'round', 'scalar', 'sort', 'sort_desc',
    'sqrt', 'stddev', 'stddev_over_time', 'stdvar', 'sum', 'sum_over_time', 'time', 'timestamp', 'topk', 'bottomk', 'vector'];

  let metricNames = null; // /api/v1/label/__name__/values, cached for the page's life
  async function promMetricNames() {
    if (!metricNames) metricNames = (await api('/api/v1/label/__name__/values')).data || [];
    return metricNames;
  }

  // promContext finds what the text before the cursor is completing: a
  // label value (after name=" inside braces), a label name (inside
  // braces), or a metric or function name. metric is the selector's
  // metric, as a match[] selector, when one is written.
  function promContext(text) {
    const open = text.lastIndexOf('{'), close = text.lastIndexOf('}');
    if (open > close) {
      const inside = text.slice(open + 1);
      const ident = (/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*$/.exec(text.slice(0, open)) || [])[1];
      const quoted = (/^\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)/.exec(inside) || [])[1];
      const name = ident || (quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : '');
      const metric = name ? '{__name__="' + name.replace(/[\\"]/g, '\\$&') + '"}' : '';
      let m = /([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)$/.exec(inside);
      if (m) return { kind: 'value', label: m[1], prefix: m[3], metric: metric };
      m = /(?:^|,)\s*([a-zA-Z_][a-zA-Z0-9_]*)?$/.exec(inside);
      if (m) return { kind: 'label', prefix: m[1] || '', metric: metric };
      return null;
    }
    // Names may hold dots (OpenTSDB's); they are written {"a.b"} then.
    const m = /([a-zA-Z_:][a-zA-Z0-9_:.]*)$/.exec(text);
    if (m) return { kind: 'metric', prefix: m[1] };
    return null;
  }

  function attachPromComplete(ta) {
    let ctx = null;
    attachSuggest(ta, async () => {
      const before = ta.value.slice(0, ta.selectionStart);
      ctx = promContext(before);
      if (!ctx) return [];
      let words;
      const match = ctx.metric ? { 'match[]': ctx.metric } : {};
      if (ctx.kind === 'metric') {
        const names = await promMetricNames();
        words = names.concat(promFunctions.filter((f) => !names.includes(f)));
      } else if (ctx.kind === 'label') {
        words = ((await api('/api/v1/labels?' + qs(match))).data || []).filter((n) => n !== '__name__');
      } else {
        words = (await api('/api/v1/label/' + encodeURIComponent(ctx.label) + '/values?' + qs(match))).data || [];
      }
      return words.filter((w) => w.startsWith(ctx.prefix) && w !== ctx.prefix);
    }, (w) => {
      const pos = ta.selectionStart, before = ta.value.slice(0, pos);
      const prefixLen = ctx ? ctx.prefix.length : 0;
      let insert = w;
      if (ctx && ctx.kind === 'metric' && !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(w)) insert = '{"' + w.replace(/[\\"]/g, '\\$&') + '"}';
      if (ctx && ctx.kind === 'label') insert = w + '="';
      if (ctx && ctx.kind === 'value') insert = w.replace(/[\\"]/g, '\\$&') + '"';
      ta.value = before.slice(0, before.length - prefixLen) + insert + ta.value.slice(pos);
      // Inside a {"name"} just written, the cursor goes before the brace
      // so that labels can follow.
      let at = pos - prefixLen + insert.length;
      if (insert.endsWith('"}') && ctx.kind === 'metric') at -= 1;
      ta.setSelectionRange(at, at);
    }, true);
  }

  // ---------- Series ----------

  function seriesPage(main, params) {
    const metric = params.get('metric');
    const tsuid = params.get('tsuid');
    if (metric && tsuid) seriesDetail(main, metric, tsuid);
    else if (metric) metricDetail(main, metric);
    else metricList(main);
  }

  // seriesOf asks the series index for a metric's series: how many, and
  // the first limit of them with their tags.
  function seriesOf(metric, limit) {
    return api('/api/search/tsmeta_summary?' + qs({ query: metric, limit: limit }));
  }

  // lookupCount returns how many series the index holds for a metric.
  async function lookupCount(metric) {
    return (await seriesOf(metric, 1)).totalResults;
  }

  function metricList(main) {
    const filter = el('input', { id: 's-filter', placeholder: 'filter metrics', size: 30 });
    const note = el('p', { class: 'dim', id: 's-note' });
    const body = el('tbody', { id: 's-metrics' });
    main.append(el('section', { class: 'card' },
      el('h2', { text: 'Metrics' }), el('div', { class: 'row' }, filter, note),
      el('table', { class: 'data' }, el('thead', {}, el('tr', {}, el('th', { text: 'metric' }), el('th', { class: 'num', text: 'series' }))), body)));
    const limit = 10000;
    api('/api/suggest?' + qs({ type: 'metrics', q: '', max: limit })).then(async (names) => {
      note.textContent = names.length + (names.length >= limit ? '+' : '') + ' metrics';
      const rows = names.map((n) => {
        const count = el('td', { class: 'num', text: '…' });
        const row = el('tr', { 'data-metric': n }, el('td', {}, el('a', { href: hashOf('series', new URLSearchParams({ metric: n })), text: n })), count);
        body.append(row);
        return { n, row, count };
      });
      filter.addEventListener('input', () => rows.forEach((r) => { r.row.hidden = !r.n.includes(filter.value); }));
      // Counts a few at a time, so a store with many metrics is not
      // asked everything at once.
      let next = 0;
      async function worker() {
        while (next < rows.length && document.body.contains(body)) {
          const r = rows[next++];
          try { r.count.textContent = String(await lookupCount(r.n)); } catch (e) { r.count.textContent = '?'; r.count.title = e.message; }
          r.row.dataset.series = r.count.textContent;
        }
      }
      await Promise.all([worker(), worker(), worker(), worker()]);
      body.dataset.loaded = 'true';
    }).catch((e) => main.append(errorBox(e)));
  }

  function metricDetail(main, metric) {
    const card = el('section', { class: 'card' },
      el('p', {}, el('a', { href: '#series', text: '← all metrics' })),
      el('h2', {}, 'Metric ', el('code', { text: metric })));
    main.append(card);
    const limit = 1000;
    seriesOf(metric, limit).then((r) => {
      const tags = new Map();
      r.results.forEach((s) => Object.entries(s.tags || {}).forEach(([k, v]) => {
        if (!tags.has(k)) tags.set(k, new Set());
        tags.get(k).add(v);
      }));
      const shown = r.results.length < r.totalResults ? ' (tags of the first ' + r.results.length + ')' : '';
      card.append(el('p', { id: 'm-count', 'data-series': String(r.totalResults), text: r.totalResults + ' series' + shown }));
      card.append(el('h3', { text: 'Tag keys and values' }),
        el('table', { class: 'data', id: 'm-tags' },
          el('thead', {}, el('tr', {}, el('th', { text: 'tag key' }), el('th', { class: 'num', text: 'values' }), el('th', { text: 'values' }))),
          el('tbody', {}, Array.from(tags.keys()).sort().map((k) => {
            const vs = Array.from(tags.get(k)).sort();
            return el('tr', { 'data-tagk': k }, el('td', { text: k }), el('td', { class: 'num', text: String(vs.length) }), el('td', { class: 'tagvs', text: vs.join(', ') }));
          }))));
      card.append(el('h3', { text: 'Series' }),
        el('table', { class: 'data', id: 'm-series' },
          el('thead', {}, el('tr', {}, el('th', { text: 'series' }), el('th', { text: 'TSUID' }))),
          el('tbody', {}, r.results.map((s) => el('tr', { 'data-tsuid': s.tsuid },
            el('td', {}, el('a', { href: hashOf('series', new URLSearchParams({ metric: metric, tsuid: s.tsuid })), text: seriesLabel(metric, s.tags) })),
            el('td', {}, el('code', { text: s.tsuid })))))));
    }).catch((e) => card.append(errorBox(e)));
  }

  // firstPoint finds a series' first point: the index knows the first hour
  // that may hold it (/api/status/series); the hours from there are read
  // until one has a point.
  async function firstPoint(tsuid, span) {
    let from = span.known ? span.first : 0;
    const last = span.known ? span.last + 3600 : Math.floor(Date.now() / 1000);
    const step = span.known ? 3600 : last; // without known hours: one read of all
    for (let i = 0; i < 48 && from <= last; i++, from += step) {
      const res = await postJSON('/api/query', { start: Math.max(from, 1), end: from + step - 1, msResolution: true,
        queries: [{ aggregator: 'none', tsuids: [tsuid] }] });
      let best = null;
      res.forEach((r) => Object.entries(r.dps || {}).forEach(([t, v]) => { if (best === null || Number(t) < best[0]) best = [Number(t), v]; }));
      if (best) return { timestamp: best[0], value: best[1] };
    }
    return null;
  }

  function seriesDetail(main, metric, tsuid) {
    const card = el('section', { class: 'card' },
      el('p', {}, el('a', { href: hashOf('series', new URLSearchParams({ metric: metric })), text: '← ' + metric })),
      el('h2', {}, 'Series ', el('code', { text: tsuid })));
    main.append(card);
    const table = el('table', { class: 'data', id: 'sd-points' },
      el('thead', {}, el('tr', {}, el('th', { text: '' }), el('th', { text: 'time (UTC)' }), el('th', { text: 'Unix ms' }), el('th', { class: 'num', text: 'value' }))));
    const tbody = el('tbody');
    table.append(tbody);
    function row(id, label, p) {
      tbody.append(el('tr', { id: id, 'data-ts': p ? String(p.timestamp) : '', 'data-value': p ? String(p.value) : '' },
        el('th', { text: label }), el('td', { text: p ? fmtTime(p.timestamp) : 'none' }), el('td', { text: p ? String(p.timestamp) : '' }),
        el('td', { class: 'num', text: p ? fmtNum(Number(p.value)) : '' })));
    }
    // The series' names and the hours the index knows for it.
    api('/api/status/series?' + qs({ tsuid: tsuid })).then(async (span) => {
      const tags = span.tags || {};
      card.append(el('p', { id: 'sd-name', text: seriesLabel(metric, tags) }));
      const [first, last] = await Promise.all([firstPoint(tsuid, span),
        api('/api/query/last?' + qs({ tsuids: tsuid, resolve: 'true' }))]);
      const l = last.find((x) => x.tsuid === tsuid) || last[0];
      row('sd-first', 'first', first);
      row('sd-last', 'last', l ? { timestamp: l.timestamp, value: l.value } : null);
      card.append(table);
      const gp = new URLSearchParams({ mode: 'tsdb', m: metric, agg: 'sum' });
      if (first && l) {
        gp.set('start', String(Math.floor(first.timestamp / 1000)));
        gp.set('end', String(Math.floor(l.timestamp / 1000) + 1));
      }
      Object.entries(tags).forEach(([k, v]) => gp.append('f', k + ':literal_or:1:' + v));
      card.append(el('p', {}, el('a', { id: 'sd-graph', href: hashOf('graph', gp), text: 'Graph this series' })));
      card.dataset.loaded = 'true';
    }).catch((e) => card.append(errorBox(e)));
  }

  // ---------- Status ----------

  function kv(rows, id) {
    return el('table', { class: 'kv', id: id }, el('tbody', {}, rows.filter(Boolean).map(([k, v, key]) =>
      el('tr', { 'data-key': key || k }, el('th', { text: k }), el('td', { text: v === undefined || v === null ? '—' : String(v) })))));
  }

  // statIndex keys /api/stats entries by name and tags.
  function statIndex(stats) {
    const m = new Map();
    stats.forEach((s) => {
      const tags = Object.entries(s.tags || {}).filter(([k]) => k !== 'host').sort().map(([k, v]) => k + '=' + v).join(',');
      m.set(s.metric + (tags ? '{' + tags + '}' : ''), { value: Number(s.value), ts: Number(s.timestamp) });
    });
    return m;
  }

  function statusPage(main) {
    const top = el('div', { class: 'grid' });
    const more = el('div');
    main.append(top, more);
    let prev = null, timer = null, stopped = false;

    async function refresh() {
      let version, jvm, store, stats, config, queries;
      try {
        [version, jvm, store, stats, config, queries] = await Promise.all([
          api('/api/version'), api('/api/stats/jvm'), api('/api/status'), api('/api/stats'), api('/api/config'), api('/api/stats/query')]);
      } catch (e) {
        clear(top); clear(more); top.append(errorBox(e));
        return;
      }
      if (stopped) return;
      const st = statIndex(stats);
      const stat = (k) => (st.has(k) ? st.get(k).value : null);
      const now = Date.now();
      clear(top); clear(more);
      top.append(
        el('section', { class: 'card' }, el('h2', { text: 'Daemon' }), kv([
          ['version', version.version, 'version'],
          ['revision', version.short_revision || version.full_revision, 'revision'],
          ['uptime', fmtDuration(jvm.runtime && jvm.runtime.uptime / 1000), 'uptime'],
          ['started', jvm.runtime ? fmtTime(jvm.runtime.startTime) : null, 'started'],
          ['mode', store.mode, 'mode'],
          ['Go', jvm.runtime && jvm.runtime.vmVersion, 'go'],
        ], 'st-daemon')),
        el('section', { class: 'card' }, el('h2', { text: 'Store' }), kv([
          ['engine', store.store.engine, 'engine'],
          ['format', store.store.format, 'format'],
          ['salt width', store.store.salt_width, 'salt_width'],
          ['salt buckets', store.store.salt_buckets, 'salt_buckets'],
          ['UID widths (metric/tagk/tagv)', store.store.uid_widths.metric + '/' + store.store.uid_widths.tagk + '/' + store.store.uid_widths.tagv, 'uid_widths'],
          ['tables (data, uid, meta)', [store.store.data_table, store.store.uid_table, store.store.meta_table].join(', '), 'tables'],
          ['series in the index', stat('tsd.index.series'), 'index_series'],
        ], 'st-store')),
        el('section', { class: 'card' }, el('h2', { text: 'Head and write-ahead log' }), kv([
          ['head series', stat('tsd.head.series'), 'head_series'],
          ['head memory', fmtBytes(stat('tsd.head.memory-bytes')) + (store.head && store.head.max_memory ? ' of ' + fmtBytes(store.head.max_memory) : ''), 'head_memory'],
          ['oldest unflushed hour', store.head && store.head.oldest_hour ? fmtTime(store.head.oldest_hour * 1000) : 'none', 'oldest_hour'],
          ['WAL size', store.wal ? fmtBytes(store.wal.bytes) : null, 'wal_bytes'],
          ['WAL files', store.wal ? store.wal.files : null, 'wal_files'],
          ['WAL fsync interval', store.wal ? store.wal.fsync_interval : null, 'wal_fsync'],
          ['flushed rows / points', stat('tsd.flush.rows') + ' / ' + stat('tsd.flush.points'), 'flushed'],
          ['compaction queue', stat('tsd.compaction.queue.size'), 'compaction_queue'],
          ['compacted rows', stat('tsd.compaction.count'), 'compacted'],
        ], 'st-head')));

      // Ingest rates: the difference of the points counters since the
      // last refresh.
      const protocols = ['telnet', 'put', 'influx', 'remote_write'];
      const protoSet = new Set(protocols);
      st.forEach((v, k) => { const m = /^tsd\.ingest\.points\{protocol=([^}]*)\}$/.exec(k); if (m) protoSet.add(m[1]); });
      const rateRows = Array.from(protoSet).map((p) => {
        const k = 'tsd.ingest.points{protocol=' + p + '}';
        const total = stat(k);
        let rate = '—';
        if (prev && prev.st.has(k) && total !== null) rate = ((total - prev.st.get(k).value) / ((now - prev.at) / 1000)).toFixed(1);
        return el('tr', { 'data-protocol': p }, el('td', { text: p }), el('td', { class: 'num', text: fmtNum(total) }), el('td', { class: 'num', text: rate }),
          el('td', { class: 'num', text: fmtNum(stat('tsd.ingest.bad{protocol=' + p + '}')) }), el('td', { class: 'num', text: fmtNum(stat('tsd.ingest.throttled{protocol=' + p + '}')) }));
      });
      prev = { st: st, at: now };
      more.append(el('section', { class: 'card' }, el('h2', { text: 'Ingest by protocol' }),
        el('table', { class: 'data', id: 'st-ingest' },
          el('thead', {}, el('tr', {}, ['protocol', 'points', 'points/s', 'bad', 'throttled'].map((h, i) => el('th', { class: i ? 'num' : '', text: h })))),
          el('tbody', {}, rateRows)),
        el('small', { class: 'dim', text: 'Rates are over the last refresh (every 5 s).' })));

      more.append(el('section', { class: 'card' }, el('h2', { text: 'Retention' }),
        store.retention && store.retention.length
          ? el('table', { class: 'data', id: 'st-retention' }, el('thead', {}, el('tr', {}, el('th', { text: 'metrics' }), el('th', { text: 'kept' }))),
            el('tbody', {}, store.retention.map((r) => el('tr', {}, el('td', {}, el('code', { text: r.pattern })), el('td', { text: r.keep })))))
          : el('p', { id: 'st-retention', class: 'dim', text: 'No rules: everything is kept.' })));

      more.append(el('section', { class: 'card' }, el('h2', { text: 'Rollup tables' }),
        store.rollups && store.rollups.length
          ? el('table', { class: 'data', id: 'st-rollups' },
            el('thead', {}, el('tr', {}, ['interval', 'row span', 'table', 'pre-aggregated table'].map((h) => el('th', { text: h })))),
            el('tbody', {}, store.rollups.map((r) => el('tr', { 'data-interval': r.interval }, el('td', { text: r.interval + (r.default ? ' (raw)' : '') }),
              el('td', { text: r.row_span }), el('td', {}, el('code', { text: r.table })), el('td', {}, el('code', { text: r.preagg_table || '—' }))))))
          : el('p', { id: 'st-rollups', class: 'dim', text: 'Rollups are off.' })));

      const slow = (queries.completed || []).slice().sort((a, b) => (b.stats && b.stats.totalTime || 0) - (a.stats && a.stats.totalTime || 0)).slice(0, 10);
      more.append(el('section', { class: 'card' }, el('h2', { text: 'Slowest recent queries' }),
        slow.length
          ? el('table', { class: 'data', id: 'st-queries' },
            el('thead', {}, el('tr', {}, ['ms', 'status', 'finished (UTC)', 'query'].map((h, i) => el('th', { class: i ? '' : 'num', text: h })))),
            el('tbody', {}, slow.map((q) => el('tr', {}, el('td', { class: 'num', text: q.stats ? q.stats.totalTime.toFixed(1) : '' }),
              el('td', { text: q.httpResponse ? String(q.httpResponse.code) : '' }), el('td', { text: fmtTime(q.queryCompletedTimestamp) }),
              el('td', {}, el('code', { class: 'query', text: JSON.stringify(q.query) }))))))
          : el('p', { id: 'st-queries', class: 'dim', text: 'No query has finished yet.' }),
        el('small', { class: 'dim', text: 'Running now: ' + (queries.running || []).length + '.' })));

      more.append(el('section', { class: 'card' }, el('h2', { text: 'Configuration' }),
        el('small', { class: 'dim', text: 'As /api/config shows it: values of secret keys are hidden.' }),
        kv(Object.keys(config).sort().map((k) => [k, config[k], k]), 'st-config')));
      main.dataset.loaded = 'true';
    }

    refresh().then(() => { if (!stopped) timer = setInterval(refresh, 5000); });
    return () => { stopped = true; clearInterval(timer); };
  }

  // ---------- start ----------

  window.addEventListener('hashchange', render);
  document.addEventListener('DOMContentLoaded', () => {
    api('/api/version').then((v) => { document.getElementById('version').textContent = 'tsd ' + v.version; }).catch(() => {});
    render();
  });
})();
