import { escapeHtml } from '../shared/http.js';

/** The frame's page: no inline script; the payment API URL (and the poll budget, when set) vary per sandbox. */
export function framePage(apiUrl: string, pollBudgetMs?: number): string {
  const budget = pollBudgetMs === undefined ? '' : ` data-poll-budget-ms="${escapeHtml(String(pollBudgetMs))}"`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payment</title>
<link rel="stylesheet" href="frame.css">
</head>
<body data-api-url="${escapeHtml(apiUrl)}"${budget}>
<main id="app"></main>
<script src="frame-core.js"></script>
<script src="frame.js"></script>
</body>
</html>
`;
}

/** What the frame may load and call: its own scripts and styles, the payment API, the API's 3DS page. */
export function frameCsp(apiUrl: string): string {
  const api = new URL(apiUrl).origin;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${api}`,
    `frame-src ${api}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

export const FRAME_CSS = `:root { color-scheme: light; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1a1a2e; }
html, body { margin: 0; background: transparent; }
#app { padding: 16px; border: 1px solid #d8dbe3; border-radius: 10px; background: #fff; }
h2 { margin: 0 0 8px; font-size: 20px; }
h3 { margin: 12px 0 6px; font-size: 14px; text-transform: uppercase; letter-spacing: .04em; color: #555; }
p { margin: 0 0 10px; }
.order { font-weight: 600; }
.muted { color: #666; font-size: 13px; }
label { display: block; margin-bottom: 8px; }
label span { display: block; font-size: 13px; color: #444; margin-bottom: 2px; }
input { box-sizing: border-box; width: 100%; padding: 8px 10px; font: inherit; border: 1px solid #b9bdc9; border-radius: 6px; }
button { font: inherit; cursor: pointer; }
.primary, .secondary { width: 100%; padding: 10px; border-radius: 6px; margin-top: 6px; }
.primary { background: #3b3bd6; color: #fff; border: 0; font-weight: 600; }
.secondary { background: #fff; color: #3b3bd6; border: 1px solid #3b3bd6; }
.link { background: none; border: 0; color: #3b3bd6; padding: 4px 6px; text-decoration: underline; font-size: 13px; }
.cancel { display: block; margin: 10px auto 0; }
.saved ul { list-style: none; margin: 0; padding: 0; }
.saved-card { margin-bottom: 6px; }
.error { color: #b00020; font-size: 14px; }
.success h2 { color: #137333; }
.failure h2 { color: #b00020; }
.busy { text-align: center; padding: 16px 0; }
.spinner { width: 28px; height: 28px; margin: 0 auto 10px; border: 3px solid #d8dbe3; border-top-color: #3b3bd6; border-radius: 50%; animation: spin 1s linear infinite; }
@keyframes spin { to { transform: rotate(360deg); } }
.challenge-frame { width: 100%; height: 260px; border: 1px solid #d8dbe3; border-radius: 6px; }
`;
