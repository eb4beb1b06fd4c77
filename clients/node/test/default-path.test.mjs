// `new Client()` with no arguments finds authd where the other clients do: $AUTHD_SOCKET, else
// $XDG_RUNTIME_DIR/authd/authd.sock. It used to fail with "cannot inspect undefined".
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import * as authd from '../index.mjs';
import { fakeDaemon, hello } from './fake-daemon.mjs';
import { privateDirectory } from './stack.mjs';

/** Runs `body` with the variables in `changes` set (undefined: unset), then puts them back. */
async function withEnvironment(changes, body) {
  const saved = Object.fromEntries(Object.keys(changes).map((name) => [name, process.env[name]]));
  const apply = (values) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(changes);
  try {
    return await body();
  } finally {
    apply(saved);
  }
}

test('new Client() asks about the default profile at $AUTHD_SOCKET', async () => {
  const daemon = await fakeDaemon((request) => (request.method === 'hello' ? hello() : { state: 'signed_out', profile: 'default' }));
  try {
    await withEnvironment({ AUTHD_SOCKET: daemon.socketPath }, async () => {
      const client = new authd.Client();
      assert.equal(client.path, daemon.socketPath);
      assert.equal(client.profile, null);
      assert.deepEqual(await client.status(), { state: 'signed_out', profile: 'default' });
      const [greeting, status] = daemon.requests;
      assert.equal(greeting.params.client, path.basename(process.argv[1]));
      assert.equal(status.method, 'session.status');
      assert.deepEqual(status.params, {});
      client.close();
    });
  } finally {
    await daemon.close();
  }
});

test('without $AUTHD_SOCKET, new Client() uses $XDG_RUNTIME_DIR/authd/authd.sock and says authd is not running there', async () => {
  const runtime = privateDirectory('authd-node-runtime-');
  fs.mkdirSync(path.join(runtime, 'authd'), { mode: 0o700 });
  try {
    await withEnvironment({ AUTHD_SOCKET: undefined, XDG_RUNTIME_DIR: runtime }, async () => {
      const client = new authd.Client();
      assert.equal(client.path, path.join(runtime, 'authd', 'authd.sock'));
      assert.equal(client.path, authd.socketPath());
      await assert.rejects(client.token(), (error) =>
        error instanceof authd.DaemonUnavailable && error.message.includes(`nothing listens on ${client.path}`));
    });
  } finally {
    fs.rmSync(runtime, { recursive: true, force: true });
  }
});
