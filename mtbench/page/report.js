// mtbench's report page: the run's data (the JSON in #mtbench-data) as a browser of questions, answers and judgments.
// Every string from the run goes into the page as text (textContent), except the fields the Python side rendered
// with its sanitizing Markdown renderer (`html` below: question turns, references, answers, judge explanations).
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('mtbench-data').textContent);
  const PAGE = 25; // cards rendered at a time: the rest on "show more"
  const $ = (sel, root) => (root || document).querySelector(sel);

  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'cls') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k === 'on') for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
      else e.setAttribute(k, v);
    }
    for (const c of kids) if (c !== undefined && c !== null && c !== false) e.append(c); // strings become text nodes
    return e;
  }
  function html(cls, rendered) { // rendered: the Python renderer's output only (markdown-it, HTML disabled)
    const d = el('div', {cls: 'md ' + (cls || '')});
    d.innerHTML = rendered || '';
    return d;
  }
  const fmt = (v, nd) => v === null || v === undefined || Number.isNaN(v) ? '-' : (+v).toFixed(nd === undefined ? 2 : nd);
  const signed = (v, nd) => v === null || v === undefined ? '-' : (v > 0 ? '+' : '') + fmt(v, nd);
  const money = v => v === null || v === undefined ? '-' : v >= 0.01 || v === 0 ? '$' + v.toFixed(4) : '$' + v.toPrecision(2);

  // --- indexes ---
  const Q = new Map(D.q.map(q => [q.id, q]));
  const S = D.s.map(r => ({j: r[0], m: r[1], q: r[2], t: r[3], score: r[4], src: r[5], html: r[6], cost: r[7], pt: r[8], ct: r[9],
                           probs: r[10], k: r[11], exp: r[12]}));
  const P = D.p.map(r => ({j: r[0], m1: r[1], m2: r[2], q: r[3], t: r[4], g1: r[5], g2: r[6], h1: r[7], h2: r[8], cost: r[9],
                           pt: r[10], ct: r[11]}));
  for (const r of [...S, ...P]) if (!Q.has(r.q)) Q.set(r.q, {id: r.q, c: 'other', t: [], x: '(question not in the question file)'});
  const order = [...Q.keys()].sort((a, b) => a - b);
  const byQ = new Map(), pairsByQ = new Map();
  for (const r of S) (byQ.get(r.q) || byQ.set(r.q, []).get(r.q)).push(r);
  for (const r of P) (pairsByQ.get(r.q) || pairsByQ.set(r.q, []).get(r.q)).push(r);
  const catLabel = new Map(D.cats.map(([k, l]) => [k, l]));
  const abLabel = new Map((D.abilities || []).map(([k, l]) => [k, l]));
  const judgeIdx = name => D.judges.indexOf(name);
  const modelIdx = name => D.models.indexOf(name);
  const scaleTop = j => (D.scales || {})[D.judges[j]] || 10;
  const judgesWith = rows => [...new Set(rows.map(r => r.j))].sort((a, b) => a - b);

  // --- the state, in the address's #fragment (links in the report's tables set it) ---
  let state = {};
  const VIEWS = ['report', 'questions', 'side'];
  function parseHash(h) { // '#questions?model=A&turn=1' -> {view: 'questions', model: 'A', turn: '1'}
    const i = h.indexOf('?'), v = h.slice(1, i < 0 ? undefined : i);
    const s = {view: VIEWS.includes(v) ? v : 'report'};
    for (const [k, val] of new URLSearchParams(i < 0 ? '' : h.slice(i + 1))) s[k] = val;
    return s;
  }
  function hashOf(s) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(s)) if (k !== 'view' && v !== '' && v !== undefined && v !== null) p.set(k, v);
    const q = p.toString();
    return '#' + s.view + (q ? '?' + q : '');
  }
  function go(s) { // a new state: into the address (back and forward work), rendered
    state = s;
    const h = hashOf(s);
    try { if (location.hash !== h) history.pushState(null, '', h); } catch (e) { /* a sandboxed frame may refuse: the page still works */ }
    render();
  }
  document.addEventListener('click', e => { // links inside the page (#questions?..., #side?...)
    const a = e.target.closest('a[href^="#"]');
    if (!a) return;
    e.preventDefault();
    go(parseHash(a.getAttribute('href')));
    window.scrollTo(0, 0);
  });
  window.addEventListener('popstate', () => { state = parseHash(location.hash); render(); });
  window.addEventListener('hashchange', () => { state = parseHash(location.hash); render(); });

  // --- controls ---
  function select(name, options, value, label) {
    const s = el('select', {name, 'aria-label': label, on: {change: () => go({...state, [name]: s.value, page: ''})}});
    for (const [v, text] of options) s.append(el('option', {value: v, text, selected: String(v) === String(value) ? 'selected' : null}));
    return el('label', {cls: 'ctl'}, label + ' ', s);
  }
  function numberBox(name, value, label, top) {
    const i = el('input', {type: 'number', name, min: 0, max: top, step: 0.5, value: value || '', 'aria-label': label,
                           on: {change: () => go({...state, [name]: i.value, page: ''})}});
    return el('label', {cls: 'ctl'}, label + ' ', i);
  }
  function check(name, value, label) {
    const i = el('input', {type: 'checkbox', name, checked: value ? 'checked' : null, on: {change: () => go({...state, [name]: i.checked ? '1' : '', page: ''})}});
    return el('label', {cls: 'ctl'}, i, ' ' + label);
  }
  const judgeOptions = js => js.map(j => [D.judges[j], D.judges[j]]);
  const modelOptions = (all) => (all ? [['', all]] : []).concat(D.models.map(m => [m, m]));
  const turnOptions = () => [['', 'all turns']].concat(Array.from({length: D.turns}, (_, k) => [k + 1, 'turn ' + (k + 1)]));
  const catOptions = () => [['', 'all categories']].concat(D.cats.map(([k, l]) => [k, l]));

  // --- pieces of a question ---
  function scoreBadge(r) {
    const top = scaleTop(r.j);
    const ok = r.score !== -1;
    const band = !ok ? 'out' : r.score >= 0.75 * top ? 'hi' : r.score >= 0.45 * top ? 'mid' : 'lo';
    return el('span', {cls: 'score ' + band, title: ok ? 'score (1-' + top + ')' : 'no score: left out of the tables'}, ok ? fmt(r.score, r.score % 1 ? 1 : 0) : 'left out');
  }
  const SOURCES = {parsed: "parsed from the judge's [[rating]]", logits: "no [[rating]] written: the most likely rating in the judge's logits",
                   none: 'no rating found in the reply', failed: 'the judge call failed'};
  function probsChart(probs) {
    const box = el('div', {cls: 'probs', title: "the judge's rating distribution, read from its logits"});
    const top = Math.max(...probs);
    probs.forEach((p, k) => {
      const bar = el('span', {cls: 'bar'});
      bar.style.height = Math.round(100 * p / (top || 1)) + '%'; // CSSOM: allowed by the page's CSP (no style attributes)
      box.append(el('span', {cls: 'col', title: (k + 1) + ': ' + (100 * p).toFixed(1) + '%'}, bar, el('span', {cls: 'lab', text: String(k + 1)})));
    });
    return box;
  }
  function judgmentBlock(r, open) {
    const meta = [SOURCES[r.src] || r.src];
    if (r.exp !== null && r.exp !== undefined) meta.push('expected ' + fmt(r.exp));
    if (r.k > 1) meta.push('sample ' + r.k);
    const tok = r.pt || r.ct ? (r.pt || 0) + ' + ' + (r.ct || 0) + ' tokens' : null;
    const cost = r.cost !== null && r.cost !== undefined ? money(r.cost) : null;
    const head = el('summary', {}, scoreBadge(r), el('span', {cls: 'judge', text: 'judge ' + D.judges[r.j]}),
                    el('span', {cls: 'meta', text: meta.join(' · ')}), tok && el('span', {cls: 'meta', text: tok}), cost && el('span', {cls: 'meta cost', text: cost}));
    const d = el('details', {cls: 'judgment', open: open ? 'open' : null}, head);
    if (r.probs) d.append(probsChart(r.probs));
    d.append(html('explanation', r.html));
    return d;
  }
  function answerOf(m, qid) { return ((D.ans[m] || {})[qid]) || null; }
  function answerBlock(m, qid, t) {
    const a = answerOf(m, qid);
    if (!a) return el('p', {cls: 'missing', text: 'no answer on file'});
    const text = (a.t || [])[t - 1];
    const bits = [];
    if (a.n && a.n[t - 1] !== null && a.n[t - 1] !== undefined) bits.push(a.n[t - 1] + ' tokens');
    if (a.s && a.s[t - 1] !== null && a.s[t - 1] !== undefined) bits.push(fmt(a.s[t - 1], 1) + ' s');
    const box = el('div', {cls: 'answer'});
    if (bits.length) box.append(el('div', {cls: 'meta', text: bits.join(' · ')}));
    if (a.e) box.append(el('div', {cls: 'error', text: 'error: ' + a.e}));
    box.append(text === null || text === undefined ? el('p', {cls: 'missing', text: 'not answered (this turn is given, not asked)'}) : html('', text));
    return box;
  }
  const VERDICT = {model_1: 'first', model_2: 'second', tie: 'tie', error: 'error', 'tie (inconsistent)': 'tie'};
  function pairBlock(p) {
    const name = w => w === 'model_1' ? D.models[p.m1] : w === 'model_2' ? D.models[p.m2] : w;
    const g = (k, first, second, w, h) => el('details', {cls: 'game'},
      el('summary', {}, el('span', {cls: 'meta', text: 'game ' + k + ': ' + D.models[first] + ' shown first, ' + D.models[second] + ' second'}),
         el('span', {cls: 'verdict ' + (VERDICT[w] || ''), text: w === 'tie' || w === 'error' ? w : 'winner ' + name(w)})), html('explanation', h));
    const cost = p.cost !== null && p.cost !== undefined ? ' · ' + money(p.cost) : '';
    return el('div', {cls: 'pair'}, el('div', {cls: 'pairhead'}, el('b', {text: 'pairwise: '}), D.models[p.m1] + ' vs ' + D.models[p.m2],
              el('span', {cls: 'meta', text: ' judge ' + D.judges[p.j] + cost})),
              g(1, p.m1, p.m2, p.g1, p.h1), g(2, p.m2, p.m1, p.g2, p.h2));
  }
  function fold(title, rendered, cls) {
    return el('details', {cls: 'fold ' + (cls || '')}, el('summary', {text: title}), html('', rendered));
  }
  function turnHead(q, t) {
    const box = el('div', {cls: 'userturn'}, el('div', {cls: 'who', text: 'user, turn ' + t}), html('', q.t[t - 1]));
    const frag = [box];
    if (q.g && q.g[t - 1]) frag.push(fold("the dataset's answer to this turn (the history later turns are asked after)", q.g[t - 1], 'golden'));
    if (q.r && q.r[t - 1]) frag.push(fold('reference answer, turn ' + t + ' (the judge reads it)', q.r[t - 1], 'reference'));
    if (q.k && q.k[t - 1]) frag.push(el('div', {cls: 'criteria'}, el('b', {text: 'criteria: '}), html('', q.k[t - 1])));
    return frag;
  }
  function qTitle(q) {
    return [el('span', {cls: 'qid', text: '#' + q.id}), el('span', {cls: 'cat', text: catLabel.get(q.c) || q.c}),
            q.a && q.a !== q.c ? el('span', {cls: 'cat', text: abLabel.get(q.a) || q.a}) : null,
            el('span', {cls: 'snip', text: q.x || ''})];
  }

  // --- the questions view ---
  function filters() {
    const j = state.judge !== undefined && judgeIdx(state.judge) >= 0 ? judgeIdx(state.judge) : null;
    const lo = state.min === undefined || state.min === '' ? null : +state.min, hi = state.max === undefined || state.max === '' ? null : +state.max;
    return {j, m: state.model ? modelIdx(state.model) : null, cat: state.cat || null, ab: state.ability || null,
            t: state.turn ? +state.turn : null, lo, hi, out: state.out === '1'};
  }
  function qMatches(q, f) { return (!f.cat || q.c === f.cat) && (!f.ab || (q.a || q.c) === f.ab); }
  function singleMatches(r, f) {
    if (f.j !== null && r.j !== f.j) return false;
    if (f.m !== null && r.m !== f.m) return false;
    if (f.t !== null && r.t !== f.t) return false;
    if (f.out) return r.score === -1;
    if (f.lo !== null && !(r.score !== -1 && r.score >= f.lo)) return false;
    if (f.hi !== null && !(r.score !== -1 && r.score <= f.hi)) return false;
    return true;
  }
  function pairMatches(p, f) {
    if (f.lo !== null || f.hi !== null || f.out) return false; // a pair line has no score
    if (f.j !== null && p.j !== f.j) return false;
    if (f.m !== null && p.m1 !== f.m && p.m2 !== f.m) return false;
    return f.t === null || p.t === f.t;
  }
  function hitsOf(f) {
    const hits = new Map();
    const add = (qid, m, t, r) => {
      let h = hits.get(qid);
      if (!h) hits.set(qid, h = {models: new Set(), keys: new Set(), rows: []});
      h.models.add(m); h.keys.add(m + '|' + t); if (r) h.rows.push(r);
    };
    for (const r of S) if (qMatches(Q.get(r.q), f) && singleMatches(r, f)) add(r.q, r.m, r.t, r);
    for (const p of P) if (qMatches(Q.get(p.q), f) && pairMatches(p, f)) for (const m of [p.m1, p.m2]) if (f.m === null || m === f.m) add(p.q, m, p.t);
    if (!S.length && !P.length) // answers without judgments: every question
      for (const q of order.map(i => Q.get(i))) if (qMatches(q, f)) for (let m = 0; m < D.models.length; m++) if (f.m === null || f.m === m) if (answerOf(m, q.id)) add(q.id, m, 0);
    return hits;
  }
  function chips(h) {
    const rows = h.rows.filter(r => r.k <= 1);
    if (!rows.length) return null;
    if (rows.length > 8) {
      const ok = rows.filter(r => r.score !== -1).map(r => r.score);
      const mean = ok.length ? ok.reduce((a, b) => a + b, 0) / ok.length : null;
      return el('span', {cls: 'chips', text: rows.length + ' judgments, mean ' + fmt(mean) + (ok.length ? ', ' + Math.min(...ok) + ' to ' + Math.max(...ok) : '')});
    }
    return el('span', {cls: 'chips'}, ...rows.map(r => el('span', {cls: 'chip', title: D.models[r.m] + ', turn ' + r.t},
      el('span', {cls: 'who', text: D.models[r.m] + ' t' + r.t}), scoreBadge(r))));
  }
  function questionBody(q, h, f) {
    const body = el('div', {cls: 'qbody'});
    const models = [...h.models].sort((a, b) => a - b);
    const nt = Math.max(q.t.length, ...[...h.keys].map(k => +k.split('|')[1]));
    for (let t = 1; t <= nt; t++) {
      const sec = el('section', {cls: 'turn'}, el('h4', {text: 'Turn ' + t}), ...(q.t[t - 1] ? turnHead(q, t) : [el('p', {cls: 'missing', text: 'question text not available'})]));
      for (const m of models) {
        const js = (byQ.get(q.id) || []).filter(r => r.m === m && r.t === t && (f.j === null || r.j === f.j)).sort((a, b) => a.j - b.j || a.k - b.k);
        if (!answerOf(m, q.id) && !js.length) continue;
        const hit = h.keys.has(m + '|' + t);
        const box = el('div', {cls: 'model' + (hit ? ' hit' : ''), 'data-model': D.models[m], 'data-turn': t},
                       el('div', {cls: 'who', text: D.models[m]}), answerBlock(m, q.id, t));
        js.forEach(r => box.append(judgmentBlock(r, hit && r.k <= 1)));
        sec.append(box);
      }
      for (const p of (pairsByQ.get(q.id) || [])) if (p.t === t && (models.includes(p.m1) || models.includes(p.m2)) && (f.j === null || p.j === f.j)) sec.append(pairBlock(p));
      body.append(sec);
    }
    return body;
  }
  function questionCard(q, h, f, open) {
    const d = el('details', {cls: 'card', 'data-qid': q.id}, el('summary', {}, ...qTitle(q), chips(h)));
    const fill = () => { if (d.open && !d.dataset.filled) { d.dataset.filled = '1'; d.append(questionBody(q, h, f)); } };
    d.addEventListener('toggle', fill);
    if (open) { d.open = true; fill(); }
    return d;
  }
  function moreButton(total, shown, key) {
    if (shown >= total) return null;
    return el('button', {cls: 'more', type: 'button', on: {click: () => go({...state, [key]: String(shown + PAGE)})}},
              'show ' + Math.min(PAGE, total - shown) + ' more (' + (total - shown) + ' left)');
  }
  function questionsView() {
    const f = filters();
    const js = judgesWith([...S, ...P]);
    if (f.j === null && js.length) f.j = js[0];
    const ctl = el('div', {cls: 'controls'});
    if (js.length > 1) ctl.append(select('judge', judgeOptions(js), D.judges[f.j], 'judge'));
    ctl.append(select('cat', catOptions(), state.cat || '', 'category'));
    if (D.abilities) ctl.append(select('ability', [['', 'all abilities']].concat(D.abilities), state.ability || '', 'ability'));
    ctl.append(select('model', modelOptions('all models'), state.model || '', 'model'), select('turn', turnOptions(), state.turn || '', 'turn'),
               numberBox('min', state.min, 'score from', scaleTop(f.j || 0)), numberBox('max', state.max, 'to', scaleTop(f.j || 0)),
               check('out', f.out, 'left out only (no score)'));
    const reset = el('button', {type: 'button', cls: 'reset', on: {click: () => go({view: 'questions'})}}, 'clear filters');
    ctl.append(reset);
    const hits = hitsOf(f);
    const ids = order.filter(i => hits.has(i));
    if (state.open) { const o = +state.open; if (hits.has(o)) { ids.splice(ids.indexOf(o), 1); ids.unshift(o); } }
    const n = [...hits.values()].reduce((a, h) => a + h.rows.length, 0);
    const shown = Math.max(PAGE, +state.page || 0);
    const list = el('div', {cls: 'cards'});
    for (const i of ids.slice(0, shown)) list.append(questionCard(Q.get(i), hits.get(i), f, state.open && +state.open === i));
    const what = S.length ? n + ' judgment' + (n === 1 ? '' : 's') + ' on ' : '';
    return [ctl, el('p', {cls: 'count', 'data-questions': ids.length, 'data-judgments': n}, what + ids.length + ' question' + (ids.length === 1 ? '' : 's')), list, moreButton(ids.length, shown, 'page')];
  }

  // --- side by side: two models on the same question-turns, sorted by the difference ---
  function cellsOf(j, m) { // {qid|turn: mean of the valid samples}
    const acc = new Map();
    for (const r of S) if (r.j === j && r.m === m && r.score !== -1) {
      const k = r.q + '|' + r.t, a = acc.get(k) || acc.set(k, [0, 0]).get(k);
      a[0] += r.score; a[1] += 1;
    }
    return new Map([...acc].map(([k, [s, n]]) => [k, s / n]));
  }
  function pairCells(j, a, b) { // pairwise runs: +1 where B won both games, -1 where it lost both, 0 otherwise: a tie (FastChat's rule)
    const out = new Map();
    const who = (p, w) => w === 'model_1' ? p.m1 : w === 'model_2' ? p.m2 : null; // both games' winners are named as the line's model_1 or model_2
    for (const p of P) if (p.j === j && ((p.m1 === a && p.m2 === b) || (p.m1 === b && p.m2 === a))) {
      const w1 = who(p, p.g1), w2 = who(p, p.g2);
      if (p.g1 === 'error' || p.g2 === 'error') continue;
      const v = w1 !== null && w1 === w2 ? (w1 === b ? 1 : -1) : 0;
      out.set(p.q + '|' + p.t, v);
    }
    return out;
  }
  function cmpRow(j, a, b) {
    for (const r of D.cmp) {
      if (r[0] !== j) continue;
      if (r[1] === a && r[2] === b) return {n: r[3], diff: r[4], lo: r[5], hi: r[6], mde: r[7]};
      if (r[1] === b && r[2] === a) return {n: r[3], diff: -r[4], lo: -r[6], hi: -r[5], mde: r[7]};
    }
    return null;
  }
  function pOf(j, a, b) {
    for (const r of D.compare) if (r[0] === j && ((r[1] === b && r[2] === a) || (r[1] === a && r[2] === b))) return {p: r[3], holm: r[4]};
    return null;
  }
  function sideView() {
    const single = S.length > 0;
    const js = judgesWith(single ? S : P);
    const j = state.judge && judgeIdx(state.judge) >= 0 ? judgeIdx(state.judge) : js[0];
    const a = state.a && modelIdx(state.a) >= 0 ? modelIdx(state.a) : (D.baseline !== null && D.baseline !== undefined ? D.baseline : 0);
    const b = state.b && modelIdx(state.b) >= 0 ? modelIdx(state.b) : (a === 0 ? 1 : 0);
    const ord = state.order || 'loses';
    const ctl = el('div', {cls: 'controls'});
    if (js.length > 1) ctl.append(select('judge', judgeOptions(js), D.judges[j], 'judge'));
    ctl.append(select('a', modelOptions(), D.models[a], 'A'), select('b', modelOptions(), D.models[b], 'B'),
               select('cat', catOptions(), state.cat || '', 'category'), select('turn', turnOptions(), state.turn || '', 'turn'),
               select('order', [['loses', 'where B loses to A first'], ['wins', 'where B wins first'], ['question', 'by question']], ord, 'order'));
    const swap = el('button', {type: 'button', on: {click: () => go({...state, a: D.models[b], b: D.models[a]})}}, 'swap A and B');
    ctl.append(swap);
    if (D.models.length < 2 || a === b) return [ctl, el('p', {cls: 'count', text: 'pick two different models'})];
    const ca = single ? cellsOf(j, a) : null, cb = single ? cellsOf(j, b) : null, pc = single ? null : pairCells(j, a, b);
    const keys = single ? [...ca.keys()].filter(k => cb.has(k)) : [...pc.keys()];
    let rows = keys.map(k => { const [q, t] = k.split('|').map(Number); return {q, t, sa: single ? ca.get(k) : null, sb: single ? cb.get(k) : null, d: single ? cb.get(k) - ca.get(k) : pc.get(k)}; })
      .filter(r => (!state.cat || (Q.get(r.q) || {}).c === state.cat) && (!state.turn || r.t === +state.turn));
    rows.sort(ord === 'question' ? (x, y) => x.q - y.q || x.t - y.t : ord === 'wins' ? (x, y) => y.d - x.d || x.q - y.q || x.t - y.t : (x, y) => x.d - y.d || x.q - y.q || x.t - y.t);
    const lose = rows.filter(r => r.d < 0).length, win = rows.filter(r => r.d > 0).length;
    const mean = rows.length ? rows.reduce((s, r) => s + r.d, 0) / rows.length : null;
    const summary = el('div', {cls: 'sidesum'});
    summary.append(el('p', {}, el('b', {text: D.models[b]}), ' against ', el('b', {text: D.models[a]}), ': ' + rows.length + ' question-turns' +
      (single ? ', mean difference (B - A) ' + signed(mean) : '') + '; B ' + (single ? 'scored lower' : 'lost') + ' on ' + lose + ', ' +
      (single ? 'higher' : 'won') + ' on ' + win + ', ' + (single ? 'the same' : 'tied') + ' on ' + (rows.length - lose - win) + '.'));
    const c = single && !state.cat && !state.turn ? cmpRow(j, a, b) : null;
    if (c) {
      const p = pOf(j, a, b);
      summary.append(el('p', {cls: 'meta', text: 'Paired over the ' + c.n + ' questions both were judged on (mtbench.compare): B - A = ' + signed(c.diff) +
        ', 95% CI [' + signed(c.lo) + ', ' + signed(c.hi) + '] clustered by question' + (p ? ', p = ' + (p.p < 0.001 ? '<0.001' : fmt(p.p, 3)) + ' (Holm ' + (p.holm < 0.001 ? '<0.001' : fmt(p.holm, 3)) + ')' : '') +
        '; differences under ' + fmt(c.mde) + ' cannot be told apart (80% power, 5% two-sided).'}));
    }
    const shown = Math.max(PAGE, +state.page || 0);
    const list = el('div', {cls: 'cards'});
    for (const r of rows.slice(0, shown)) list.append(sideCard(r, j, a, b, single));
    return [ctl, summary, el('p', {cls: 'count', 'data-rows': rows.length, text: rows.length + ' question-turns'}), list, moreButton(rows.length, shown, 'page')];
  }
  function sideCard(r, j, a, b, single) {
    const q = Q.get(r.q);
    const diff = el('span', {cls: 'diff ' + (r.d < 0 ? 'lo' : r.d > 0 ? 'hi' : 'mid'), text: single ? signed(r.d, 1) : r.d > 0 ? 'B won' : r.d < 0 ? 'B lost' : 'tie'});
    const sum = el('summary', {}, diff, ...qTitle(q), el('span', {cls: 'tag', text: 'turn ' + r.t}),
                   single ? el('span', {cls: 'chips', text: 'A ' + fmt(r.sa, 1) + ' · B ' + fmt(r.sb, 1)}) : null);
    const d = el('details', {cls: 'card side', 'data-qid': r.q, 'data-turn': r.t, 'data-diff': r.d}, sum);
    d.addEventListener('toggle', () => {
      if (!d.open || d.dataset.filled) return;
      d.dataset.filled = '1';
      const body = el('div', {cls: 'qbody'});
      if (r.t > 1 && q.t.length) body.append(el('details', {cls: 'fold'}, el('summary', {text: 'the turns before'}),
        ...q.t.slice(0, r.t - 1).map((x, k) => el('div', {cls: 'userturn'}, el('div', {cls: 'who', text: 'user, turn ' + (k + 1)}), html('', x)))));
      if (q.t[r.t - 1]) body.append(...turnHead(q, r.t));
      const col = m => {
        const box = el('div', {cls: 'model', 'data-model': D.models[m]}, el('div', {cls: 'who', text: (m === a ? 'A: ' : 'B: ') + D.models[m]}));
        if (r.t > 1) box.append(el('details', {cls: 'fold'}, el('summary', {text: 'its earlier answers'}), ...Array.from({length: r.t - 1}, (_, k) => answerBlock(m, r.q, k + 1))));
        box.append(answerBlock(m, r.q, r.t));
        for (const x of (byQ.get(r.q) || []).filter(x => x.j === j && x.m === m && x.t === r.t).sort((x, y) => x.k - y.k)) box.append(judgmentBlock(x, x.k <= 1));
        return box;
      };
      body.append(el('div', {cls: 'columns'}, col(a), col(b)));
      if (!single) for (const p of (pairsByQ.get(r.q) || [])) if (p.t === r.t && p.j === j && [p.m1, p.m2].includes(a) && [p.m1, p.m2].includes(b)) body.append(pairBlock(p));
      d.append(body);
    });
    return d;
  }

  // --- the frame: tabs and views ---
  const views = {report: null, questions: questionsView, side: sideView};
  function render() {
    const t0 = performance.now();
    const v = state.view || 'report';
    for (const b of document.querySelectorAll('nav.tabs a')) b.classList.toggle('active', b.dataset.view === v);
    $('#report').hidden = v !== 'report';
    const main = $('#browser');
    main.hidden = v === 'report';
    main.replaceChildren();
    if (views[v]) main.append(...views[v]().filter(Boolean));
    document.body.dataset.view = v;
    document.body.dataset.renderMs = (performance.now() - t0).toFixed(1);
  }
  state = parseHash(location.hash);
  render();
  document.body.dataset.ready = '1';
  document.body.dataset.readyMs = performance.now().toFixed(1);
})();
