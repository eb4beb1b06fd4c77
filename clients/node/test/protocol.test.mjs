// authd-client against a stand-in daemon: the golden fixtures shared with the Swift and Python
// clients, a newer protocol, and lines no authd should send.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import * as authd from '../index.mjs';
import { fakeDaemon, fixture, hello } from './fake-daemon.mjs';
import { waitFor } from './stack.mjs';

const require = createRequire(import.meta.url);

test('the CommonJS and ES module faces are the same objects', () => {
  const common = require('../index.js');
  const names = Object.keys(common).sort();
  assert.deepEqual(Object.keys(authd).filter((name) => name !== 'default').sort(), names);
  for (const name of names) assert.equal(authd[name], common[name], name);
  assert.equal(authd.default, common);
});

test('a token request is the golden request, and the golden answers come back typed', async () => {
  const daemon = await fakeDaemon((request, write) => {
    if (request.method === 'hello') return hello();
    if (request.params.min_validity === 60) return fixture('result-token').result;
    const error = fixture('error-not-signed-in');
    write({ ...error, id: request.id });
    return undefined;
  });
  try {
    const client = await authd.connect({ profile: 'work', socketPath: daemon.socketPath, clientName: 'fixtures' });
    const token = await client.token({ minValidity: 60 });
    const expected = fixture('request-token');
    const sent = daemon.requests.find((request) => request.method === 'session.token');
    assert.deepEqual({ ...sent, id: expected.id }, expected);
    assert.equal(token.value, fixture('result-token').result.access_token);
    assert.equal(token.expiresAt.getTime(), fixture('result-token').result.expires_at * 1000);
    await assert.rejects(client.token(), (error) =>
      error instanceof authd.NotSignedIn && error.reason === 'not_signed_in' && error.message === fixture('error-not-signed-in').error.message);
    assert.equal(daemon.requests[0].method, 'hello');
    assert.deepEqual(daemon.requests[0].params, { client: 'fixtures', protocol_version: authd.PROTOCOL_VERSION });
    client.close();
  } finally {
    await daemon.close();
  }
});

test('the golden events come through as they are', async () => {
  const names = ['event-initial-session', 'event-signed-in', 'event-token-refreshed', 'event-signed-out', 'event-refresh-failing',
    'event-interactive-sign-in-ended'];
  const daemon = await fakeDaemon((request, write) => {
    if (request.method === 'hello') return hello();
    write({ jsonrpc: '2.0', id: request.id, result: fixture('result-subscribe').result });
    for (const name of names) write(fixture(name));
    return undefined;
  });
  try {
    const client = await authd.connect({ socketPath: daemon.socketPath });
    const seen = [];
    for await (const event of client.events()) {
      seen.push(event);
      if (seen.length === names.length) break;
    }
    assert.deepEqual(seen.map((event) => event.name), names.map((name) => fixture(name).params.event));
    const signedOut = seen[3];
    assert.equal(signedOut.reason, fixture('event-signed-out').params.reason);
    assert.deepEqual(signedOut.status, fixture('event-signed-out').params.status);
    assert.equal(signedOut.afterReconnect, false);
    assert.equal(signedOut.flowId, null);
    const ended = seen[5];
    const endedParams = fixture('event-interactive-sign-in-ended').params;
    assert.deepEqual([ended.flowId, ended.reason, ended.message], [endedParams.flow_id, 'failed', endedParams.message]);
    assert.deepEqual(ended.status, endedParams.status);
    assert.equal(daemon.requests.find((request) => request.method === 'events.subscribe').params.profile, undefined);
    client.close();
  } finally {
    await daemon.close();
  }
});

test('a newer protocol is warned about once per process, and unknown fields are ignored', async () => {
  const daemon = await fakeDaemon((request) => (request.method === 'hello'
    ? hello('2.0', { motd: 'hi', capabilities: ['teleport'] }) : { state: 'signed_out', profile: 'default', future: 1 }));
  const warnings = [];
  const listener = (warning) => { if (warning.name === 'ProtocolVersionWarning') warnings.push(warning.message); };
  process.on('warning', listener);
  try {
    const first = await authd.connect({ socketPath: daemon.socketPath });
    const second = await authd.connect({ socketPath: daemon.socketPath });
    assert.deepEqual(first.daemon.capabilities, ['teleport']);
    assert.equal((await second.status()).state, 'signed_out');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings, ["authd speaks protocol 2.0, newer than this client's 1.0: update the client module (calls may fail)"]);
    first.close();
    second.close();
  } finally {
    process.off('warning', listener);
    await daemon.close();
  }
});

