// The ES module face of index.js: the same objects, so `instanceof` agrees across both.
import client from './index.js';

export const {
  PROTOCOL_VERSION, connect, socketPath, Client, Token, AuthEvent, EventStream, SignInPage,
  AuthdError, NotSignedIn, Offline, AccessDenied, DaemonUnavailable, KeyringUnavailable, UnknownProfile,
  TimedOut, Rejected, ProtocolError, ForeignDaemon,
} = client;
export default client;
