/**
 * `node:http`, loaded with `require`. An ES import of it goes through Node's ES module facade, which
 * reads every export, and `node:http`'s lazy `WebSocket`, `MessageEvent` and `CloseEvent` getters then
 * load Node's bundled undici and http2 (nodejs/node#59686), which nothing here uses. They cost 10 MiB
 * of RSS in a bare process (58 against 48 MiB with `node:https` alone) and 4 MiB in the controller at
 * its first write (89 against 85 MiB, converging 1,000). Type-only imports of `node:http` are erased.
 */
import { createRequire } from 'node:module';
import type * as NodeHttp from 'node:http';

export const http: typeof NodeHttp = createRequire(import.meta.url)('node:http') as typeof NodeHttp;
