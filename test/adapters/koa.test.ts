import { createServer } from 'node:http';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { describe, expect, it } from 'vitest';
import { createPay } from 'paywidget-server';
import { payRouter } from 'paywidget-server/koa';
import { describeAdapter } from './behaviour.js';
import { listen } from './listen.js';
import { thrown } from '../helpers/pay-errors.js';
import { expectFormBodyRefused, payRecordingCheckouts } from './offline-pay.js';

function appWith(setup: (app: Koa) => void, mount = '/pay') {
  const app = new Koa();
  setup(app);
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = 'koa fallthrough';
  });
  return listen(createServer(app.callback()), mount);
}

describeAdapter({
  name: 'Koa 3 with @koa/router',
  listens: true,
  mount: (pay) => appWith((app) => app.use(payRouter(pay, { prefix: '/pay' }).routes())),
  mountBehindReader: (pay) => appWith((app) => {
    // A body logger: reads the stream, keeps no bytes.
    app.use(async (ctx, next) => {
      for await (const _chunk of ctx.req) { /* logged, say */ }
      return next();
    });
    app.use(payRouter(pay, { prefix: '/pay' }).routes());
  }),
  mountBehindParser: {
    // @koa/bodyparser keeps ctx.request.rawBody, so webhooks verify behind it.
    mount: (pay) => appWith((app) => {
      app.use(bodyParser());
      app.use(payRouter(pay, { prefix: '/pay' }).routes());
    }),
    webhooksWork: true,
    fixNamed: /./,
  },
  fallthrough: { status: 404, text: /koa fallthrough/ },
});

/** The shared suite with `parser` mounted before payRouter, as an app mounts its body parser. */
function describeBehindParser(name: string, parser: Koa.Middleware, webhooksWork: boolean, fixNamed: RegExp): void {
  describeAdapter({
    name,
    listens: true,
    mount: (pay) => appWith((app) => app.use(payRouter(pay, { prefix: '/pay' }).routes())),
    mountBehindParser: {
      mount: (pay) => appWith((app) => {
        app.use(parser);
        app.use(payRouter(pay, { prefix: '/pay' }).routes());
      }),
      webhooksWork,
      fixNamed,
    },
    fallthrough: { status: 404, text: /koa fallthrough/ },
  });
}

/** The request's text, read from the stream as a hand-rolled parser reads it. */
async function readText(ctx: Koa.Context): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

// koa-body 8 keeps the text as sent in ctx.request.rawBody.
describeBehindParser('Koa 3 behind koa-body with { includeUnparsed: true }, as the error advises', koaBody({ includeUnparsed: true }), true, /./);

// koa-body 6 and earlier kept it on the parsed object, under Symbol.for('unparsedBody').
describeBehindParser('Koa 3 behind a parser keeping the text where koa-body 6 did (Symbol.for(\'unparsedBody\') on the parsed object)', async (ctx, next) => {
  const text = await readText(ctx);
  const body = JSON.parse(text || '{}') as Record<PropertyKey, unknown>;
  body[Symbol.for('unparsedBody')] = text;
  (ctx.request as { body?: unknown }).body = body;
  await next();
}, true, /./);

describeBehindParser('Koa 3 behind koa-body without includeUnparsed', koaBody(), false, /Koa: .*koa-body does with \{ includeUnparsed: true \}/);

// Like many hand-rolled parsers: reads the stream, keeps only the object.
describeBehindParser('Koa 3 behind a parser that keeps no raw body', async (ctx, next) => {
  (ctx.request as { body?: unknown }).body = JSON.parse((await readText(ctx)) || '{}');
  await next();
}, false, /Koa: .*Mount payRouter\(pay\)\.routes\(\) before the body parser/);

describeAdapter({
  name: 'Koa 3 with the router nested in a parent router',
  listens: true,
  mount: (pay) => {
    const parent = new Router();
    parent.use('/shop', payRouter(pay, { prefix: '/pay' }).routes());
    return appWith((app) => app.use(parent.routes()), '/shop/pay');
  },
  fallthrough: { status: 404, text: /koa fallthrough/ },
});

describe('payRouter mounted without being called, as plain JavaScript allows', () => {
  it('fails every request naming the call to write', async () => {
    const errors: Error[] = [];
    const app = await appWith((koa) => {
      koa.silent = true;
      koa.on('error', (error: Error) => errors.push(error));
      koa.use(payRouter as never);
    });
    try {
      expect((await app.send({ method: 'GET', path: '/payments/pay_1' })).status).toBe(500);
      expect(errors[0]?.message).toContain('mounted without being called, so it got a request instead of a Pay instance. Call it:');
      expect(errors[0]?.message).toContain('app.use(payRouter(pay).routes()) in Koa');
    } finally {
      await app.close();
    }
  });
});

