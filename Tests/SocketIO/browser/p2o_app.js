// What the P2O web app's socket module does (src/redux/modules/socket.js, socket.io-client
// ^1.4.5), written anew for the browser tests: a tiny store with the same state and actions, and the
// socket handlers that dispatch them. Everything is reported through window.p2o (p2o_hooks.js).
(function () {
  'use strict';
  var report = window.p2o.report;
  var params = new URLSearchParams(location.search);
  var url = params.get('url');
  var id = params.get('button');
  var pollingOnly = params.get('transports') === 'polling';
  // Off by default: a reducer error is rethrown, as it would leave the app's handler, into the
  // socket.io client that called it. With contain=1 it is only reported.
  var containErrors = params.get('contain') === '1';

  var CONNECTING = 'CONNECTING';
  var CONNECTION_SUCCESS = 'CONNECTION_SUCCESS';
  var CONNECTION_FAILED = 'CONNECTION_FAILED';
  var REGISTERING = 'REGISTERING';
  var REGISTRATION_SUCCES = 'REGISTRATION_SUCCES';  // sic: the app's action names
  var REGISTRATION_SUCCES_NO_BUTTON = 'REGISTRATION_SUCCES_NO_BUTTON';
  var REGISTRATION_FAILED = 'REGISTRATION_FAILED';
  var RECEIVE_BUTTON_PRESS = 'RECEIVE_BUTTON_PRESS';

  var state = {
    connecting: false, connected: false, registering: false, registered: false,
    message: '', listeningTo: null, button: {}
  };

  function assign(target) {
    for (var i = 1; i < arguments.length; i++) {
      for (var key in arguments[i]) target[key] = arguments[i][key];
    }
    return target;
  }

  function reducer(previous, action) {
    switch (action.type) {
      case CONNECTING:
        return assign({}, previous, {connecting: true});
      case CONNECTION_SUCCESS:
        return assign({}, previous, {connecting: false, connected: true});
      case CONNECTION_FAILED:
        return assign({}, previous, {connecting: false, connected: false, message: action.message});
      case REGISTERING:
        return assign({}, previous, {registering: true});
      case REGISTRATION_SUCCES:
        return assign({}, previous, {registering: false, registered: true,
                                     button: action.button, listeningTo: action.button.id});
      case REGISTRATION_SUCCES_NO_BUTTON:
        return assign({}, previous, {registering: false, registered: true, listeningTo: action.id});
      case REGISTRATION_FAILED:
        return assign({}, previous, {registering: false, registered: false, message: action.message});
      case RECEIVE_BUTTON_PRESS:
        // Like the app: the press time goes on the registered button's history, and its count
        // goes up. After a registration without a button, `button` is {} with no history, so this
        // throws a TypeError, as the app does.
        previous.button.history.push(new Date().toString());
        return assign({}, previous, {button: assign({}, previous.button, {count: previous.button.count + 1})});
      default:
        return previous;
    }
  }

  function dispatch(action) {
    report('action', {type: action.type});
    try {
      state = reducer(state, action);
    } catch (err) {
      report('error', {kind: 'reducer', action: action.type, message: String(err && err.message || err)});
      if (!containErrors) throw err;
    }
    return action;
  }

  function transportName() {
    var engine = socket && socket.io && socket.io.engine;
    return engine && engine.transport ? engine.transport.name : null;
  }

  function errorText(err) {
    if (err && typeof err === 'object') {
      return String(err.message || err) + (err.description !== undefined ? ' (' + String(err.description) + ')' : '');
    }
    return String(err);
  }

  report('page', {origin: location.origin, url: url, button: id, transports: pollingOnly ? 'polling' : 'default'});
  dispatch({type: CONNECTING});
  var socket = io.connect(url, pollingOnly ? {transports: ['polling'], upgrade: false} : {});

  // One Manager 'open' per engine that completed its handshake; watch that engine's upgrade.
  socket.io.on('open', function () {
    var engine = socket.io.engine;
    window.p2o.countHandshake('opens');
    report('open', {sid: engine.id, transport: transportName()});
    engine.on('upgrade', function (transport) {
      report('upgrade', {transport: transport && transport.name || transportName()});
    });
    engine.on('upgradeError', function (err) {
      report('error', {kind: 'upgradeError', message: errorText(err)});
    });
  });

  socket.on('connect', function () { report('connect', {transport: transportName()}); });
  socket.on('disconnect', function (reason) { report('disconnect', {reason: String(reason), transport: transportName()}); });
  ['connect_error', 'connect_timeout', 'error', 'reconnect_error', 'reconnect_failed'].forEach(function (name) {
    socket.on(name, function (err) { report('error', {kind: name, message: errorText(err)}); });
  });
  socket.on('reconnect_attempt', function (n) { report('reconnect_attempt', {attempt: n}); });
  socket.on('reconnect', function (n) { report('reconnect', {attempt: n}); });

  socket.on('connection-response', function (data) {
    report('connection-response', {data: data});
    if (data && data.status === 'success') {
      dispatch({type: CONNECTION_SUCCESS});
      socket.emit('register', id);
      dispatch({type: REGISTERING});
    } else {
      dispatch({type: CONNECTION_FAILED, message: data && data.error});
    }
  });

  socket.on('register-response', function (data) {
    report('register-response', {data: data});
    if (data && data.status === 'success') {
      if (data.button) {
        dispatch({type: REGISTRATION_SUCCES, button: data.button});
      } else {
        dispatch({type: REGISTRATION_SUCCES_NO_BUTTON, id: id});
      }
      report('registered', {state: state});
    } else {
      dispatch({type: REGISTRATION_FAILED, message: data && data.error});
    }
  });

  socket.on('button-press', function (data) {
    var transport = transportName();
    try {
      dispatch({type: RECEIVE_BUTTON_PRESS, id: data});
    } finally {
      // Reported even when the reducer threw (then after its error), with the count it left.
      var count = state.button ? state.button.count : undefined;
      report('button-press', {data: data, count: count === undefined ? null : count, transport: transport});
    }
  });

  window.p2o.state = function () { return JSON.parse(JSON.stringify(state)); };
})();
