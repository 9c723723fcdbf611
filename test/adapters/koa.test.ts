import { createServer } from 'node:http';
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import { payRouter } from 'paywidget-server/koa';
import { describeAdapter } from './behaviour.js';
import { listen } from './listen.js';

function appWith(setup: (app: Koa) => void) {
  const app = new Koa();
  setup(app);
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = 'koa fallthrough';
  });
  return listen(createServer(app.callback()), '/pay');
}

describeAdapter({
  name: 'Koa 3 with @koa/router',
  listens: true,
  mount: (pay) => appWith((app) => app.use(payRouter(pay, { prefix: '/pay' }).routes())),
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

describeAdapter({
  name: 'Koa 3 behind a parser that keeps no raw body',
  listens: true,
  mount: (pay) => appWith((app) => app.use(payRouter(pay, { prefix: '/pay' }).routes())),
  mountBehindParser: {
    mount: (pay) => appWith((app) => {
      // Like many hand-rolled parsers: reads the stream, keeps only the object.
      app.use(async (ctx, next) => {
        const chunks: Buffer[] = [];
        for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
        (ctx.request as { body?: unknown }).body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        await next();
      });
      app.use(payRouter(pay, { prefix: '/pay' }).routes());
    }),
    webhooksWork: false,
    fixNamed: /Koa: mount the paywidget-server router before the body parser/,
  },
  fallthrough: { status: 404, text: /koa fallthrough/ },
});
