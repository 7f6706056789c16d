/* The script of ptt runs report (embedded by src/export/report_embed.cmake; see docs/runs.md).
 * It reads the data the command wrote into the page (#runs-data) and draws the runs, the
 * filters and the comparison table. The filters are kept in the page's address after '#'
 * (status=FAIL,TIMEOUT&name=cond&runs=1,2&differs=1), so that a view can be bookmarked or
 * passed on. No library, nothing fetched. */
(function () {
    'use strict';
    var D = JSON.parse(document.getElementById('runs-data').textContent);
    var main = document.getElementById('main');
    var FAILURES = {};
    D.failures.forEach(function (s) { FAILURES[s] = true; });

    function esc(s) {
        return String(s).replace(/[&<>"']/g, function (c) {
            return '&#' + c.charCodeAt(0) + ';';
        });
    }
    function secs(s) {
        if (s === null || s === undefined) return '';
        return s < 1 ? (s * 1000).toFixed(1) + ' ms' : s.toFixed(2) + ' s';
    }
    function cls(status) {
        if (status === null) return 'st-none';
        if (status === 'PASS') return 'st-pass';
        return FAILURES[status] ? 'st-fail' : 'st-other';
    }

    /* The statuses present, in the order of the first run's counts, then the rest. */
    var STATUSES = [];
    D.tests.forEach(function (t) {
        t.statuses.forEach(function (s) {
            if (s !== null && STATUSES.indexOf(s) < 0) STATUSES.push(s);
        });
    });
    STATUSES.sort(function (a, b) {
        return (a === 'PASS' ? -1 : b === 'PASS' ? 1 : 0) ||
            (FAILURES[b] ? 1 : 0) - (FAILURES[a] ? 1 : 0) || (a < b ? -1 : a > b ? 1 : 0);
    });

    /* The filters: from the address, else everything. */
    var F = {status: {}, name: '', runs: {}, differs: false};
    function readHash() {
        var h = {};
        location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
            var i = kv.indexOf('=');
            if (i > 0) h[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
        });
        var st = h.status ? h.status.split(',') : STATUSES;
        F.status = {};
        st.forEach(function (s) { F.status[s] = true; });
        F.name = h.name || '';
        var rs = h.runs ? h.runs.split(',') : D.runs.map(function (r) { return String(r.id); });
        F.runs = {};
        rs.forEach(function (r) { F.runs[r] = true; });
        F.differs = h.differs === '1';
    }
    function writeHash() {
        var st = STATUSES.filter(function (s) { return F.status[s]; });
        var rs = D.runs.filter(function (r) { return F.runs[r.id]; }).map(function (r) { return r.id; });
        var parts = [];
        if (st.length !== STATUSES.length) parts.push('status=' + encodeURIComponent(st.join(',')));
        if (F.name) parts.push('name=' + encodeURIComponent(F.name));
        if (rs.length !== D.runs.length) parts.push('runs=' + rs.join(','));
        if (F.differs) parts.push('differs=1');
        history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname);
    }

    /* The runs shown: their columns. */
    function shown() {
        var idx = [];
        D.runs.forEach(function (r, i) { if (F.runs[r.id]) idx.push(i); });
        return idx;
    }
    /* Whether the test's status differs between the runs shown (absent counts as a status). */
    function differs(t, idx) {
        for (var k = 1; k < idx.length; k++)
            if (t.statuses[idx[k]] !== t.statuses[idx[0]]) return true;
        return false;
    }
    function matches(t, idx) {
        if (F.name && t.test.toLowerCase().indexOf(F.name.toLowerCase()) < 0) return false;
        if (F.differs && !differs(t, idx)) return false;
        return idx.some(function (i) { return t.statuses[i] !== null && F.status[t.statuses[i]]; });
    }

    function runsTable() {
        var h = '<table class="grid" id="runs"><thead><tr><th class="n">id</th><th>run</th>' +
            '<th>date</th><th>machine</th><th>format</th><th class="n">tests</th>' +
            '<th class="n">failures</th><th>results</th><th>command</th></tr></thead><tbody>';
        D.runs.forEach(function (r) {
            var counts = Object.keys(r.counts).map(function (s) {
                return '<span class="' + cls(s) + '">' + r.counts[s] + ' ' + esc(s) + '</span>';
            }).join(', ');
            h += '<tr><td class="n">' + r.id + '</td><td class="name">' + esc(r.name) + '</td><td class="date">' +
                esc(r.date) + '</td><td>' + esc(r.machine) + '</td><td>' + esc(r.format) +
                '</td><td class="n">' + r.tests + '</td><td class="n">' + r.failures + '</td><td>' +
                counts + '</td><td class="cmd">' + esc(r.command) + '</td></tr>';
        });
        return h + '</tbody></table>';
    }

    function filters() {
        var h = '<form id="filters" onsubmit="return false">' +
            '<fieldset><legend>status</legend>';
        STATUSES.forEach(function (s) {
            h += '<label class="' + cls(s) + '"><input type="checkbox" name="f-status" value="' +
                esc(s) + '"> ' + esc(s) + '</label>';
        });
        h += '<button type="button" id="f-failures">failures only</button>' +
            '<button type="button" id="f-every">every status</button></fieldset>' +
            '<fieldset><legend>runs shown</legend>';
        D.runs.forEach(function (r) {
            h += '<label><input type="checkbox" name="f-run" value="' + r.id + '"> ' + r.id + ' ' +
                esc(r.name) + '</label>';
        });
        h += '</fieldset><fieldset><legend>test</legend><input type="search" id="f-name" ' +
            'placeholder="part of its name" size="30"> <label><input type="checkbox" ' +
            'id="f-differs"> only tests whose status differs between the runs shown</label>' +
            '</fieldset></form>';
        return h;
    }

    function detail(t, idx) {
        var h = '';
        idx.forEach(function (i) {
            var c = t.cells[i];
            if (!c) return;
            h += '<div class="cell"><h4>' + esc(D.runs[i].name) + ': ' + esc(t.statuses[i]) +
                (c.raw && c.raw !== t.statuses[i] ? ' (' + esc(c.raw) + ')' : '') + '</h4>';
            if (c.trace) {
                h += '<p>trace: <code>' + esc(c.trace) + '</code></p>';
                if (c.findings.length) {
                    h += '<ul class="findings">' + c.findings.map(function (f) {
                        return '<li><b>' + esc(f[0]) + '</b>: ' + esc(f[1]) + '</li>';
                    }).join('') + '</ul>';
                } else h += '<p class="note">ptt check found nothing in it.</p>';
            }
            if (c.output) h += '<pre>' + esc(c.output) + (c.cut ? '\n[...]' : '') + '</pre>';
            h += '</div>';
        });
        return h || '<p class="note">Nothing more: it passed in every run shown.</p>';
    }

    function draw() {
        var idx = shown();
        var h = '<thead><tr><th>test</th>';
        idx.forEach(function (i) {
            h += '<th class="run" data-run="' + D.runs[i].id + '">' + esc(D.runs[i].name) + '</th>';
        });
        h += '</tr></thead><tbody>';
        var n = 0;
        D.tests.forEach(function (t, ti) {
            if (!matches(t, idx)) return;
            n++;
            var diff = differs(t, idx);
            h += '<tr class="test' + (diff ? ' differs' : '') + '" data-i="' + ti + '"><td class="name">' +
                (diff ? '<span class="mark" title="its status differs between the runs">\u2260</span> ' : '') +
                esc(t.test) +
                (t.slower ? ' <span class="slower" title="its duration in the last run is more than ' +
                    D.slower_percent + '% above the first">slower</span>' : '') + '</td>';
            idx.forEach(function (i) {
                var s = t.statuses[i];
                h += '<td class="status ' + cls(s) + '" title="' + esc(secs(t.durations[i])) + '">' +
                    (s === null ? '-' : esc(s)) + '</td>';
            });
            h += '</tr>';
        });
        h += '</tbody>';
        document.getElementById('cmp').innerHTML = h;
        document.getElementById('shown').textContent = n;
    }

    function syncForm() {
        document.querySelectorAll('input[name=f-status]').forEach(function (e) {
            e.checked = !!F.status[e.value];
        });
        document.querySelectorAll('input[name=f-run]').forEach(function (e) {
            e.checked = !!F.runs[e.value];
        });
        document.getElementById('f-name').value = F.name;
        document.getElementById('f-differs').checked = F.differs;
    }
    function readForm() {
        F.status = {};
        document.querySelectorAll('input[name=f-status]').forEach(function (e) {
            if (e.checked) F.status[e.value] = true;
        });
        F.runs = {};
        document.querySelectorAll('input[name=f-run]').forEach(function (e) {
            if (e.checked) F.runs[e.value] = true;
        });
        F.name = document.getElementById('f-name').value;
        F.differs = document.getElementById('f-differs').checked;
        writeHash();
        draw();
    }

    main.innerHTML = '<h1>Test runs</h1><p class="note">' + D.runs.length + ' runs of ' +
        esc(D.database) + '; a test is marked \u2260 when its status differs between the runs ' +
        'shown, "slower" when its duration in the last run is more than ' + D.slower_percent +
        '% above the first (--slower). Click a test for its output, its trace and what ptt check found in it.</p>' +
        runsTable() + '<h2>Comparison</h2>' + filters() +
        '<p class="note"><span id="shown"></span> of ' + D.tests.length + ' tests shown</p>' +
        '<div class="tablewrap"><table class="grid" id="cmp"></table></div>' +
        '<section id="detail"></section>';
    readHash();
    syncForm();
    draw();
    document.getElementById('filters').addEventListener('input', readForm);
    document.getElementById('filters').addEventListener('change', readForm);
    document.getElementById('f-failures').addEventListener('click', function () {
        document.querySelectorAll('input[name=f-status]').forEach(function (e) {
            e.checked = !!FAILURES[e.value];
        });
        readForm();
    });
    document.getElementById('f-every').addEventListener('click', function () {
        document.querySelectorAll('input[name=f-status]').forEach(function (e) { e.checked = true; });
        readForm();
    });
    window.addEventListener('hashchange', function () { readHash(); syncForm(); draw(); });
    document.getElementById('cmp').addEventListener('click', function (ev) {
        var tr = ev.target.closest('tr.test');
        if (!tr) return;
        var t = D.tests[Number(tr.getAttribute('data-i'))];
        document.getElementById('detail').innerHTML = '<h2>' + esc(t.test) + '</h2>' + detail(t, shown());
        document.getElementById('detail').scrollIntoView();
    });
})();
