// The operations console. Everything shown comes from outside (message ids, headers, error texts, bodies):
// it is only ever put on the page as text (textContent, text nodes, attribute values), never as markup.
(function () {
  'use strict';

  const FILTERS = ['queue', 'exception', 'reason', 'parkedAfter', 'parkedBefore', 'messageId'];
  const state = { filters: {}, group: null, replayRunning: false, replayRate: null };

  // ---- DOM helpers: text only ----
  function el(tag, attributes, ...children) {
    const element = document.createElement(tag);
    Object.entries(attributes || {}).forEach(([name, value]) => {
      if (value === undefined || value === null || value === false) {
        return;
      }
      if (name.startsWith('on')) {
        element.addEventListener(name.substring(2), value);
      }
      else {
        element.setAttribute(name, String(value));
      }
    });
    children.flat().forEach((child) => {
      if (child !== undefined && child !== null) {
        element.append(child instanceof Node ? child : document.createTextNode(String(child)));
      }
    });
    return element;
  }

  function replaceRows(table, rows) {
    const body = document.querySelector(table + ' tbody');
    body.replaceChildren(...rows);
  }

  function time(value) {
    return value ? new Date(value).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '';
  }

  function simpleName(className) {
    return className ? className.substring(className.lastIndexOf('.') + 1) : '';
  }

  function showError(message) {
    const error = document.getElementById('error');
    error.textContent = message || '';
    error.hidden = !message;
  }

  // ---- HTTP: reads are GETs, changes are POSTs carrying the CSRF token when Spring Security gave one ----
  function csrfHeaders() {
    const header = document.querySelector('meta[name="csrf-header"]').getAttribute('content');
    const token = document.querySelector('meta[name="csrf-token"]').getAttribute('content');
    if (header && token) {
      return { [header]: token };
    }
    const cookie = document.cookie.split('; ').find((entry) => entry.startsWith('XSRF-TOKEN='));
    return cookie ? { 'X-XSRF-TOKEN': decodeURIComponent(cookie.substring('XSRF-TOKEN='.length)) } : {};
  }

  async function api(method, path, body) {
    const options = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
    if (method !== 'GET') {
      Object.assign(options.headers, { 'Content-Type': 'application/json' }, csrfHeaders());
      options.body = JSON.stringify(body || {});
    }
    const response = await fetch('api/' + path, options);
    if (response.status === 204) {
      return null;
    }
    const text = await response.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    }
    catch (ex) {
      json = null;
    }
    if (!response.ok) {
      throw new Error((json && json.message) || (response.status + ' ' + response.statusText));
    }
    return json;
  }

  function query(parameters) {
    const search = new URLSearchParams();
    Object.entries(parameters).forEach(([name, value]) => {
      if (value !== undefined && value !== null && value !== '') {
        search.append(name, value);
      }
    });
    return search.toString();
  }

  // ---- confirmation dialog ----
  function confirmAction(text, detail) {
    const dialog = document.getElementById('confirm');
    document.getElementById('confirm-text').textContent = text;
    document.getElementById('confirm-detail').textContent = detail || '';
    return new Promise((resolve) => {
      dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
      dialog.returnValue = '';
      dialog.showModal();
    });
  }

  // ---- overview: summary, tiers, listeners, replay ----
  async function refreshOverview() {
    const overview = await api('GET', 'overview');
    state.replayRate = overview.replayRate;
    const parked = (overview.parkingLot.depth === undefined) ? 'unknown' : overview.parkingLot.depth;
    document.getElementById('summary').textContent = 'Parking lot ' + overview.parkingLot.queue + ': ' + parked
      + ' parked · ' + overview.queueType + ' queues · depths read ' + time(overview.depthsReadAt)
      + (overview.depthsFailure ? ' · ' + overview.depthsFailure : '')
      + (overview.missingQueues.length ? ' · missing: ' + overview.missingQueues.join(', ') : '');
    replaceRows('#tiers', overview.tiers.map((tier) => el('tr', {},
      el('td', {}, tier.name), el('td', {}, tier.queue),
      el('td', { class: 'num' }, (tier.depth === undefined) ? '?' : tier.depth),
      el('td', { class: 'num', 'data-scheduled': tier.name }, (tier.scheduled === undefined) ? '–' : tier.scheduled))));
    replaceRows('#listeners', overview.listeners.map((listener) => el('tr', {},
      el('td', {}, listener.listener), el('td', {}, listener.queues.join(', ')),
      el('td', {}, listener.policy || 'defaults'),
      el('td', { class: 'num' }, listener.effectivePolicy.maxRetries),
      el('td', {}, listener.effectivePolicy.delays.join(', ')
        + (listener.effectivePolicy.jitter ? ' (± ' + Math.round(listener.effectivePolicy.jitter * 100) + '% jitter)' : '')),
      el('td', { class: 'class-names' }, listener.effectivePolicy.noRetryOn.map(simpleName).join(', ')),
      backendCell(listener),
      breakerCell(listener))));
    showReplay(overview.replay);
  }

  // Where a listener's retries wait: the tiers or its own queue (the broker), and why.
  function backendCell(listener) {
    const backend = listener.backend;
    if (!backend) {
      return el('td', {}, 'tiers');
    }
    return el('td', { title: backend.reason }, (backend.running || 'not chosen yet')
      + ((backend.requested === 'auto') ? ' (auto)' : ''));
  }

  // A listener's circuit breaker: its state, and a button to pause or resume the listener.
  function breakerCell(listener) {
    const breaker = listener.breaker;
    if (!breaker) {
      return el('td', { class: 'muted' }, 'none');
    }
    let text;
    if (breaker.state === 'closed') {
      text = (breaker.failureRate === undefined)
        ? 'closed (opens at ' + breaker.failureRateThreshold + '% of ' + breaker.slidingWindowSize + ')'
        : 'closed · ' + Math.round(breaker.failureRate) + '% failing, opens at ' + breaker.failureRateThreshold + '%';
    }
    else if (breaker.state === 'open') {
      text = 'open: paused' + (breaker.resumesAt ? ', tries again at ' + time(breaker.resumesAt) : '');
    }
    else if (breaker.state === 'half-open') {
      text = 'half-open: trying ' + breaker.probesInHalfOpenState + ' message(s)';
    }
    else if (breaker.state === 'forced-open') {
      text = 'forced open: paused by an operator since ' + time(breaker.since);
    }
    else {
      text = breaker.state;
    }
    const pause = breaker.state === 'closed';
    return el('td', { class: 'breaker' },
      el('span', { class: 'breaker-state ' + breaker.state }, text),
      el('button', { type: 'button', class: 'secondary', 'data-breaker': pause ? 'pause' : 'resume',
        onclick: () => changeBreaker(listener, pause) }, pause ? 'Pause' : 'Resume'));
  }

  async function changeBreaker(listener, pause) {
    await guarded(async () => {
      const confirmed = await confirmAction((pause ? 'Pause ' : 'Resume ') + listener.listener + '?', pause
        ? 'Its consumers stop taking messages, which wait in ' + listener.queues.join(', ')
          + ': nothing is retried or parked meanwhile. It stays paused until resumed.'
        : 'Its consumers take messages again now.');
      if (confirmed) {
        await api('POST', 'breaker', { listener: listener.listener, state: pause ? 'open' : 'closed' });
        await refreshOverview();
      }
    });
  }

  function showReplay(replay) {
    const section = document.getElementById('replay-section');
    if (!replay) {
      section.hidden = true;
      return;
    }
    section.hidden = false;
    const wasRunning = state.replayRunning;
    state.replayRunning = replay.state === 'running';
    const reasons = Object.entries(replay.stayedByReason).map(([reason, count]) => reason + ': ' + count).join(', ');
    const parts = [
      el('span', { class: 'state ' + replay.state, id: 'replay-state' }, replay.state),
      el('span', { id: 'replay-filter' }, 'of ' + describeFilter(replay.filter)
        + (replay.limit ? ', at most ' + replay.limit : '')),
      el('span', { id: 'replay-moved' }, replay.moved + ' moved'),
      el('span', {}, replay.stayed + ' stayed' + (reasons ? ' (' + reasons + ')' : '')),
      el('span', { class: 'muted' }, 'at most ' + replay.rate + ' per second, started ' + time(replay.startedAt)),
    ];
    if (replay.detail) {
      parts.push(el('span', { class: 'muted' }, replay.detail));
    }
    if (state.replayRunning) {
      parts.push(el('button', { type: 'button', id: 'stop-replay', class: 'danger', onclick: stopReplay }, 'Stop'));
      setTimeout(pollReplay, 1000);
    }
    document.getElementById('replay').replaceChildren(...parts);
    if (wasRunning && !state.replayRunning) {
      refreshAll().catch((ex) => showError(ex.message));
    }
  }

  function describeFilter(filter) {
    const criteria = Object.entries(filter || {}).map(([name, value]) => name + ' ' + value);
    return criteria.length ? criteria.join(', ') : 'every parked message';
  }

  async function pollReplay() {
    try {
      showReplay(await api('GET', 'replay'));
    }
    catch (ex) {
      showError(ex.message);
    }
  }

  async function stopReplay() {
    showReplay(await api('POST', 'replay/stop'));
  }

  // ---- failure groups ----
  async function refreshGroups() {
    const result = await api('GET', 'groups?' + query(state.filters));
    if (state.group && !result.groups.some((group) => group.id === state.group.id)) {
      state.group = null;
    }
    document.getElementById('groups-note').textContent = result.groups.length + ' group(s) among '
      + result.scanned + ' parked message(s) looked at'
      + (result.partial ? ' — partial: the parking lot holds ' + result.depth + ', only the oldest were scanned' : '');
    replaceRows('#groups', result.groups.map((group) => el('tr', {
      'data-group': group.id,
      class: (state.group && state.group.id === group.id) ? 'selected' : null,
    },
    el('td', { class: 'num count' }, group.count),
    el('td', { class: 'queue' }, group.originQueue || '(none)'),
    el('td', {}, el('span', { class: 'badge ' + group.parkedReason }, group.parkedReason)),
    el('td', { class: 'exception', title: group.exception || '' }, simpleName(group.exception)),
    el('td', { class: 'error-text', title: 'Pattern: ' + group.errorPattern }, group.sampleError || ''),
    el('td', {}, time(group.firstParkedAt)),
    el('td', {}, time(group.lastParkedAt)),
    el('td', { class: 'actions' },
      el('button', { type: 'button', class: 'secondary show-messages', onclick: () => showMessages(group) }, 'Messages'),
      el('button', { type: 'button', class: 'replay-group', onclick: () => replayGroup(group) }, 'Replay'),
      el('button', { type: 'button', class: 'danger purge-group', onclick: () => purgeGroup(group) }, 'Purge')))));
    return result;
  }

  function groupFilter(group) {
    return Object.assign({}, state.filters, { group: group.id });
  }

  async function replayGroup(group) {
    await guarded(async () => {
      const preview = await api('POST', 'replay', Object.assign(groupFilter(group), { dryRun: true }));
      const confirmed = await confirmAction('Replay ' + preview.wouldMove + ' message(s) of this group to '
        + (group.originQueue || 'their queue') + '?',
      'At most ' + state.replayRate + ' per second; each is acked in the parking lot only once the broker confirmed '
        + 'it in its queue.' + (preview.wouldStay ? ' ' + preview.wouldStay + ' cannot be replayed (no origin queue).' : ''));
      if (confirmed) {
        showReplay(await api('POST', 'replay', groupFilter(group)));
      }
    });
  }

  async function purgeGroup(group) {
    await guarded(async () => {
      const preview = await api('POST', 'purge', Object.assign(groupFilter(group), { dryRun: true }));
      const confirmed = await confirmAction('Purge ' + preview.matched + ' message(s) of this group for good?',
        'They are deleted from the parking lot and cannot be replayed afterwards.');
      if (confirmed) {
        const result = await api('POST', 'purge', groupFilter(group));
        document.getElementById('groups-note').textContent = result.purged + ' message(s) purged.';
        await refreshAll();
      }
    });
  }

  // ---- messages of a group ----
  async function showMessages(group) {
    state.group = group;
    await guarded(async () => {
      await refreshMessages();
      await refreshGroups();
    });
  }

  async function refreshMessages() {
    const section = document.getElementById('messages-section');
    if (!state.group) {
      section.hidden = true;
      return;
    }
    const group = state.group;
    const result = await api('GET', 'messages?' + query(Object.assign(groupFilter(group), { limit: 200 })));
    section.hidden = false;
    document.getElementById('messages-title').textContent = 'Messages: ' + simpleName(group.exception) + ' on '
      + (group.originQueue || '(no queue)') + ' (' + result.messages.length + ' shown)';
    // A refresh keeps what the operator selected and opened.
    const selected = new Set(selectedIds());
    const opened = new Set(Array.from(document.querySelectorAll('#messages tr.details:not([hidden])'))
      .map((row) => row.getAttribute('data-details-of')));
    const rows = [];
    result.messages.forEach((message) => {
      const id = message.messageId || '';
      const details = el('tr', { class: 'details', 'data-details-of': id, hidden: !(id && opened.has(id)) },
        el('td', { colspan: 7 }, messageDetails(message)));
      rows.push(el('tr', { 'data-message-id': id },
        el('td', {}, el('input', { type: 'checkbox', class: 'select', value: id, checked: Boolean(id) && selected.has(id),
          disabled: !message.messageId, 'aria-label': 'Select' })),
        el('td', { class: 'message-id' }, message.messageId || '(no id)'),
        el('td', {}, time(message.parkedAt)),
        el('td', { class: 'num' }, message.retryCount),
        el('td', { class: 'num' }, message.replays),
        el('td', { class: 'error-text' }, message.error || ''),
        el('td', {}, el('button', { type: 'button', class: 'secondary toggle-details',
          onclick: () => { details.hidden = !details.hidden; } }, 'Details'))));
      rows.push(details);
    });
    replaceRows('#messages', rows);
  }

  function messageDetails(message) {
    const headers = el('dl', {});
    Object.entries(message.headers).forEach(([name, value]) => headers.append(el('dt', {}, name), el('dd', {}, value)));
    const parts = [
      el('h3', {}, 'Headers'), headers,
      el('h3', {}, 'Body (' + message.bodySize + ' bytes' + (message.contentType ? ', ' + message.contentType : '') + ')'),
      el('pre', { class: 'body-preview' }, message.bodyPreview),
    ];
    if (message.stackTrace) {
      parts.push(el('h3', {}, 'Stack trace'), el('pre', { class: 'stack-trace' }, message.stackTrace));
    }
    return parts;
  }

  function selectedIds() {
    return Array.from(document.querySelectorAll('#messages input.select:checked')).map((box) => box.value);
  }

  // A change to the selected messages, one message at a time: first a dry run of each, to say how many
  // messages it touches, then, once confirmed, the change itself.
  async function changeSelection(path, count, question, detail, afterEach) {
    const ids = selectedIds();
    if (!ids.length) {
      return;
    }
    await guarded(async () => {
      let touched = 0;
      for (const id of ids) {
        touched += count(await api('POST', path, { messageId: id, dryRun: true }));
      }
      if (!await confirmAction(question(touched), detail)) {
        return;
      }
      for (const id of ids) {
        await afterEach(await api('POST', path, { messageId: id }));
      }
      await refreshAll();
    });
  }

  function replaySelected() {
    return changeSelection('replay', (preview) => preview.wouldMove,
      (count) => 'Replay ' + count + ' selected message(s) to their queue?',
      'One after the other, each acked in the parking lot once the broker confirmed it in its queue.',
      async (started) => {
        let status = started;
        while (status && status.state === 'running') {
          await new Promise((resolve) => setTimeout(resolve, 200));
          status = await api('GET', 'replay');
        }
        showReplay(status);
      });
  }

  function purgeSelected() {
    return changeSelection('purge', (preview) => preview.matched,
      (count) => 'Purge ' + count + ' selected message(s) for good?',
      'They are deleted from the parking lot and cannot be replayed afterwards.', async () => {});
  }

  // ---- wiring ----
  async function guarded(action) {
    try {
      showError('');
      await action();
    }
    catch (ex) {
      showError(ex.message);
    }
  }

  // ---- trends: retried, parked and replayed per hour of the last 24 hours ----
  const SVG = 'http://www.w3.org/2000/svg';
  const KINDS = ['retried', 'parked', 'replayed'];

  function svg(tag, attributes, ...children) {
    const element = document.createElementNS(SVG, tag);
    Object.entries(attributes || {}).forEach(([name, value]) => element.setAttribute(name, String(value)));
    children.forEach((child) => element.append(child instanceof Node ? child : document.createTextNode(String(child))));
    return element;
  }

  function sum(values) {
    return values.reduce((total, value) => total + value, 0);
  }

  async function refreshTrends() {
    const trends = await api('GET', 'trends');
    const select = document.getElementById('trends-listener');
    const chosen = select.value;
    const keys = trends.series.map((series) => series.queue);
    select.replaceChildren(el('option', { value: '' }, 'all listeners'),
      ...trends.series.map((series) => el('option', { value: series.queue, selected: series.queue === chosen },
        (series.listener || '(no listener)') + ' · ' + series.queue)));
    const shown = keys.includes(chosen) ? trends.series.find((series) => series.queue === chosen) : trends.total;
    drawTrends(trends.hours, shown);
    replaceRows('#trends', trends.series.map((series) => el('tr', { 'data-queue': series.queue },
      el('td', {}, series.listener || '(no listener)'), el('td', {}, series.queue),
      ...KINDS.map((kind) => el('td', { class: 'num ' + kind }, sum(series[kind]))))));
  }

  // Stacked bars, one per hour: retried at the bottom, then parked, then replayed. Every text is a text node.
  function drawTrends(hours, series) {
    const width = 720;
    const height = 160;
    const left = 36;
    const bottom = 18;
    const slot = (width - left) / hours.length;
    const totals = hours.map((hour, index) => sum(KINDS.map((kind) => series[kind][index])));
    const max = Math.max(1, ...totals);
    const scale = (height - bottom - 8) / max;
    const chart = svg('svg', { viewBox: '0 0 ' + width + ' ' + height, preserveAspectRatio: 'none' });
    chart.append(svg('line', { x1: left, y1: height - bottom, x2: width, y2: height - bottom }),
      svg('text', { x: 0, y: 12 }, max), svg('text', { x: 0, y: height - bottom }, 0));
    hours.forEach((hour, index) => {
      let y = height - bottom;
      const x = left + index * slot + 2;
      KINDS.forEach((kind) => {
        const count = series[kind][index];
        if (count > 0) {
          const barHeight = Math.max(1, count * scale);
          y -= barHeight;
          chart.append(svg('rect', { class: kind, x: x, y: y, width: Math.max(1, slot - 4), height: barHeight,
            'data-hour': hour, 'data-count': count }, svg('title', {}, time(hour) + ': ' + count + ' ' + kind)));
        }
      });
      if (index % 3 === 0) {
        chart.append(svg('text', { x: x, y: height - 4 }, new Date(hour).toISOString().substring(11, 16)));
      }
    });
    document.getElementById('trends-chart').replaceChildren(chart);
  }

  document.getElementById('trends-listener').addEventListener('change', () => guarded(refreshTrends));

  async function refreshAll() {
    await refreshOverview();
    await refreshTrends();
    await refreshGroups();
    await refreshMessages();
  }

  document.getElementById('filters').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    state.filters = {};
    FILTERS.forEach((name) => {
      const value = String(form.get(name) || '').trim();
      if (value) {
        state.filters[name] = value;
      }
    });
    state.group = null;
    guarded(refreshAll);
  });
  document.getElementById('clear-filters').addEventListener('click', () => {
    document.getElementById('filters').reset();
    state.filters = {};
    state.group = null;
    guarded(refreshAll);
  });
  document.getElementById('close-messages').addEventListener('click', () => {
    state.group = null;
    guarded(refreshAll);
  });
  document.getElementById('select-all').addEventListener('change', (event) => {
    document.querySelectorAll('#messages input.select:not(:disabled)').forEach((box) => {
      box.checked = event.target.checked;
    });
  });
  document.getElementById('replay-selected').addEventListener('click', replaySelected);
  document.getElementById('purge-selected').addEventListener('click', purgeSelected);

  guarded(refreshAll);
  setInterval(() => {
    if (!document.getElementById('confirm').open) {
      refreshOverview().then(refreshTrends).catch((ex) => showError(ex.message));
    }
  }, 5000);
}());
