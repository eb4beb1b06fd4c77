// A live stack for a test: the development server and authd on a socket in a private directory,
// and authctl. Run under scripts/with-private-keyring (authd keeps sessions in a real Secret Service).
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = process.env.AUTHD_BIN_DIR || path.join(ROOT, '.build', 'debug');
const ANON_KEY = 'node-client-anon-key';

/** The path of a built binary; fails the test when it is missing. */
export function binary(name) {
  const file = path.join(BIN, name);
  fs.accessSync(file, fs.constants.X_OK);
  return file;
}

/** Waits until `predicate()` is true (polled every 50 ms), or throws after `timeoutMs`. */
export async function waitFor(predicate, what, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A private directory (0700) under the system's temporary directory. */
export function privateDirectory(prefix) {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(directory, 0o700);
  return directory;
}

/** A development server and (once started) an authd serving one profile of it. */
export class Stack {
  constructor({ lifetime = 3600 } = {}) {
    this.directory = privateDirectory('authd-node-');
    this.profile = 'node-' + randomUUID().slice(0, 8);
    this.socket = path.join(this.directory, 'run', 'authd.sock');
    this.env = { ...process.env, AUTHD_SOCKET: this.socket, XDG_CONFIG_HOME: path.join(this.directory, 'config') };
    this.processes = [];
    this.serverOut = path.join(this.directory, 'dev-server.out');
    this.spawn([binary('authd-dev-server'), '--port', '0', '--anon-key', ANON_KEY, '--access-token-lifetime', String(lifetime)],
      this.serverOut);
  }

  async ready() {
    await waitFor(() => fs.readFileSync(this.serverOut, 'utf8').includes('listening on'), 'the development server');
    this.url = fs.readFileSync(this.serverOut, 'utf8').split('listening on ')[1].split(/\s/)[0];
    return this;
  }

  spawn(argv, outFile) {
    const out = fs.openSync(outFile, 'a');
    const child = spawn(argv[0], argv.slice(1), { env: this.env, stdio: ['ignore', out, out] });
    fs.closeSync(out);
    this.processes.push(child);
    return child;
  }

  async startDaemon(...extra) {
    this.daemon = this.spawn([binary('authd'), '--profile', this.profile, '--url', this.url, '--anon-key', ANON_KEY,
      '--log-level', 'debug', ...extra], path.join(this.directory, 'authd.log'));
    await waitFor(() => this.authctl(['status']).status !== 3, 'authd to listen');
  }

  async stopDaemon() {
    const exited = new Promise((resolve) => this.daemon.once('exit', resolve));
    this.daemon.kill('SIGTERM');
    await exited;
  }

  authctl(args, input) {
    return spawnSync(binary('authctl'), args, { env: this.env, input, encoding: 'utf8', timeout: 60000 });
  }

  /** Creates the account on the development server directly; authd stays signed out. */
  async signUp(email, password) {
    const response = await fetch(this.url + '/auth/v1/signup', {
      method: 'POST', headers: { 'Content-Type': 'application/json', apikey: ANON_KEY },
      body: JSON.stringify({ email, password }),
    });
    if (!response.ok) throw new Error(`sign-up failed: ${response.status}`);
  }

  async signUpAndIn(email, password) {
    await this.signUp(email, password);
    const login = this.authctl(['login', '--email', email, '--password-stdin'], password + '\n');
    if (login.status !== 0) throw new Error(`authctl login failed: ${login.stderr}`);
  }

  /** Everything authd and the development server printed. */
  output() {
    return fs.readdirSync(this.directory).filter((name) => name.endsWith('.log') || name.endsWith('.out'))
      .map((name) => fs.readFileSync(path.join(this.directory, name), 'utf8')).join('\n');
  }

  async close() {
    for (const child of this.processes.reverse()) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    }
    fs.rmSync(this.directory, { recursive: true, force: true });
  }
}

/** Runs `body` with a ready stack, closed afterwards. */
export async function withStack(options, body) {
  const stack = await new Stack(options).ready();
  try {
    await body(stack);
  } finally {
    await stack.close();
  }
}
