// Loaded before the socket.io bundle: the event list p2o_browser.py drains, and hooks that watch
// what the bundle does on the wire. The WebSocket hook must be in place before the bundle loads,
// since engine.io-client 1.x keeps a reference to the global WebSocket when it is evaluated.
(function () {
  'use strict';
  var events = [];

  // Records one event; the fields are copied through JSON so later changes (the app mutates its
  // state) do not alter what was reported.
  function report(event, fields) {
    var entry = {event: event, ms: Math.round(performance.now())};  // ms since the page started
    for (var key in fields || {}) entry[key] = fields[key];
    try {
      events.push(JSON.parse(JSON.stringify(entry)));
    } catch (err) {
      events.push({event: event, unserializable: String(err)});
    }
  }

  // Engine.IO handshakes are the polling requests without a sid; a reconnect loop shows up as many.
  // Opens are counted by p2o_app.js (the Manager's 'open', once per engine that completed one).
  var counts = {handshakes: 0, opens: 0};
  function countHandshake(what) {
    counts[what] += 1;
    report('handshakes', {count: counts.handshakes, opens: counts.opens});
  }

  window.p2o = {
    report: report,
    countHandshake: countHandshake,
    take: function () { return events.splice(0, events.length); }
  };

  window.addEventListener('error', function (e) {
    report('error', {kind: 'uncaught', message: e.message, source: e.filename, line: e.lineno});
  });
  window.addEventListener('unhandledrejection', function (e) {
    report('error', {kind: 'unhandledrejection', message: String(e.reason)});
  });

  // XHR polling: count handshakes, report every answer that is not 200 (status 0: the request
  // failed, e.g. refused by CORS; the browser's console log then says why).
  var open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url) {
    var xhr = this;
    // the path without its cache-busting t= parameter
    var path = String(url).replace(/^[a-z]+:\/\/[^/]+/i, '')
      .replace(/([?&])t=[^&]*(&|$)/, function (m, before, after) { return after ? before : ''; });
    if (/[?&]transport=polling/.test(path) && !/[?&]sid=/.test(path)) countHandshake('handshakes');
    xhr.addEventListener('loadend', function () {
      if (xhr.status !== 200) {
        report('http', {method: method, path: path, status: xhr.status,
                        body: typeof xhr.response === 'string' ? xhr.response.slice(0, 200) : null});
      }
    });
    return open.apply(this, arguments);
  };

  // WebSocket: report how each one ends (the upgrade's probe socket included).
  var NativeWebSocket = window.WebSocket;
  function TracedWebSocket(url, protocols) {
    var ws = protocols === undefined ? new NativeWebSocket(url) : new NativeWebSocket(url, protocols);
    ws.addEventListener('close', function (e) {
      report('websocket-close', {code: e.code, reason: e.reason, clean: e.wasClean});
    });
    return ws;
  }
  TracedWebSocket.prototype = NativeWebSocket.prototype;
  ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED'].forEach(function (k) { TracedWebSocket[k] = NativeWebSocket[k]; });
  window.WebSocket = TracedWebSocket;
})();
