/* The HTML report's script (embedded by report_embed.cmake; see docs/report.md). It reads the
 * data ptt report wrote into the page (#ptt-data) and draws: the timeline (SVG, zoom and pan),
 * the contended objects with their wait histograms, the blocked time of the threads. No library,
 * nothing fetched. */
(function () {
    'use strict';
    var D = JSON.parse(document.getElementById('ptt-data').textContent);
    var main = document.getElementById('main');
    var STATES = D.states;
    // What the page calls them: state 0 is no blocking pthread call, not "running" on a CPU.
    var LABELS = D.state_labels || STATES;
    var BUF = STATES.indexOf('ptt_buffer'); /* ptt's own wait for its buffer: not the program's */
    /* Rows are taller when there are few. */
    var LABEL_W = 190, ROW_H = D.rows.length <= 40 ? 20 : 16, BAR_Y = 2, BAR_H = ROW_H - 4, AXIS_H = 24;

    /* Helpers */

    function esc(s) {
        return String(s).replace(/[&<>"']/g, function (c) {
            return '&#' + c.charCodeAt(0) + ';';
        });
    }
    function fmtNs(ns) {
        ns = Number(ns);
        if (ns < 1e4) return Math.round(ns) + ' ns';
        if (ns < 1e7) return (ns / 1e3).toFixed(1) + ' \u00b5s';
        if (ns < 1e10) return (ns / 1e6).toFixed(1) + ' ms';
        return (ns / 1e9).toFixed(2) + ' s';
    }
    /* A time precise enough to tell bins apart (the tooltip). */
    function fmtAt(ns) {
        if (ns < 1e4) return Math.round(ns) + ' ns';
        if (ns < 1e7) return (ns / 1e3).toFixed(2) + ' \u00b5s';
        if (ns < 1e10) return (ns / 1e6).toFixed(3) + ' ms';
        return (ns / 1e9).toFixed(6) + ' s';
    }
    /* A time on the axis, with the precision the tick step needs. */
    function fmtT(t, step) {
        var u = step * 10 >= 1e9 ? 1e9 : step * 10 >= 1e6 ? 1e6 : step * 10 >= 1e3 ? 1e3 : 1;
        var d = Math.max(0, -Math.floor(Math.log10(step / u) + 1e-9));
        return (t / u).toFixed(d) + (u === 1e9 ? ' s' : u === 1e6 ? ' ms' : u === 1e3 ? ' \u00b5s' : ' ns');
    }
    function niceStep(x) {
        var p = Math.pow(10, Math.floor(Math.log10(x))), m = x / p;
        return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
    }
    function pct(a, b) {
        return b > 0 ? (100 * a / b).toFixed(1) + '%' : '-';
    }

    /* The page's skeleton; the SVG elements made by the HTML parser give the SVG namespace. */
    main.innerHTML =
        '<section id="timeline-section"><h2>Timeline</h2>' +
        '<p class="note" id="tl-note"></p>' +
        '<div class="tools"><button id="z-in" title="zoom in (+)">+</button>' +
        '<button id="z-out" title="zoom out (-)">&minus;</button>' +
        '<button id="z-fit" title="the whole trace (0)">fit</button>' +
        '<button id="p-left" title="pan left (left arrow)">&larr;</button>' +
        '<button id="p-right" title="pan right (right arrow)">&rarr;</button>' +
        '<span id="range"></span><span class="hint">Ctrl+wheel, +/&minus;, double-click: zoom; ' +
        'drag, Shift+wheel, arrows: pan; wheel: scroll the threads</span></div>' +
        '<div class="legend" id="legend"></div>' +
        '<svg id="tl-axis" height="' + AXIS_H + '"></svg>' +
        '<div id="tl-scroll"><svg id="tl"></svg></div></section>' +
        '<section id="objects-section"><h2>Contended objects</h2><p class="note" id="obj-note"></p>' +
        '<div class="tablewrap"><table class="grid" id="objects"></table></div></section>' +
        '<section id="blame-section"><h2>Who made others wait</h2><p class="note" id="blame-note"></p>' +
        '<div class="tablewrap"><table class="grid" id="blame"></table></div></section>' +
        '<section id="threads-section"><h2>Blocked time per thread</h2>' +
        '<p class="note" id="thr-note"></p><svg class="chart" id="blocked-chart"></svg>' +
        '<div class="tablewrap"><table class="grid" id="threads"></table></div></section>' +
        '<div id="tip"></div>';
    var svg = document.getElementById('tl');
    var axis = document.getElementById('tl-axis');
    var scroller = document.getElementById('tl-scroll');
    var tip = document.getElementById('tip');
    var NS = svg.namespaceURI;

    function el(tag, attrs, parent) {
        var e = document.createElementNS(NS, tag);
        for (var k in attrs) e.setAttribute(k, attrs[k]);
        if (parent) parent.appendChild(e);
        return e;
    }

    /* Legend */
    var legend = document.getElementById('legend');
    legend.innerHTML = LABELS.map(function (s, i) {
        return '<span><i class="s' + i + '"></i>' + esc(i && i !== BUF ? 'blocked: ' + s : s) + '</span>';
    }).join('');

    /* Timeline data */

    var rows = D.rows, nrows = rows.length, levels = D.levels, binNs = D.bin_ns;
    var dur = Math.max(D.info.duration_ns, binNs, 1);
    var spansOf = new Array(nrows);
    for (var i = 0; i < nrows; i++) spansOf[i] = [];
    D.spans.forEach(function (s) {
        if (s[0] < nrows) spansOf[s[0]].push(s);
    });

    /* Runs of one row at one level: [first bin, length, state] triples, for the bins where the
     * thread was alive. */
    function runs(r, k) {
        var row = rows[r];
        if (!row.cache) row.cache = [];
        if (row.cache[k]) return row.cache[k];
        var s = row.l[k] || '', out = [], pos = 0, i = 0;
        while (i < s.length) {
            var c = s.charCodeAt(i++), n = 0;
            while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57)
                n = n * 10 + s.charCodeAt(i++) - 48;
            if (!n) n = 1;
            if (c >= 97) out.push(pos, n, c - 97); /* a dominant state */
            else if (c >= 65) out.push(pos, n, c - 65 + 64); /* mixed: +64 */
            pos += n;
        }
        return (row.cache[k] = out);
    }

    /* The view: [v0, v1] ns, drawn from x = LABEL_W to W. */
    var v0 = 0, v1 = dur, W = 800;
    var drawn = new Array(nrows); /* per row: the view it was drawn for */
    var rowG = new Array(nrows), binsG = new Array(nrows);
    function scale() {
        return (W - LABEL_W) / (v1 - v0);
    }
    function X(t) {
        return LABEL_W + (t - v0) * scale();
    }
    function T(x) {
        return v0 + (x - LABEL_W) / scale();
    }
    function level() {
        var sc = scale(), k = 0;
        while (k < levels - 1 && binNs * Math.pow(2, k) * sc < 1) k++;
        return k;
    }

    /* Rows: a group each (its name, its background), filled when scrolled into view. */
    svg.setAttribute('height', Math.max(nrows * ROW_H, ROW_H));
    var labelBg = el('rect', {class: 'labelbg', x: 0, y: 0, width: LABEL_W - 4, height: nrows * ROW_H});
    var rowsG = el('g', {id: 'rows'}, svg);
    svg.insertBefore(labelBg, rowsG);
    var prevPid = null;
    for (i = 0; i < nrows; i++) {
        var row = rows[i];
        var g = el('g', {class: 'row' + (i % 2 ? ' odd' : ''), transform: 'translate(0,' + i * ROW_H + ')',
            'data-name': row.n, 'data-tid': row.t, 'data-pid': row.p}, rowsG);
        el('rect', {class: 'rowbg', x: LABEL_W - 4, y: 0, width: 10, height: ROW_H}, g);
        var label = el('text', {class: 'tname', x: 4, y: ROW_H - 4}, g);
        var nm = row.n.length > 26 ? row.n.slice(0, 25) + '\u2026' : row.n;
        label.textContent = nm;
        el('title', {}, label).textContent = row.n + ' (pid ' + row.p + ', tid ' + row.t + ')';
        rowG[i] = g;
        binsG[i] = el('g', {class: 'bins'}, g);
        if (prevPid !== null && row.p !== prevPid) /* a new process starts here */
            el('line', {class: 'pidsep', x1: 0, x2: 4000, y1: 0, y2: 0, stroke: '#8894a0'}, g);
        prevPid = row.p;
    }
    var gridG = el('g', {class: 'grid'}, svg);

    function drawRow(r, key, k, detail) {
        var g = binsG[r];
        while (g.firstChild) g.removeChild(g.firstChild);
        drawn[r] = key;
        var row = rows[r], bw = binNs * Math.pow(2, k);
        var rr = runs(r, k), parts = [], sc = scale();
        var firstBin = Math.floor(v0 / bw), lastBin = Math.ceil(v1 / bw);
        /* the first run ending after firstBin: binary search on run starts */
        var lo = 0, hi = rr.length / 3;
        while (lo < hi) {
            var mid = (lo + hi) >> 1;
            if (rr[3 * mid] + rr[3 * mid + 1] <= firstBin) lo = mid + 1;
            else hi = mid;
        }
        for (var j = 3 * lo; j < rr.length; j += 3) {
            var b0 = rr[j], b1 = rr[j] + rr[j + 1], s = rr[j + 2];
            if (b0 > lastBin) break;
            var t0 = Math.max(b0 * bw, row.b), t1 = Math.min(b1 * bw, row.e);
            if (t1 < t0) t1 = t0;
            var x0 = LABEL_W + (t0 - v0) * sc, x1 = LABEL_W + (t1 - v0) * sc;
            if (x1 - x0 < 1) x1 = x0 + 1; /* a short thread or state stays visible */
            x0 = Math.max(x0, LABEL_W);
            x1 = Math.min(x1, W);
            if (x1 <= x0) continue;
            (parts[s] || (parts[s] = [])).push('M' + x0.toFixed(1) + ' ' + BAR_Y + 'H' +
                x1.toFixed(1) + 'v' + BAR_H + 'H' + x0.toFixed(1) + 'z');
        }
        var cls = detail ? ' faded' : '';
        for (s = 0; s < parts.length; s++)
            if (parts[s])
                el('path', {class: 's' + (s & 63) + (s & 64 ? ' mixed' : '') + cls, d: parts[s].join('')}, g);
        if (!detail) return;
        /* the exact spans over the bins: the longest blocked spans of the trace */
        var sp = spansOf[r], sparts = [];
        for (j = 0; j < sp.length; j++) {
            var a = sp[j][2], e = a + sp[j][3];
            if (e < v0 || a > v1) continue;
            x0 = Math.max(LABEL_W, LABEL_W + (a - v0) * sc);
            x1 = Math.min(W, Math.max(LABEL_W + (e - v0) * sc, x0 + 1));
            (sparts[sp[j][1]] || (sparts[sp[j][1]] = [])).push('M' + x0.toFixed(1) + ' ' + BAR_Y +
                'H' + x1.toFixed(1) + 'v' + BAR_H + 'H' + x0.toFixed(1) + 'z');
        }
        for (s = 0; s < sparts.length; s++)
            if (sparts[s]) el('path', {class: 'span s' + s, d: sparts[s].join('')}, g);
    }

    function drawAxis() {
        while (axis.firstChild) axis.removeChild(axis.firstChild);
        while (gridG.firstChild) gridG.removeChild(gridG.firstChild);
        axis.setAttribute('width', W);
        var step = niceStep((v1 - v0) / Math.max(2, (W - LABEL_W) / 110));
        var t = Math.ceil(v0 / step) * step;
        var h = nrows * ROW_H;
        var name = el('text', {x: 6, y: 16}, axis);
        name.textContent = 'time since start';
        for (; t <= v1; t += step) {
            var x = X(t);
            el('line', {x1: x, x2: x, y1: AXIS_H - 7, y2: AXIS_H}, axis);
            if (x + 50 < W) el('text', {x: x + 3, y: 15}, axis).textContent = fmtT(t, step);
            el('line', {x1: x, x2: x, y1: 0, y2: h}, gridG);
        }
        document.getElementById('range').textContent =
            fmtNs(v0) + ' \u2013 ' + fmtNs(v1) + '  (' + fmtNs(v1 - v0) + ' shown of ' + fmtNs(dur) + ')';
    }

    var pending = false;
    function draw() {
        pending = false;
        var k = level(), bw = binNs * Math.pow(2, k);
        var detail = k === 0 && bw * scale() >= 4;
        var key = v0 + ':' + v1 + ':' + W;
        var top = scroller.scrollTop, height = scroller.clientHeight || 600;
        var r0 = Math.max(0, Math.floor(top / ROW_H) - 20);
        var r1 = Math.min(nrows, Math.ceil((top + height) / ROW_H) + 20);
        for (var r = 0; r < nrows; r++) {
            if (r >= r0 && r < r1) {
                if (drawn[r] !== key) drawRow(r, key, k, detail);
            } else if (drawn[r]) { /* far from view: keep the page light */
                var g = binsG[r];
                while (g.firstChild) g.removeChild(g.firstChild);
                drawn[r] = null;
            }
        }
        drawAxis();
        document.getElementById('tl-note').textContent = nrows + ' threads; ' +
            (detail ? 'detail: bins of ' + fmtNs(bw) + ' (pale) and the exact spans of the ' +
                D.spans.length + ' longest blocked spans of ' + D.spans_total
                : 'each bin of ' + fmtNs(bw) + ' shows what the thread did most in it ' +
                '(paler: nothing took two thirds of it)');
    }
    function redraw() {
        if (!pending) {
            pending = true;
            (window.requestAnimationFrame || setTimeout)(draw);
        }
    }

    function layout() {
        W = Math.max(LABEL_W + 200, scroller.clientWidth || 800);
        svg.setAttribute('width', W);
        labelBg.setAttribute('width', LABEL_W - 4);
        for (var r = 0; r < nrows; r++) {
            rowG[r].firstChild.setAttribute('width', W - LABEL_W + 4);
        }
        drawn = new Array(nrows);
    }

    function setView(a, b) {
        var minSpan = Math.min(dur, Math.max(100, binNs / 64));
        if (b - a < minSpan) {
            var c = (a + b) / 2;
            a = c - minSpan / 2;
            b = c + minSpan / 2;
        }
        if (b - a > dur) {
            a = 0;
            b = dur;
        }
        if (a < 0) {
            b -= a;
            a = 0;
        }
        if (b > dur) {
            a -= b - dur;
            b = dur;
        }
        v0 = Math.max(0, a);
        v1 = b;
        try { /* the address keeps the view: reloading or sharing it shows the same */
            history.replaceState(null, '', '#t=' + Math.round(v0) + ',' + Math.round(v1));
        } catch (e) { /* some browsers refuse it for files */ }
        redraw();
    }
    function zoom(f, at) {
        if (at === undefined) at = (v0 + v1) / 2;
        setView(at - (at - v0) * f, at + (v1 - at) * f);
    }
    function pan(frac) {
        var d = (v1 - v0) * frac;
        setView(v0 + d, v1 + d);
    }

    document.getElementById('z-in').onclick = function () { zoom(0.5); };
    document.getElementById('z-out').onclick = function () { zoom(2); };
    document.getElementById('z-fit').onclick = function () { setView(0, dur); };
    document.getElementById('p-left').onclick = function () { pan(-0.25); };
    document.getElementById('p-right').onclick = function () { pan(0.25); };

    function wheel(e, always) {
        var rect = svg.getBoundingClientRect(), x = e.clientX - rect.left;
        var fits = scroller.scrollHeight <= scroller.clientHeight + 1;
        if (always || e.ctrlKey || e.metaKey || fits) {
            e.preventDefault();
            zoom(Math.exp(Math.max(-3, Math.min(3, e.deltaY * 0.002))), x > LABEL_W ? T(x) : undefined);
        } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
            e.preventDefault();
            pan((e.shiftKey ? e.deltaY : e.deltaX) / Math.max(1, W - LABEL_W));
        }
    }
    scroller.addEventListener('wheel', function (e) { wheel(e, false); }, {passive: false});
    axis.addEventListener('wheel', function (e) { wheel(e, true); }, {passive: false});
    scroller.addEventListener('scroll', redraw);
    window.addEventListener('resize', function () { layout(); redraw(); });

    var drag = null;
    scroller.addEventListener('mousedown', function (e) {
        if (e.button !== 0) return;
        drag = {x: e.clientX, y: e.clientY, v0: v0, v1: v1, top: scroller.scrollTop};
        scroller.classList.add('dragging');
        e.preventDefault();
    });
    window.addEventListener('mousemove', function (e) {
        if (!drag) return;
        var dt = (e.clientX - drag.x) / scale();
        scroller.scrollTop = drag.top - (e.clientY - drag.y);
        setView(drag.v0 - dt, drag.v1 - dt);
    });
    window.addEventListener('mouseup', function () {
        drag = null;
        scroller.classList.remove('dragging');
    });
    scroller.addEventListener('dblclick', function (e) {
        var x = e.clientX - svg.getBoundingClientRect().left;
        zoom(e.shiftKey ? 2 : 0.5, x > LABEL_W ? T(x) : undefined);
    });
    document.addEventListener('keydown', function (e) {
        if (e.target && /INPUT|TEXTAREA|SELECT/.test(e.target.tagName)) return;
        if (e.key === '+' || e.key === '=') zoom(0.5);
        else if (e.key === '-' || e.key === '_') zoom(2);
        else if (e.key === '0') setView(0, dur);
        else if (e.key === 'ArrowLeft') pan(-0.2);
        else if (e.key === 'ArrowRight') pan(0.2);
        else return;
        e.preventDefault();
    });

    /* The tooltip: the thread and what it did at the time under the pointer. */
    function stateAt(r, t) {
        var k = level(), bw = binNs * Math.pow(2, k), rr = runs(r, k), b = Math.floor(t / bw);
        for (var j = 0; j < rr.length; j += 3)
            if (b >= rr[j] && b < rr[j] + rr[j + 1])
                return {s: rr[j + 2] & 63, mixed: rr[j + 2] & 64, from: b * bw, to: (b + 1) * bw};
        return null;
    }
    svg.addEventListener('mousemove', function (e) {
        if (drag) {
            tip.style.display = 'none';
            return;
        }
        var rect = svg.getBoundingClientRect();
        var r = Math.floor((e.clientY - rect.top) / ROW_H), x = e.clientX - rect.left;
        if (r < 0 || r >= nrows) {
            tip.style.display = 'none';
            return;
        }
        var row = rows[r], lines = [row.n + '  (pid ' + row.p + ', tid ' + row.t + ')',
            'alive ' + fmtNs(row.b) + ' \u2013 ' + fmtNs(row.e)];
        var blocked = [];
        row.bl.forEach(function (ns, s) {
            if (s && ns && s !== BUF) blocked.push(STATES[s] + ' ' + fmtNs(ns));
        });
        lines.push('blocked: ' + (blocked.length ? blocked.join(', ') : 'never'));
        if (BUF > 0 && row.bl[BUF]) /* ptt's own wait, not the program's */
            lines.push(LABELS[BUF] + ': ' + fmtNs(row.bl[BUF]));
        if (x > LABEL_W) {
            var t = T(x), found = null, sp = spansOf[r], tol = 3 / scale();
            lines.push('at ' + fmtAt(t) + ':');
            for (var j = 0; j < sp.length; j++)
                if (t >= sp[j][2] - tol && t <= sp[j][2] + sp[j][3] + tol) found = sp[j];
            if (found && found[1] === BUF)
                lines.push('  ' + LABELS[BUF] + ' for ' + fmtNs(found[3]) + ' (from ' + fmtAt(found[2]) + ')');
            else if (found)
                lines.push('  blocked in ' + (D.calls[found[5]] || STATES[found[1]]) + ' on ' +
                    D.span_objects[found[4]] + ' for ' + fmtNs(found[3]) + ' (from ' + fmtAt(found[2]) + ')');
            var st = stateAt(r, t);
            if (st)
                lines.push('  ' + fmtAt(st.from) + ' \u2013 ' + fmtAt(st.to) + ': ' +
                    (st.mixed ? 'mixed, most: ' : 'mostly ') +
                    (st.s && st.s !== BUF ? 'blocked: ' + STATES[st.s] : LABELS[st.s]));
            else if (!found)
                lines.push('  not alive');
        }
        tip.textContent = lines.join('\n');
        tip.style.display = 'block';
        var tx = e.clientX + 14, ty = e.clientY + 14;
        if (tx + tip.offsetWidth > window.innerWidth) tx = e.clientX - tip.offsetWidth - 10;
        if (ty + tip.offsetHeight > window.innerHeight) ty = e.clientY - tip.offsetHeight - 10;
        tip.style.left = tx + 'px';
        tip.style.top = ty + 'px';
    });
    svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });

    /* Contended objects */

    function histSvg(h) {
        var w = 180, hh = 36, base = hh - 11;
        if (!h || h.length < 2) return '';
        var lo = h[0], c = h.slice(1), max = Math.max.apply(null, c);
        var bw = Math.floor((w - 4) / Math.max(c.length, 12));
        var s = '<svg class="hist" width="' + w + '" height="' + hh + '">';
        for (var i = 0; i < c.length; i++) {
            var bh = c[i] ? Math.max(1, Math.round(base * Math.sqrt(c[i] / max))) : 0;
            var a = Math.pow(2, lo + i), b = Math.pow(2, lo + i + 1);
            s += '<rect class="bar" x="' + (2 + i * bw) + '" y="' + (base - bh) + '" width="' +
                (bw - 1) + '" height="' + bh + '"><title>' + esc(fmtNs(a) + ' \u2013 ' + fmtNs(b) +
                ': ' + c[i] + ' wait' + (c[i] === 1 ? '' : 's')) + '</title></rect>';
        }
        s += '<rect x="0" y="' + base + '" width="' + (2 + c.length * bw) + '" height="1" fill="#9aa5b1"/>';
        s += '<text x="1" y="' + (hh - 1) + '">' + esc(fmtNs(Math.pow(2, lo)) + ' \u2013 ' +
            fmtNs(Math.pow(2, lo + c.length))) + '</text></svg>';
        return s;
    }

    var ot = document.getElementById('objects');
    var html = '<thead><tr><th class="n">#</th><th>kind</th><th>object</th><th class="n">acquisitions</th>' +
        '<th class="n">contended</th><th class="n">wait total</th><th class="n">mean</th>' +
        '<th class="n">p50</th><th class="n">p99</th><th class="n">max</th><th class="n">hold total</th>' +
        '<th>wait times (count per power of two, sqrt scale)</th><th>threads</th></tr></thead><tbody>';
    var tot = {acq: 0, cont: 0, wait: 0, hold: 0};
    D.objects.forEach(function (o, i) {
        tot.acq += o.acquisitions;
        tot.cont += o.contended;
        tot.wait += o.wait_ns.total;
        tot.hold += o.hold_ns.total;
        html += '<tr class="obj" data-name="' + esc(o.name) + '" data-kind="' + esc(o.kind) +
            '" data-acquisitions="' + o.acquisitions + '" data-contended="' + o.contended +
            '" data-wait="' + o.wait_ns.total + '"><td class="n">' + (i + 1) + '</td><td class="kind">' + (STATES.indexOf(o.kind) > 0 ?
            '<i class="legend-dot s' + STATES.indexOf(o.kind) + '"></i>' : '') + esc(o.kind) + '</td><td class="name" title="' + esc(o.address + ' in pid ' + o.pid) + '">' +
            esc(o.name) + '</td><td class="n">' + o.acquisitions + '</td><td class="n">' + o.contended +
            ' <span class="note">(' + pct(o.contended, o.acquisitions) + ')</span></td><td class="n">' +
            fmtNs(o.wait_ns.total) + '</td><td class="n">' + fmtNs(o.wait_ns.mean) + '</td><td class="n">' +
            fmtNs(o.wait_ns.p50) + '</td><td class="n">' + fmtNs(o.wait_ns.p99) + '</td><td class="n">' +
            fmtNs(o.wait_ns.max) + '</td><td class="n">' + (o.hold_ns.count ? fmtNs(o.hold_ns.total) : '-') +
            '</td><td>' + histSvg(o.h) + '</td><td>' + esc(o.threads.join(', ') +
            (o.more_threads ? ' +' + o.more_threads : '')) + '</td></tr>';
    });
    html += '</tbody><tfoot><tr class="total"><td></td><td colspan="2">total of these ' + D.objects.length +
        '</td><td class="n">' + tot.acq + '</td><td class="n">' + tot.cont + '</td><td class="n">' +
        fmtNs(tot.wait) + '</td><td colspan="4"></td><td class="n">' + fmtNs(tot.hold) +
        '</td><td colspan="2"></td></tr></tfoot>';
    ot.innerHTML = html;
    document.getElementById('obj-note').textContent = D.nobjects ? 'The ' + D.objects.length + ' of ' +
        D.nobjects + ' objects the threads waited for longest in all (as ptt stat sorts them). ' +
        'Contended: acquisitions that had to wait (condvar and barrier waits always do).'
        : 'No mutex, rwlock, spinlock, semaphore, condvar or barrier was used.';

    /* Who made others wait: the holders the waiting for the objects above was charged to. */

    var B = D.blame || [], bt = document.getElementById('blame');
    html = '<thead><tr><th>object</th><th>kind</th><th>holder</th><th class="n">tid</th>' +
        '<th>took it at</th><th>released it at</th><th class="n">waits</th>' +
        '<th class="n">wait charged</th></tr></thead><tbody>';
    B.forEach(function (b) {
        html += '<tr class="blame" data-object="' + esc(b.object) + '" data-tid="' + b.tid +
            '" data-taken="' + esc(b.taken_at) + '" data-released="' + esc(b.released_at) +
            '" data-held-at-end="' + b.held_at_end + '" data-waits="' + b.waits + '" data-wait="' +
            b.wait_ns + '"><td class="name">' + esc(b.object) + '</td><td class="kind">' +
            esc(b.kind) + '</td><td class="name">' + (b.tid ? esc(b.holder) : 'unknown') +
            '</td><td class="n">' + (b.tid || '') + '</td><td class="name">' + esc(b.taken_at || '?') +
            '</td><td class="name">' + (b.held_at_end ? '<i>still held at the end</i>' :
            esc(b.released_at || '?')) + '</td><td class="n">' + b.waits + '</td><td class="n">' +
            fmtNs(b.wait_ns) + '</td></tr>';
    });
    html += '</tbody>';
    if (D.nblame > B.length)
        html += '<tfoot><tr><td colspan="8" class="note">' + (D.nblame - B.length) +
            ' more, charged less</td></tr></tfoot>';
    bt.innerHTML = html;
    document.getElementById('blame-note').textContent = B.length ?
        'The time threads waited for the locks above, charged to the threads that held them ' +
        'meanwhile (split between the readers of a rwlock), by where they took and released ' +
        'them (as ptt stat says). Waits: the waits each made, a wait counted once per holder.' :
        'No thread waited for a mutex, rwlock or spinlock.';

    /* Blocked time per thread: a bar each, split by what it was blocked on. */

    var TS = D.thread_stats, chart = document.getElementById('blocked-chart');
    var shown = TS.filter(function (t) { return t.blocked_ns > 0; }).slice(0, 30);
    var cw = Math.max(600, (chart.parentNode.clientWidth || 900) - 10), bh = 18;
    chart.setAttribute('width', cw);
    chart.setAttribute('height', Math.max(1, shown.length) * bh + 4);
    var maxB = shown.length ? shown[0].blocked_ns : 1, plotW = cw - LABEL_W - 150;
    shown.forEach(function (t, i) {
        var g = el('g', {class: 'bar', transform: 'translate(0,' + (i * bh + 2) + ')',
            'data-name': t.name, 'data-blocked': t.blocked_ns}, chart);
        var lab = el('text', {x: 4, y: 12}, g);
        lab.textContent = t.name.length > 26 ? t.name.slice(0, 25) + '\u2026' : t.name;
        var x = LABEL_W, rest = t.blocked_ns;
        t.blocked_on.forEach(function (o) {
            var w = plotW * o.ns / maxB;
            var r = el('rect', {class: 's' + o.state, x: x, y: 2, width: Math.max(w, 0.5), height: bh - 5}, g);
            el('title', {}, r).textContent = t.name + ': ' + o.call + ' ' + o.object + ', ' + fmtNs(o.ns);
            x += w;
            rest -= o.ns;
        });
        if (rest > 0) {
            var r = el('rect', {class: 'rest', x: x, y: 2, width: plotW * rest / maxB, height: bh - 5}, g);
            el('title', {}, r).textContent = t.name + ': blocked on other objects, ' + fmtNs(rest);
            x += plotW * rest / maxB;
        }
        var v = el('text', {class: 'v', x: x + 5, y: 12}, g);
        v.textContent = fmtNs(t.blocked_ns) + ' (' + pct(t.blocked_ns, t.lifetime_ns) + ' of its life)';
    });
    document.getElementById('thr-note').textContent = shown.length ?
        'The ' + shown.length + ' threads blocked longest; colours: what they were blocked in ' +
        '(the legend above), grey: on other objects.' : 'No thread was ever blocked.';

    var tt = document.getElementById('threads');
    html = '<thead><tr><th>thread</th><th class="n">pid</th><th class="n">tid</th><th class="n">lifetime</th>' +
        '<th class="n">blocked</th><th class="n">of its life</th><th>blocked on (most)</th></tr></thead><tbody>';
    TS.forEach(function (t) {
        html += '<tr class="thr" data-name="' + esc(t.name) + '" data-blocked="' + t.blocked_ns +
            '"><td class="name">' + esc(t.name) + '</td><td class="n">' + t.pid + '</td><td class="n">' +
            t.tid + '</td><td class="n">' + fmtNs(t.lifetime_ns) + '</td><td class="n">' +
            fmtNs(t.blocked_ns) + '</td><td class="n">' + pct(t.blocked_ns, t.lifetime_ns) + '</td><td>' +
            t.blocked_on.map(function (o) {
                return '<i class="legend-dot s' + o.state + '"></i>' + esc(o.call + ' ' + o.object + ' (' +
                    fmtNs(o.ns) + ')');
            }).join('<br>') + '</td></tr>';
    });
    html += '</tbody>';
    if (D.nthreads > TS.length)
        html += '<tfoot><tr><td colspan="7" class="note">' + (D.nthreads - TS.length) +
            ' more threads, blocked less</td></tr></tfoot>';
    tt.innerHTML = html;

    /* A view to start with, from the address: report.html#t=FROM,TO (ns since the start). */
    var m = /[#&]t=([0-9.e+]+),([0-9.e+]+)/.exec(location.hash || '');
    if (m && Number(m[2]) > Number(m[1])) setView(Number(m[1]), Number(m[2]));
    pending = false;
    layout();
    draw();
})();
