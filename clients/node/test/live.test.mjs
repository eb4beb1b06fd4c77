// authd-client against a live authd and development server (the real binaries, real socket, real keyring).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createConnection } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import util from 'node:util';
import * as authd from '../index.mjs';
import { privateDirectory, waitFor, withStack } from './stack.mjs';

const MODULE = fileURLToPath(new URL('../index.mjs', import.meta.url));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('a token, the status, and no token in anything printed', async () => {
  await withStack({}, async (stack) => {
    await stack.startDaemon();
    await stack.signUpAndIn('node-token@example.com', 'node-token-password');
    const client = await authd.connect({ socketPath: stack.socket });
    assert.ok(client.daemon.capabilities.includes('events'));
    const token = await client.token({ minValidity: 60 });
    assert.equal(token.value.split('.').length, 3);
    assert.equal(token.authorization, 'Bearer ' + token.value);
    assert.ok(token.expiresAt.getTime() > Date.now() + 60000);
    for (const shown of [util.inspect(token), String(token), JSON.stringify(token), util.inspect({ token }), `${token}`]) {
      assert.ok(!shown.includes(token.value), `the token shows in ${shown}`);
    }
    const status = await client.status();
    assert.equal(status.state, 'signed_in');
    assert.equal(status.user.email, 'node-token@example.com');
    assert.ok(!JSON.stringify(status).includes(token.value));
    assert.ok(!stack.output().includes(token.value));
    client.close();
  });
});

test('typed errors say what to do', async () => {
  await withStack({}, async (stack) => {
    await assert.rejects(authd.connect({ socketPath: stack.socket }), (error) =>
      error instanceof authd.DaemonUnavailable && error.transient && error.exitStatus === 3
        && /systemctl --user enable --now authd.socket/.test(error.message));
    await stack.startDaemon();
    await assert.rejects(authd.connect({ profile: 'nope', socketPath: stack.socket }), (error) =>
      error instanceof authd.UnknownProfile && error.exitStatus === 1 && /authctl profile add nope/.test(error.message));
    const client = await authd.connect({ profile: stack.profile, socketPath: stack.socket });
    await assert.rejects(client.token(), (error) =>
      error instanceof authd.NotSignedIn && error instanceof authd.AuthdError && error.reason === 'not_signed_in'
        && !error.transient && error.exitStatus === 4 && /authctl login/.test(error.message));
    await assert.rejects(client.token({ minValidity: -1 }), (error) =>
      error instanceof authd.Rejected && /min_validity' must not be negative/.test(error.message));
    client.close();
  });
});

test('overlapping calls on one client are each answered', async () => {
  await withStack({}, async (stack) => {
    await stack.startDaemon();
    await stack.signUpAndIn('node-overlap@example.com', 'node-overlap-password');
    const client = await authd.connect({ socketPath: stack.socket });
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 5 === 0 ? client.status() : client.token())));
    const tokens = new Set(answers.filter((answer) => answer instanceof authd.Token).map((token) => token.value));
    assert.equal(tokens.size, 1);
    assert.equal(answers.filter((answer) => !(answer instanceof authd.Token) && answer.state === 'signed_in').length, 10);
    client.close();
  });
});

test('a connection authd closed as idle is opened again', async () => {
  await withStack({}, async (stack) => {
    await stack.startDaemon('--idle-timeout', '1');
    await stack.signUpAndIn('node-idle@example.com', 'node-idle-password');
    const client = await authd.connect({ socketPath: stack.socket });
    const first = await client.token();
    await sleep(1600); // authd has sent idle_timeout and closed the connection by now
    assert.equal((await client.token()).value, first.value);
    assert.match(stack.output(), /closing an idle connection/);
    client.close();
  });
});

test('a script that never closes its client still ends', async () => {
  await withStack({}, async (stack) => {
    await stack.startDaemon();
    await stack.signUpAndIn('node-script@example.com', 'node-script-password');
    const script = `import { connect } from ${JSON.stringify(MODULE)};
      const client = await connect({ socketPath: process.argv[1] });
      console.log((await client.token()).expiresAt.toISOString());`;
    const started = Date.now();
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, stack.socket], { encoding: 'utf8', timeout: 20000 });
    assert.equal(run.status, 0, `the script did not end by itself: ${run.signal} ${run.stderr}`);
    assert.match(run.stdout, /^\d{4}-\d\d-\d\dT/);
    assert.ok(Date.now() - started < 20000);
  });
});

