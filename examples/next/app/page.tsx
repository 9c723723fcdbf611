export default function Home() {
  return (
    <main>
      <h1>Merchant backend (Next.js App Router)</h1>
      <p>paywidget-server answers under <code>/api/pay</code>: <code>POST /api/pay/widget-token</code>, <code>POST /api/pay/webhooks</code>.</p>
    </main>
  );
}
