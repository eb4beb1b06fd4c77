// A stand-in authd on a real Unix socket, answering from scripted handlers: for what a live authd
// cannot be made to send (a newer protocol, malformed lines, the golden fixtures' exact answers).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { privateDirectory } from './stack.mjs';

const FIXTURES = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../Tests/AuthProtocolTests/Fixtures');

/** A golden fixture shared with the Swift and Python tests, parsed. */
export function fixture(name) {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name + '.json'), 'utf8'));
}

/** The hello answer of a daemon speaking `protocolVersion`. */
export function hello(protocolVersion = '1.0', extra = {}) {
  return { protocol_version: protocolVersion, daemon_version: '9', capabilities: ['events'], profiles: ['default', 'work'],
    default_profile: 'default', ...extra };
}

/**
 * Serves `answer(request, write)` for every request line: it returns a result (sent with the
 * request's id), or writes raw lines itself and returns undefined. `requests` records every request.
 */
export async function fakeDaemon(answer) {
  const directory = privateDirectory('authd-node-fake-');
  const socketPath = path.join(directory, 'authd.sock');
  const requests = [];
  const connections = new Set();
  const server = net.createServer((connection) => {
    connections.add(connection);
    connection.on('close', () => connections.delete(connection));
    connection.on('error', () => {});
    let buffered = '';
    connection.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      let newline;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const request = JSON.parse(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        requests.push(request);
        const write = (line) => connection.write(typeof line === 'string' ? line : JSON.stringify(line) + '\n');
        const result = answer(request, write);
        if (result !== undefined) write({ jsonrpc: '2.0', id: request.id, result });
      }
    });
  });
  await new Promise((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath, requests,
    /** Bytes written and not yet taken by the kernel: what a client that stopped reading leaves. */
    pendingOutput() { return [...connections].reduce((sum, connection) => sum + connection.writableLength, 0); },
    async close() {
      for (const connection of connections) connection.destroy();
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
