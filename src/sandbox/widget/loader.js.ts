/**
 * The sandbox's `/widget/v1/paywidget.js`: browser code, served byte for byte as this string (its sha384
 * is the published integrity, so the same for every sandbox). No template substitutions: it finds its
 * own host from `document.currentScript`.
 *
 * `PayWidget.mount(container, options)` adds an iframe (`/widget/v1/frame.html`) from the widget host,
 * hands it the widget token by postMessage (never in a URL), and turns the frame's `widget:*` messages
 * (accepted only from the widget origin, from its own frame, with `source: 'pay-widget'`) into callbacks.
 * The frame posts to the host page's window, so the page sees the same messages.
 */
export const LOADER_JS = String.raw`/* PayWidget sandbox loader, /widget/v1 */
(function () {
  'use strict';
  if (window.PayWidget) return;
  var script = document.currentScript || document.querySelector('script[src*="/widget/v1/paywidget.js"]');
  if (!script || !script.src) throw new Error('PayWidget: load /widget/v1/paywidget.js with a <script src> tag');
  var widgetOrigin = new URL(script.src).origin;
  var frameUrl = new URL('frame.html', script.src);

  function report(error) {
    setTimeout(function () { throw error; }); // a failing callback is the page's bug: surface it, keep going
  }

  function call(callback, argument) {
    if (typeof callback !== 'function') return;
    try { callback(argument); } catch (error) { report(error); }
  }

  function resolveContainer(container) {
    if (typeof container === 'string') {
      try { return document.querySelector(container); } catch (error) { return null; }
    }
    return container instanceof Element ? container : null;
  }

  function mount(container, options) {
    var element = resolveContainer(container);
    if (!element) return null;
    options = options || {};
    if (typeof options.widgetToken !== 'string' || options.widgetToken === '') {
      throw new TypeError('PayWidget.mount: options.widgetToken must be the widget token from your server');
    }
    var frameSrc = new URL(frameUrl.href);
    frameSrc.searchParams.set('origin', window.location.origin);
    var iframe = document.createElement('iframe');
    iframe.src = frameSrc.href;
    iframe.title = 'Payment';
    iframe.setAttribute('data-pay-widget', '');
    iframe.setAttribute('allow', 'payment; publickey-credentials-get; publickey-credentials-create');
    iframe.style.cssText = 'display:block;width:100%;min-width:280px;height:360px;border:0;overflow:hidden;color-scheme:normal';
    var mounted = true;

    function unmount() {
      if (!mounted) return;
      mounted = false;
      window.removeEventListener('message', onMessage);
      if (iframe.parentNode) iframe.parentNode.removeChild(iframe);
    }

    function finish(callback, argument) {
      try { call(callback, argument); } finally { unmount(); }
    }

    function onMessage(event) {
      if (!mounted || event.origin !== widgetOrigin || event.source !== iframe.contentWindow) return;
      var data = event.data;
      if (!data || data.source !== 'pay-widget' || typeof data.type !== 'string') return;
      switch (data.type) {
        case 'widget:ready':
          iframe.contentWindow.postMessage({
            source: 'pay-widget-host',
            type: 'widget:init',
            widgetToken: options.widgetToken,
            customerEmail: typeof options.customerEmail === 'string' ? options.customerEmail : undefined,
            returnUrl: typeof options.returnUrl === 'string' ? options.returnUrl : window.location.href,
          }, widgetOrigin);
          break;
        case 'widget:resize':
          if (typeof data.height === 'number' && data.height > 0 && data.height < 10000) iframe.style.height = Math.ceil(data.height) + 'px';
          break;
        case 'widget:success':
          call(options.onSuccess, { paymentId: data.paymentId });
          break;
        case 'widget:continue-to-shop':
          finish(options.onContinueToShop);
          break;
        case 'widget:failure':
          finish(options.onFailure, {
            message: String(data.message || 'The payment failed.'),
            code: data.code,
            needsReconciliation: data.needsReconciliation === true,
            paymentId: data.paymentId,
          });
          break;
        case 'widget:cancel':
          finish(options.onCancel);
          break;
      }
    }

    window.addEventListener('message', onMessage);
    element.appendChild(iframe);
    return { unmount: unmount };
  }

  window.PayWidget = Object.freeze({ version: '1', mount: mount });
})();
`;
