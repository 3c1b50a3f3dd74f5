/**
 * `node:http`, loaded with `require`. An ES import of it goes through Node's ES module facade, which
 * reads every export, and `node:http`'s lazy `WebSocket`, `MessageEvent` and `CloseEvent` getters then
 * load Node's bundled undici and http2: ~14 MiB of RSS in a process that uses neither
 * (nodejs/node#59686). Type-only imports of `node:http` are erased and stay as they are.
 */
import { createRequire } from 'node:module';
import type * as NodeHttp from 'node:http';

export const http: typeof NodeHttp = createRequire(import.meta.url)('node:http') as typeof NodeHttp;
