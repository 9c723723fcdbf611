import { createServer } from 'node:http';
import express from 'express';
import { payMiddleware } from 'paywidget-server/express';
import { describeAdapter } from './behaviour.js';
import { listen } from './listen.js';

function appWith(setup: (app: express.Express) => void) {
  const app = express();
  setup(app);
  app.use((_req, res) => {
    res.status(404).send('express fallthrough');
  });
  return listen(createServer(app), '/pay');
}

describeAdapter({
  name: 'Express 5',
  listens: true,
  mount: (pay) => appWith((app) => app.use('/pay', payMiddleware(pay))),
  mountBehindParser: {
    // express.json() first: the bytes are gone, and the error says where to mount the library.
    mount: (pay) => appWith((app) => {
      app.use(express.json());
      app.use('/pay', payMiddleware(pay));
    }),
    webhooksWork: false,
    fixNamed: /Express: a body parser such as express\.json\(\) read it first\. Mount payMiddleware before it/,
  },
  fallthrough: { status: 404, text: /express fallthrough/ },
});

describeAdapter({
  name: 'Express 5 with express.json({ verify }) keeping the raw body',
  listens: true,
  mount: (pay) => appWith((app) => {
    app.use(express.json({ verify: (req, _res, buf) => Object.assign(req, { rawBody: buf }) }));
    app.use('/pay', payMiddleware(pay));
  }),
  mountBehindParser: {
    mount: (pay) => appWith((app) => {
      app.use(express.raw({ type: '*/*' }));
      app.use('/pay', payMiddleware(pay));
    }),
    webhooksWork: true,
    fixNamed: /./,
  },
  fallthrough: { status: 404, text: /express fallthrough/ },
});

describeAdapter({
  name: 'Express with a parser that set req.body = {} without reading the stream (Express 4 style)',
  listens: true,
  mount: (pay) => appWith((app) => {
    app.use((req, _res, next) => {
      // body-parser 1.x does this for a content type it does not handle.
      (req as { body?: unknown }).body ??= {};
      next();
    });
    app.use('/pay', payMiddleware(pay));
  }),
  fallthrough: { status: 404, text: /express fallthrough/ },
});