describe('payRouter: OPTIONS and allowedMethods()', () => {
  it("answers OPTIONS with its paths' own methods, not every method router.all() registers, and a wrong method 405 with the same Allow", async () => {
    const pay = createPay({ env: {} });
    const router = payRouter(pay, { prefix: '/pay' });
    const app = await appWith((koa) => koa.use(router.routes()).use(router.allowedMethods()));
    try {
      const options = await app.send({ method: 'OPTIONS', path: '/webhooks' });
      expect([options.status, options.headers.get('allow'), options.text]).toEqual([204, 'POST, OPTIONS', '']);
      expect((await app.send({ method: 'OPTIONS', path: '/payments/pay_1' })).headers.get('allow')).toBe('GET, HEAD, OPTIONS');
      const put = await app.send({ method: 'PUT', path: '/webhooks' });
      expect([put.status, put.headers.get('allow'), JSON.parse(put.text).error.code]).toEqual([405, 'POST', 'METHOD_NOT_ALLOWED']);
    } finally {
      await app.close();
    }
  });

  it("takes a prefix with a trailing slash as Express's app.use('/pay/') does", async () => {
    const pay = createPay({ env: {} });
    const app = await appWith((koa) => koa.use(payRouter(pay, { prefix: '/pay/' }).routes()));
    try {
      // The library answers (here: no webhook secret configured), not the app's 404.
      const reached = await app.send({ method: 'POST', path: '/webhooks', body: '{}' });
      expect([reached.status, JSON.parse(reached.text).error.code]).toEqual([500, 'CONFIG_MISSING']);
    } finally {
      await app.close();
    }
  });

  it('answers a path with a parameter and a trailing slash, which @koa/router lets match, as the path without it', async () => {
    const pay = createPay({ env: {} });
    const app = await appWith((koa) => koa.use(payRouter(pay, { prefix: '/pay' }).routes()));
    try {
      const answer = await app.send({ method: 'GET', path: '/payments/pay_unknown/' });
      expect([answer.status, JSON.parse(answer.text).error.code]).toEqual([404, 'PAYMENT_NOT_FOUND']);
    } finally {
      await app.close();
    }
  });

  it("refuses payRouter(pay, '/pay'), an unknown option or a prefix without its leading slash (CONFIG_INVALID naming the fix), where each answered every request 404", () => {
    const pay = createPay({ env: {} });
    const refusal = (run: () => unknown) => {
      const error = thrown(run, 'payRouter to refuse its options');
      expect(error.code).toBe('CONFIG_INVALID');
      return error;
    };
    expect(refusal(() => payRouter(pay, '/pay' as never)).message).toContain("payRouter takes its options as an object, got a string: write payRouter(pay, { prefix: \"/pay\" })");
    expect(refusal(() => payRouter(pay, null as never)).message).toContain("got null: write payRouter(pay, { prefix: '/pay' })");
    const unknown = refusal(() => payRouter(pay, { prefx: '/pay' } as never));
    expect(unknown.message).toContain("payRouter has no option prefx; its options are prefix, as in payRouter(pay, { prefix: '/pay' })");
    expect(unknown.details).toEqual({ options: ['prefx'] });
    const slashless = refusal(() => payRouter(pay, { prefix: 'pay' }));
    expect(slashless.message).toContain("payRouter's prefix must begin with '/', as @koa/router and koa-mount require: write { prefix: \"/pay\" }, not { prefix: \"pay\" }");
    expect(refusal(() => payRouter(pay, { prefix: 42 as never })).message).toContain("payRouter's prefix must be a path such as '/pay', got a number");
    // What worked before still does: no options, no prefix, '/'.
    for (const options of [undefined, {}, { prefix: '' }, { prefix: '/' }]) expect(() => payRouter(pay, options)).not.toThrow();
  });

  it("with '/' as its prefix, serves its routes at the root", async () => {
    const pay = createPay({ env: {} });
    const app = await appWith((koa) => koa.use(payRouter(pay, { prefix: '/' }).routes()), '');
    try {
      const reached = await app.send({ method: 'POST', path: '/webhooks', body: '{}' });
      expect([reached.status, JSON.parse(reached.text).error.code]).toEqual([500, 'CONFIG_MISSING']);
    } finally {
      await app.close();
    }
  });

  it('leaves OPTIONS to CORS middleware mounted before it', async () => {
    const pay = createPay({ env: {} });
    const app = await appWith((koa) => {
      koa.use(async (ctx, next) => {
        if (ctx.method !== 'OPTIONS') return next();
        ctx.status = 204;
        ctx.set('access-control-allow-methods', 'POST');
      });
      koa.use(payRouter(pay, { prefix: '/pay' }).routes());
    });
    try {
      const preflight = await app.send({ method: 'OPTIONS', path: '/webhooks' });
      expect([preflight.status, preflight.headers.get('access-control-allow-methods'), preflight.headers.get('allow')]).toEqual([204, 'POST', null]);
    } finally {
      await app.close();
    }
  });
});

describe('Koa: a form body behind @koa/bodyparser', () => {
  it('is refused on the JSON routes (415), as on Express behind express.urlencoded(): the same answer in every framework', async () => {
    const { pay, seen } = payRecordingCheckouts();
    const app = await appWith((koa) => {
      koa.use(bodyParser()); // parses forms too, by default
      koa.use(payRouter(pay, { prefix: '/pay' }).routes());
    });
    await expectFormBodyRefused(app, seen);
  });
});