test('lines no authd sends are protocol errors, and the next call starts afresh', async () => {
  let answers = 0;
  const daemon = await fakeDaemon((request, write) => {
    if (request.method === 'hello') return hello();
    answers += 1;
    if (answers === 1) write('this is not json\n');
    else if (answers === 2) write('[1,2]\n');
    else if (answers === 3) write({ jsonrpc: '2.0', id: request.id });
    else if (answers === 4) write('{"jsonrpc":"2.0","id":' + request.id + ',"result":"' + 'x'.repeat((1 << 20) + 10));
    else return { state: 'signed_out', profile: 'default' };
    return undefined;
  });
  try {
    const client = await authd.connect({ socketPath: daemon.socketPath });
    await assert.rejects(client.status(), (error) => error instanceof authd.ProtocolError && /not JSON/.test(error.message));
    await assert.rejects(client.status(), (error) => error instanceof authd.ProtocolError && /not a JSON object/.test(error.message));
    await assert.rejects(client.status(), (error) => error instanceof authd.ProtocolError && /neither result nor error/.test(error.message));
    await assert.rejects(client.status(), (error) => error instanceof authd.ProtocolError && /longer than/.test(error.message));
    assert.equal((await client.status()).state, 'signed_out');
    client.close();
  } finally {
    await daemon.close();
  }
});

test('a refusal on the connection reaches every waiting call with its reason', async () => {
  let waiting = 0;
  const daemon = await fakeDaemon((request, write) => {
    if (request.method === 'hello') return hello();
    // Refused once both calls wait on the connection.
    waiting += 1;
    if (waiting === 2) {
      write({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'authd refused this app: run authctl apps', data: { reason: 'app_denied' } } });
    }
    return undefined;
  });
  try {
    const client = await authd.connect({ socketPath: daemon.socketPath });
    const refused = (error) => error instanceof authd.AccessDenied && error.reason === 'app_denied';
    await Promise.all([assert.rejects(client.token(), refused), assert.rejects(client.status(), refused)]);
    assert.equal(waiting, 2);
    client.close();
  } finally {
    await daemon.close();
  }
});

test('an answer of null is a protocol error, not a crash', async () => {
  const daemon = await fakeDaemon((request, write) => {
    if (request.method === 'hello') return hello();
    write({ jsonrpc: '2.0', id: request.id, result: null });
    return undefined;
  });
  const nullHello = await fakeDaemon((request, write) => {
    write({ jsonrpc: '2.0', id: request.id, result: null });
    return undefined;
  });
  try {
    const client = await authd.connect({ socketPath: daemon.socketPath });
    await assert.rejects(client.token(), (error) => error instanceof authd.ProtocolError && /lacks access_token/.test(error.message));
    client.close();
    await assert.rejects(authd.connect({ socketPath: nullHello.socketPath }), (error) => error instanceof authd.ProtocolError && /hello/.test(error.message));
  } finally {
    await daemon.close();
    await nullHello.close();
  }
});

test('an app that stops reading its events makes the connection stop reading too', async () => {
  let flood = null;
  const daemon = await fakeDaemon((request, write) => {
    if (request.method === 'hello') return hello();
    write({ jsonrpc: '2.0', id: request.id, result: fixture('result-subscribe').result });
    flood = () => { for (let i = 0; i < 5000; i++) write(fixture('event-token-refreshed')); };
    return undefined;
  });
  try {
    const client = await authd.connect({ socketPath: daemon.socketPath });
    const stream = client.events();
    const iterator = stream[Symbol.asyncIterator]();
    const first = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 100));
    flood();
    assert.equal((await first).value.name, 'TOKEN_REFRESHED');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Not reading: the client took in a pause's worth (1,000) and left the rest, about 1 MB, to
    // back up in the kernel and in the daemon's output.
    assert.ok(daemon.pendingOutput() > 0, 'the client read everything although the app did not');
    let read = 1;
    while (read < 5000) { await iterator.next(); read += 1; }
    await waitFor(() => daemon.pendingOutput() === 0, 'the stand-in to have written everything');
    stream.close();
    client.close();
  } finally {
    await daemon.close();
  }
});

