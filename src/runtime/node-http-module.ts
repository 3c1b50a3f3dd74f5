/**
 * `node:http` as a module for bundled dependencies that import it themselves (the AWS SDK's HTTP
 * handler does `await import('node:http')` for http:// endpoints): scripts/bundle.ts resolves their
 * imports of `http`/`node:http` here, so no ES import of it ends up in the bundle and Node's undici is
 * never loaded (src/runtime/node-http.ts says why). Named exports are the ones such code takes.
 */
import { http } from './node-http.ts';

export default http;
export const { Agent, ClientRequest, IncomingMessage, OutgoingMessage, Server, ServerResponse, STATUS_CODES, METHODS, createServer, get, globalAgent, request, validateHeaderName, validateHeaderValue, maxHeaderSize } = http;