test('events follow a sign-in and survive a daemon restart', async () => {
  await withStack({}, async (stack) => {
    await stack.startDaemon();
    const client = await authd.connect({ socketPath: stack.socket });
    const stream = client.events();
    const seen = [];
    const reading = (async () => { for await (const event of stream) seen.push(event); })();
    await waitFor(() => seen.some((event) => event.name === 'INITIAL_SESSION'), 'INITIAL_SESSION');
    assert.equal(seen[0].status.state, 'signed_out');
    assert.equal(seen[0].afterReconnect, false);
    await stack.signUpAndIn('node-events@example.com', 'node-events-password');
    await waitFor(() => seen.some((event) => event.name === 'SIGNED_IN'), 'SIGNED_IN');

    await stack.stopDaemon();
    await stack.startDaemon();
    await waitFor(() => seen.some((event) => event.name === 'INITIAL_SESSION' && event.afterReconnect), 'INITIAL_SESSION after the restart');
    const again = seen.find((event) => event.afterReconnect);
    assert.equal(again.status.state, 'signed_in');
    assert.equal(again.status.user.email, 'node-events@example.com');
    // The request connection broke with the first daemon; the next call reconnects by itself.
    assert.equal((await client.token()).value.split('.').length, 3);
    stream.close();
    await Promise.race([reading, sleep(5000).then(() => assert.fail('close() did not end the event stream'))]);
    client.close();
  });
});

// Counts the bytes each connection sends (shared with the Swift, Python and C tests).
const COUNTING_SERVER = fs.readFileSync(fileURLToPath(new URL('../../../Tests/EndToEndTests/Helpers/counting-server.py', import.meta.url)), 'utf8');

async function countingServer(asUid) {
  const directory = privateDirectory('authd-node-foreign-');
  fs.chmodSync(directory, 0o755);
  const run = path.join(directory, 'run');
  fs.mkdirSync(run);
  let prefix = [];
  if (asUid !== undefined) {
    fs.chownSync(run, asUid, asUid);
    prefix = ['setpriv', `--reuid=${asUid}`, `--regid=${asUid}`, '--clear-groups'];
  }
  const socketPath = path.join(run, 'authd.sock');
  const log = path.join(run, 'received');
  const argv = [...prefix, '/usr/bin/python3', '-c', COUNTING_SERVER, socketPath, log];
  const child = spawn(argv[0], argv.slice(1), { env: { PATH: '/usr/bin:/bin' }, stdio: 'ignore' });
  await waitFor(() => fs.existsSync(socketPath), 'the counting server');
  const received = async (atLeast) => {
    let counts = [];
    await waitFor(() => {
      counts = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map(Number) : [];
      return counts.length >= atLeast;
    }, `${atLeast} closed connections`, 10000);
    return counts;
  };
  // One connection of our own, sending nothing: the client under test never connects, so this
  // is the only one the server counts.
  const probe = async () => {
    await new Promise((resolve, reject) => {
      const socket = createConnection({ path: socketPath }, () => { socket.end(); resolve(); });
      socket.on('error', reject);
    });
  };
  const close = async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(directory, { recursive: true, force: true });
  };
  return { socketPath, received, probe, close };
}

test('a socket of another user is sent nothing', { skip: process.getuid() !== 0 && 'needs root to serve a socket as another user' }, async () => {
  const server = await countingServer(65534);
  try {
    await assert.rejects(authd.connect({ socketPath: server.socketPath }), (error) =>
      error instanceof authd.ForeignDaemon && error.uid === 65534 && error.expectedUid === 0 && error.path === server.socketPath
        && !error.transient && /belongs to uid 65534, not to you/.test(error.message));
    await server.probe();
    assert.deepEqual(await server.received(1), [0], 'the client connected to another user\'s socket');
  } finally {
    await server.close();
  }
});

test('who owns the socket is checked before anything is sent', async (t) => {
  const server = await countingServer();
  const realGetuid = process.getuid;
  try {
    // Served by us; this process pretends to be another user, as if the socket were not ours.
    process.getuid = () => realGetuid() + 1;
    await assert.rejects(authd.connect({ socketPath: server.socketPath }), (error) =>
      error instanceof authd.ForeignDaemon && error.uid === realGetuid() && error.expectedUid === realGetuid() + 1);
    process.getuid = realGetuid;
    await server.probe();
    assert.deepEqual(await server.received(1), [0]);
  } finally {
    process.getuid = realGetuid;
    await server.close();
  }
});