test('the sign-in page calls are the golden requests, and the golden answers come back typed', async () => {
  const results = {
    'session.beginInteractiveSignIn': 'result-interactive-sign-in-begin', 'session.cancelInteractiveSignIn': 'result-interactive-sign-in-cancel',
    'session.waitForInteractiveSignIn': 'result-status',
  };
  const daemon = await fakeDaemon((request) => (request.method === 'hello' ? hello() : fixture(results[request.method]).result));
  try {
    const work = await authd.connect({ profile: 'work', socketPath: daemon.socketPath });
    const page = await work.beginInteractiveSignIn({ method: 'email_code', email: 'a@example.com', openBrowser: false });
    const result = fixture('result-interactive-sign-in-begin').result;
    assert.ok(page instanceof authd.SignInPage);
    assert.deepEqual([page.flowId, page.url, page.expiresIn, page.browserOpened], [result.flow_id, result.url, 600, false]);
    assert.equal(await work.cancelInteractiveSignIn(page.flowId), true);
    const plain = await authd.connect({ socketPath: daemon.socketPath });
    assert.deepEqual(await plain.waitForInteractiveSignIn(page.flowId), fixture('result-status').result);
    for (const [method, name] of [['session.beginInteractiveSignIn', 'request-interactive-sign-in-begin'],
      ['session.cancelInteractiveSignIn', 'request-interactive-sign-in-cancel'], ['session.waitForInteractiveSignIn', 'request-interactive-sign-in-wait']]) {
      const expected = fixture(name);
      const sent = daemon.requests.find((request) => request.method === method);
      assert.deepEqual({ ...sent, id: expected.id }, expected, method);
    }
    // The wait came on a connection of its own: a hello right before it, not the client's first.
    const waitAt = daemon.requests.findIndex((request) => request.method === 'session.waitForInteractiveSignIn');
    assert.equal(daemon.requests[waitAt - 1].method, 'hello');
    assert.equal(daemon.requests.filter((request) => request.method === 'hello').length, 3);
    work.close();
    plain.close();
  } finally {
    await daemon.close();
  }
});

test('an aborted wait ends at once, and signInInteractively then closes the page', async () => {
  const daemon = await fakeDaemon((request) => {
    if (request.method === 'hello') return hello();
    if (request.method === 'session.beginInteractiveSignIn') return fixture('result-interactive-sign-in-begin').result;
    if (request.method === 'session.cancelInteractiveSignIn') return fixture('result-interactive-sign-in-cancel').result;
    return undefined;  // the wait: never answered, as for a page nobody uses
  });
  try {
    const client = await authd.connect({ socketPath: daemon.socketPath });
    const controller = new AbortController();
    const reason = new Error('the user closed the window');
    const signingIn = assert.rejects(client.signInInteractively({ openBrowser: false, onOpened: () => {}, signal: controller.signal }),
      (error) => error === reason);
    await waitFor(() => daemon.requests.some((request) => request.method === 'session.waitForInteractiveSignIn'), 'the wait');
    controller.abort(reason);
    await signingIn;
    const cancel = daemon.requests.find((request) => request.method === 'session.cancelInteractiveSignIn');
    assert.deepEqual(cancel.params, { flow_id: fixture('result-interactive-sign-in-begin').result.flow_id });
    // A wait alone, aborted, is only the wait's end: nothing is cancelled for it.
    const alone = new AbortController();
    const waiting = assert.rejects(client.waitForInteractiveSignIn('Pg4Xq2sL9aWmZt7c', { signal: alone.signal }), (error) => error.name === 'AbortError');
    await waitFor(() => daemon.requests.filter((request) => request.method === 'session.waitForInteractiveSignIn').length === 2, 'the second wait');
    alone.abort();
    await waiting;
    assert.equal(daemon.requests.filter((request) => request.method === 'session.cancelInteractiveSignIn').length, 1);
    client.close();
  } finally {
    await daemon.close();
  }
});
