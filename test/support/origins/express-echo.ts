// An Express 5 origin that answers what it parsed (parsed-view.ts), configured as Express apps
// behind a proxy commonly are — each choice below is a documented, widespread setting, not a
// default, and says so:
//   - `query parser: extended` (qs: `a[b]=1` is an object; Express 4's default, opt-in in 5);
//   - `trust proxy: loopback` (the gateway is a proxy on loopback: req.host/protocol from X-Forwarded-*);
//   - express.json() and express.urlencoded({ extended: true }) (body-parser: inflates gzip,
//     deflate and br bodies, decodes the declared charset, refuses the ones it cannot with 415);
//   - multer().any() for multipart (busboy 1.x, not the @fastify/busboy fork the gateway uses);
//   - method-override, which Express does not do by default: the package's README wires the
//     X-HTTP-Method-Override (its default), X-HTTP-Method and X-Method-Override headers, a
//     `_method` query parameter and a `_method` body field, all only for POST.
// Runs in the test's process; close() ends its connections.
import { createServer } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import methodOverride from 'method-override';
import multer from 'multer';
import { listenOnLoopback } from '../loopback.ts';
import { flatten, type Pair, type ParsedFile, type ParsedView } from './parsed-view.ts';
import type { EchoOrigin } from './index.ts';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The README's body getter: `_method` of a parsed body. The package treats undefined as "no override". */
function bodyMethod(req: Request): string | undefined {
  const body: unknown = req.body;
  return isRecord(body) && typeof body._method === 'string' ? body._method : undefined;
}

/** method-override keeps the request line's method in req.originalMethod (its types augment a namespace this module does not see). */
function wireMethod(req: Request): string {
  const original: unknown = Reflect.get(req, 'originalMethod');
  return typeof original === 'string' ? original : req.method;
}

function headerPairs(raw: readonly string[]): Pair[] {
  const out: Pair[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

function uploadedFiles(req: Request): ParsedFile[] {
  const uploaded: unknown = req.files;
  if (!Array.isArray(uploaded)) return [];
  const out: ParsedFile[] = [];
  for (const file of uploaded) {
    if (isRecord(file) && typeof file.fieldname === 'string' && typeof file.originalname === 'string' && typeof file.size === 'number') {
      out.push({ field: file.fieldname, filename: file.originalname, size: file.size });
    }
  }
  return out;
}

function view(req: Request, refused: string | null): ParsedView {
  const body: unknown = req.body;
  const length = Number(req.headers['content-length'] ?? 0);
  return {
    framework: 'express',
    tag: req.get('x-shape') ?? '',
    method: req.method,
    wireMethod: wireMethod(req),
    path: req.path,
    baseUrl: `${req.protocol}://${req.host ?? ''}`,
    query: flatten(req.query, ''),
    // body-parser leaves req.body undefined when no parser took the body.
    body: isRecord(body) || Array.isArray(body) ? flatten(body, '') : [],
    // Express parses no cookies without the cookie-parser middleware.
    cookies: [],
    files: uploadedFiles(req),
    headers: headerPairs(req.rawHeaders),
    bodyBytes: Number.isFinite(length) ? length : 0,
    refused,
  };
}

export function createExpressEcho(): express.Express {
  const app = express();
  app.set('query parser', 'extended');
  app.set('trust proxy', 'loopback');
  app.use(methodOverride('X-HTTP-Method-Override'));
  app.use(methodOverride('X-HTTP-Method'));
  app.use(methodOverride('X-Method-Override'));
  app.use(methodOverride('_method'));
  app.use(express.json());
  app.use(express.urlencoded({ extended: true }));
  app.use(multer({ storage: multer.memoryStorage() }).any());
  // The package's types say the getter returns a string; at run time undefined means "no override".
  app.use(methodOverride(bodyMethod as (req: Request) => string));
  app.use((req: Request, res: Response) => {
    res.json(view(req, null));
  });
  // A body parser's refusal (415 charset, 400 syntax, multer's malformed part): the app never ran.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = isRecord(err) && typeof err.status === 'number' ? err.status : 500;
    const message = err instanceof Error ? err.message : String(err);
    res.status(status).json(view(req, `${status} ${message}`));
  });
  return app;
}

export async function startExpressEcho(): Promise<EchoOrigin> {
  const { url, close } = await listenOnLoopback(createServer(createExpressEcho()));
  return { framework: 'express', url, close };
}