// authd's own sign-in page, walked by a scripted stand-in for the user's browser (shared with the
// Swift, Python and C tests): given the page's address, or as authd's $BROWSER.
const BROWSER = fileURLToPath(new URL('../../../Tests/EndToEndTests/Helpers/sign-in-page-browser.py', import.meta.url));

/** A file holding `password`, for the stand-in browser (never on a command line). */
function passwordFile(stack, password) {
  const file = path.join(stack.directory, 'password');
  fs.writeFileSync(file, password + '\n', { mode: 0o600 });
  return file;
}

/** The stand-in browser's run on `url`: its exit status and the heading it ended on (never the address). */
function browse(url, ...args) {
  return new Promise((resolve) => {
    const child = spawn('python3', [BROWSER, url, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => { out += chunk; });
    child.stderr.on('data', (chunk) => { err += chunk; });
    child.on('exit', (status) => resolve({ status, heading: out.split('\n')[0], error: err.trim().split('\n').pop() }));
  });
}

/** A client's events, read in the background, for the test to wait for. */
function follow(client) {
  const stream = client.events();
  const seen = [];
  const reading = (async () => { for await (const event of stream) seen.push(event); })();
  const pageEnded = async (flowId) => {
    await waitFor(() => seen.some((event) => event.name === 'INTERACTIVE_SIGN_IN_ENDED' && event.flowId === flowId), `the end of page ${flowId}`);
    return seen.find((event) => event.name === 'INTERACTIVE_SIGN_IN_ENDED' && event.flowId === flowId);
  };
  return { seen, pageEnded, started: waitFor(() => seen.length > 0, 'INITIAL_SESSION'), close: async () => { stream.close(); await reading; } };
}

test('signInInteractively has authd open the browser, and the page signs in', async () => {
  await withStack({}, async (stack) => {
    const email = 'node-browser@example.com';
    const password = 'node-browser-password';
    // authd's environment names the stand-in as the user's browser, as a desktop session's would.
    stack.env = { ...stack.env, BROWSER: `${BROWSER} %s --email ${email} --password-file ${passwordFile(stack, password)}` };
    await stack.startDaemon();
    await stack.signUp(email, password);
    const client = await authd.connect({ socketPath: stack.socket });
    const events = follow(client);
    await events.started;
    const pages = [];
    // A bound for a failing test only: a page nobody signs in to would keep it waiting ten minutes.
    const watchdog = new AbortController();
    const timer = setTimeout(() => watchdog.abort(new Error('nobody signed in on the page within 120 s')), 120000);
    const status = await client.signInInteractively({ method: 'password', onOpened: (page) => pages.push(page), signal: watchdog.signal });
    clearTimeout(timer);
    assert.deepEqual(pages.map((page) => page.browserOpened), [true]);
    assert.equal(status.state, 'signed_in');
    assert.equal(status.user.email, email);
    const ended = await events.pageEnded(pages[0].flowId);
    assert.equal(ended.reason, 'signed_in');
    assert.equal(ended.message, null);
    assert.ok(events.seen.some((event) => event.name === 'SIGNED_IN'));
    await events.close();
    assert.equal((await client.token()).value.split('.').length, 3);
    assert.ok(!stack.output().includes(password));
    client.close();
  });
});

test('the app opens the page itself, and the wait leaves the client free for other calls', async () => {
  await withStack({}, async (stack) => {
    await stack.startDaemon();
    const email = 'node-page@example.com';
    const password = 'node-page-password';
    await stack.signUp(email, password);
    const client = await authd.connect({ socketPath: stack.socket });
    const page = await client.beginInteractiveSignIn({ method: 'password', email, openBrowser: false });
    assert.equal(page.browserOpened, false);
    assert.equal(page.expiresIn, 600);
    assert.match(page.url, /^http:\/\/127\.0\.0\.1:\d+\//);
    for (const shown of [util.inspect(page), String(page), JSON.stringify(page), util.inspect({ page })]) {
      assert.ok(!shown.includes(page.url) && shown.includes(page.flowId), `the address shows in ${shown}`);
    }
    let settled = false;
    const waiting = client.waitForInteractiveSignIn(page.flowId).finally(() => { settled = true; });
    // The wait holds a connection of its own: the client's other calls are answered meanwhile.
    assert.equal((await client.status()).state, 'signed_out');
    assert.equal(settled, false);
    const browser = await browse(page.url, '--email', email, '--password-file', passwordFile(stack, password));
    if (browser.status !== 0) await client.cancelInteractiveSignIn(page.flowId);  // a failing test ends now, not in ten minutes
    assert.equal(browser.status, 0, `${browser.heading} ${browser.error}`);
    const status = await waiting;
    assert.equal(status.state, 'signed_in');
    assert.equal(status.user.email, email);
    // An ended page is remembered a while: its wait answers at once; the cancel finds nothing open.
    assert.equal((await client.waitForInteractiveSignIn(page.flowId)).state, 'signed_in');
    assert.equal(await client.cancelInteractiveSignIn(page.flowId), false);
    assert.ok(!stack.output().includes(page.url) && !stack.output().includes(password));
    client.close();
  });
});

test('an aborted signInInteractively closes its page', async () => {
  await withStack({}, async (stack) => {
    await stack.startDaemon();
    const client = await authd.connect({ socketPath: stack.socket });
    const other = await authd.connect({ socketPath: stack.socket });
    const events = follow(other);
    await events.started;
    const controller = new AbortController();
    let flowId = null;
    const signingIn = assert.rejects(client.signInInteractively({ openBrowser: false, signal: controller.signal,
      onOpened: (page) => { flowId = page.flowId; } }), (error) => error.name === 'AbortError');
    await waitFor(() => flowId !== null, 'the page to open');
    // The wait is on its way: a round trip on another connection gives it the time to be out.
    await other.status();
    controller.abort();
    await signingIn;
    assert.equal((await events.pageEnded(flowId)).reason, 'cancelled');
    await assert.rejects(other.waitForInteractiveSignIn(flowId), (error) => error instanceof authd.Rejected && error.reason === 'sign_in_cancelled');
    assert.equal(await other.cancelInteractiveSignIn(flowId), false);

    // Already aborted: no page is opened at all.
    await assert.rejects(client.signInInteractively({ openBrowser: false, onOpened: () => {}, signal: AbortSignal.abort() }),
      (error) => error.name === 'AbortError');
    // onOpened throwing closes the page too.
    let thrownFor = null;
    await assert.rejects(client.signInInteractively({ openBrowser: false, onOpened: (page) => { thrownFor = page.flowId; throw new Error('no window'); } }),
      /no window/);
    assert.equal((await events.pageEnded(thrownFor)).reason, 'cancelled');
    assert.equal(events.seen.filter((event) => event.name === 'INTERACTIVE_SIGN_IN_ENDED').length, 2);
    await events.close();
    client.close();
    other.close();
  });
});

test('the cancel call ends a wait, and bad parameters are refused', async () => {
  await withStack({}, async (stack) => {
    for (const name of ['DISPLAY', 'WAYLAND_DISPLAY', 'BROWSER']) delete stack.env[name];  // no browser authd could start
    await stack.startDaemon();
    const client = await authd.connect({ socketPath: stack.socket });
    const page = await client.beginInteractiveSignIn({ openBrowser: false });
    const waiting = assert.rejects(client.waitForInteractiveSignIn(page.flowId), (error) => error instanceof authd.Rejected
      && error.reason === 'sign_in_cancelled' && error.exitStatus === 1 && /cancelled/.test(error.message));
    // As an app's own Cancel button would (before the wait is out or after: it answers the same).
    assert.equal(await client.cancelInteractiveSignIn(page.flowId), true);
    await waiting;
    assert.equal(await client.cancelInteractiveSignIn(page.flowId), false);

    await assert.rejects(client.beginInteractiveSignIn({ method: 'magic-link', openBrowser: false }), (error) =>
      error instanceof authd.Rejected && error.reason === null
        && /'method' must be one of password, email_code, phone_code, sign_up, forgot_password, sso/.test(error.message));
    await assert.rejects(client.beginInteractiveSignIn({ aal: 'aal3', openBrowser: false }), /'aal' must be aal1 or aal2/);
    await assert.rejects(client.waitForInteractiveSignIn('no such page'), /'flow_id' must be the flow_id session.beginInteractiveSignIn answered/);
    await assert.rejects(client.waitForInteractiveSignIn('Pg4Xq2sL9aWmZt7c'), (error) =>
      error instanceof authd.Rejected && error.reason === 'sign_in_failed' && /no sign-in page 'Pg4Xq2sL9aWmZt7c' is open/.test(error.message));
    await assert.rejects(client.signInInteractively({ openBrowser: false }), TypeError);
    // Nothing to show the address with, and authd could not open it: closed at once.
    await assert.rejects(client.signInInteractively({ method: 'password' }), (error) =>
      error instanceof authd.Rejected && error.reason === 'sign_in_failed' && /pass onOpened/.test(error.message));
    client.close();
  });
});
